package dev.itersnap.dialect.postgres;

import dev.itersnap.conformance.TestDatabase;

import javax.sql.DataSource;

/** A fresh database per scenario on the test server ({@link PostgresServer}); dropped when the scenario ends. */
public final class PostgresTestDatabase implements TestDatabase {
    @Override
    public DataSource newDatabase(String scenario) {
        return PostgresServer.get().newDatabase();
    }

    @Override
    public DataSource copyOf(DataSource database) {
        return PostgresServer.get().copy(database);
    }

    @Override
    public void discard(DataSource database) {
        PostgresServer.get().drop(database);
    }

    @Override
    public String sqlType(ColumnType type) {
        return switch (type) {
            case INTEGER -> "integer";
            case BIGINT -> "bigint";
            case DECIMAL -> "numeric(12, 3)";
            case VARCHAR -> "varchar(40)";
            case DATE -> "date";
            case TIMESTAMP -> "timestamp";
        };
    }
}
