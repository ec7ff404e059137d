package dev.itersnap.dialect.databricks;

import org.apache.spark.sql.SparkSession;

import javax.sql.DataSource;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.Objects;
import java.util.logging.Logger;

/**
 * A {@link DataSource} that runs itersnap's SQL on a SparkSession, for code running inside Spark (a Databricks job, a
 * local Spark with Delta Lake): {@code IterativeSnapshot.builder().dataSource(SparkDataSource.of(spark))
 * .dialect("databricks").build()}.
 *
 * <p>Its connections are thin JDBC facades over {@code SparkSession.sql}: values are bound as named parameters, a
 * query's rows are read into memory (itersnap's queries return few rows), UPDATE, DELETE and MERGE report
 * {@code num_affected_rows}, failures are {@link SQLException}s whose message starts with Spark's error condition
 * (a Delta write conflict is a {@link java.sql.SQLTransactionRollbackException}). There are no transactions: each
 * statement is its own Delta commit, and {@code commit}/{@code rollback} do nothing.
 *
 * <p>It works on its own session, {@code spark.newSession()}: the same Spark application, catalog and tables, with
 * its own SQL settings, so the settings it needs do not change the caller's session. It copies the caller's session
 * time zone, current catalog and current schema when it is made; unqualified table names resolve in that schema, and
 * {@code Connection.setSchema} changes it for every connection of this data source. Its own settings:
 * {@code spark.sql.legacy.parameterSubstitution.constantsOnly=true} (Delta 4.4's parser drops parameter markers
 * otherwise, delta-io/delta#7640) and {@code spark.sql.datetime.java8API.enabled=true}. Thread-safe.
 */
public final class SparkDataSource implements DataSource {
    private final SparkSession session;

    private SparkDataSource(SparkSession session) {
        this.session = session;
    }

    /** A data source over a new session of {@code spark}'s application (see the class comment). */
    public static SparkDataSource of(SparkSession spark) {
        Objects.requireNonNull(spark, "spark");
        SparkSession own = spark.newSession();
        own.conf().set("spark.sql.session.timeZone", spark.conf().get("spark.sql.session.timeZone"));
        own.conf().set("spark.sql.legacy.parameterSubstitution.constantsOnly", "true");
        own.conf().set("spark.sql.datetime.java8API.enabled", "true");
        own.catalog().setCurrentCatalog(spark.catalog().currentCatalog());
        own.catalog().setCurrentDatabase(spark.catalog().currentDatabase());
        return new SparkDataSource(own);
    }

    @Override
    public Connection getConnection() {
        return SparkConnection.open(session);
    }

    @Override
    public Connection getConnection(String username, String password) {
        return getConnection();
    }

    @Override
    public PrintWriter getLogWriter() {
        return null;
    }

    @Override
    public void setLogWriter(PrintWriter out) {
        // logs go through Spark's own logging
    }

    @Override
    public void setLoginTimeout(int seconds) {
        // no login
    }

    @Override
    public int getLoginTimeout() {
        return 0;
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
        throw new SQLFeatureNotSupportedException("no java.util.logging");
    }

    @Override
    public <T> T unwrap(Class<T> type) throws SQLException {
        if (type == SparkSession.class) {
            return type.cast(session);
        }
        throw new SQLException("not a wrapper for " + type.getName());
    }

    @Override
    public boolean isWrapperFor(Class<?> type) {
        return type == SparkSession.class;
    }

    @Override
    public String toString() {
        return "SparkDataSource[" + session.catalog().currentCatalog() + "." + session.catalog().currentDatabase()
                + "]";
    }
}
