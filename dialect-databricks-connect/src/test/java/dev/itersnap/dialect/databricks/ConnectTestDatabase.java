package dev.itersnap.dialect.databricks;

import dev.itersnap.conformance.TestDatabase;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * A "fresh database" per scenario, as {@link SparkTestDatabase} makes them (its own schema {@code dN}, the suite's
 * other schemas renamed {@code dN_<name>}), but reached through a Spark Connect session of its own
 * ({@link ConnectTestSession}): a {@link SparkDataSource} over the Connect client, as a job on serverless compute or a
 * standard cluster would make it.
 */
final class ConnectTestDatabase implements TestDatabase {
    private static final java.util.concurrent.atomic.AtomicInteger DATABASES = new java.util.concurrent.atomic.AtomicInteger();
    private final SparkTestDatabase spark = new SparkTestDatabase();

    @Override
    public DataSource newDatabase(String scenario) {
        String db = "c" + DATABASES.incrementAndGet();
        org.apache.spark.sql.SparkSession session = ConnectTestSession.newSession();
        try (Connection c = SparkDataSource.of(session).getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE SCHEMA " + db);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
        return SparkTestDatabase.on(session, db);
    }

    @Override
    public String sqlType(ColumnType type) {
        return spark.sqlType(type);
    }

    @Override
    public boolean indexes() {
        return spark.indexes();
    }

    @Override
    public String widenColumn(String table, String column, ColumnType type) {
        return spark.widenColumn(table, column, type);
    }

    @Override
    public String type(String ansiType) {
        return spark.type(ansiType);
    }
}
