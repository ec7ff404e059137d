package dev.itersnap.dialect.databricks;

import org.apache.spark.sql.SparkSession;

import javax.sql.DataSource;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
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
 * <p>It works in the caller's session itself, so temporary views the job registered can be the source. Its
 * current catalog and schema are the caller's when it is made ({@code Connection.setSchema} and {@code setCatalog}
 * change them for every connection of this data source, not for the session). Each statement runs in a window
 * ({@link SparkScope}) with those, the session time zone UTC and, only where the runtime needs it (open-source Delta
 * 4.x, whose parser drops parameter markers, delta-io/delta#7640),
 * {@code spark.sql.legacy.parameterSubstitution.constantsOnly=true}; afterwards the session's own settings are put
 * back. Statements of one session are serialized. Thread-safe.
 */
public final class SparkDataSource implements DataSource {
    private final SparkScope scope;

    private SparkDataSource(SparkScope scope) {
        this.scope = scope;
    }

    /** A data source over the caller's session {@code spark} (see the class comment). */
    public static SparkDataSource of(SparkSession spark) {
        return new SparkDataSource(new SparkScope(spark));
    }

    @Override
    public Connection getConnection() {
        return SparkConnection.open(scope);
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
            return type.cast(scope.session());
        }
        throw new SQLException("not a wrapper for " + type.getName());
    }

    @Override
    public boolean isWrapperFor(Class<?> type) {
        return type == SparkSession.class;
    }

    @Override
    public String toString() {
        return "SparkDataSource[" + scope.catalog() + "." + scope.schema() + "]";
    }
}
