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
 * {@code spark.sql.legacy.parameterSubstitution.constantsOnly=true} (where even that does not bind, an open-source
 * Spark Connect server with Delta 4.x, the values are inlined as literals); afterwards the session's own settings are
 * put back. A Spark Connect session (serverless compute, standard clusters) works the same way. Statements of one session are serialized, except those of a connection marked {@link #OUTSIDE_WINDOW} (the
 * lease's), which run on the session as it is. Thread-safe.
 */
public final class SparkDataSource implements DataSource {
    /**
     * The client-info property ({@code Connection.setClientInfo(OUTSIDE_WINDOW, "true")}) that makes a connection's
     * statements run outside the window: without the session's statement lock and without changing a setting, with
     * their values inlined as literals. Only for statements that name their tables with the catalog and depend on no
     * session setting: the lease's, whose heartbeat must not wait for a long statement of a run
     * (docs/decisions/0008-lease-statements-outside-the-window.md). A client-info property so that it reaches the
     * connection through wrappers of the data source.
     */
    public static final String OUTSIDE_WINDOW = "itersnap.outsideWindow";

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

    /**
     * {@code dataSource} (a SparkDataSource or a wrapper of one) whose connections run their statements outside the
     * window ({@link #OUTSIDE_WINDOW}).
     */
    static DataSource outsideWindow(DataSource dataSource) {
        return (DataSource) java.lang.reflect.Proxy.newProxyInstance(SparkDataSource.class.getClassLoader(),
                new Class<?>[] {DataSource.class}, (proxy, method, args) -> {
                    switch (method.getName()) {
                        case "getConnection" -> {
                            Connection c = args == null ? dataSource.getConnection()
                                    : dataSource.getConnection((String) args[0], (String) args[1]);
                            try {
                                c.setClientInfo(OUTSIDE_WINDOW, "true");
                            } catch (SQLException | RuntimeException e) {
                                c.close();
                                throw e;
                            }
                            return c;
                        }
                        case "hashCode" -> {
                            return System.identityHashCode(proxy);
                        }
                        case "equals" -> {
                            return proxy == args[0];
                        }
                        case "toString" -> {
                            return "outsideWindow(" + dataSource + ")";
                        }
                        default -> {
                            try {
                                return method.invoke(dataSource, args);
                            } catch (java.lang.reflect.InvocationTargetException e) {
                                throw e.getCause();
                            }
                        }
                    }
                });
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
