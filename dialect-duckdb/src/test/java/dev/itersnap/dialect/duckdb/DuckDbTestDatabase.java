package dev.itersnap.dialect.duckdb;

import dev.itersnap.conformance.TestDatabase;
import dev.itersnap.core.DriverDataSource;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A fresh in-memory DuckDB database per scenario: {@code jdbc:duckdb:memory:NAME}, which every connection of the
 * process shares ({@code jdbc:duckdb:} alone gives each connection a database of its own). DuckDB drops an in-memory
 * database when its last connection closes, so one connection stays open until {@link #discard}.
 */
public final class DuckDbTestDatabase implements TestDatabase {
    private static final AtomicLong DATABASES = new AtomicLong();
    private static final Map<String, Connection> KEEPERS = new ConcurrentHashMap<>();

    @Override
    public DataSource newDatabase(String scenario) {
        String url = "jdbc:duckdb:memory:" + scenario + "_" + DATABASES.incrementAndGet();
        try {
            KEEPERS.put(url, DriverManager.getConnection(url));
        } catch (SQLException e) {
            throw new IllegalStateException("cannot open " + url, e);
        }
        return DriverDataSource.of(url);
    }

    @Override
    public void discard(DataSource database) {
        Connection keeper = KEEPERS.remove(((DriverDataSource) database).url());
        if (keeper != null) {
            try {
                keeper.close();
            } catch (SQLException ignored) {
                // already closed: nothing left to free
            }
        }
    }

    /** DuckDB refuses to alter a table with an index ("entries that depend on it"), and the cases widen columns. */
    @Override
    public boolean indexes() {
        return false;
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
