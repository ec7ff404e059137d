package dev.itersnap.dialect.h2;

import dev.itersnap.conformance.TestDatabase;
import org.h2.jdbcx.JdbcDataSource;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicLong;

/** A fresh in-memory H2 database per scenario, default settings (unquoted identifiers fold to upper case). */
public final class H2TestDatabase implements TestDatabase {
    private static final AtomicLong DATABASES = new AtomicLong();

    @Override
    public DataSource newDatabase(String scenario) {
        JdbcDataSource ds = new JdbcDataSource();
        ds.setURL("jdbc:h2:mem:" + scenario + "_" + DATABASES.incrementAndGet() + ";DB_CLOSE_DELAY=-1");
        return ds;
    }

    @Override
    public void discard(DataSource database) {
        try (Connection c = database.getConnection(); Statement s = c.createStatement()) {
            s.execute("SHUTDOWN");
        } catch (SQLException ignored) {
            // already shut down: nothing left to free
        }
    }

    @Override
    public String sqlType(ColumnType type) {
        return switch (type) {
            case INTEGER -> "INTEGER";
            case BIGINT -> "BIGINT";
            case DECIMAL -> "DECIMAL(12, 3)";
            case VARCHAR -> "VARCHAR(40)";
            case DATE -> "DATE";
            case TIMESTAMP -> "TIMESTAMP";
        };
    }
}
