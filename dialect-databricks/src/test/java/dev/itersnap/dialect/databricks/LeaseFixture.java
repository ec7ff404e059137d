package dev.itersnap.dialect.databricks;

import dev.itersnap.core.ModelSettings;
import dev.itersnap.spi.LeaseLock;
import dev.itersnap.dialect.h2.H2Dialect;
import dev.itersnap.spi.ResolvedModel;
import dev.itersnap.spi.SourceColumn;
import org.h2.jdbcx.JdbcDataSource;

import javax.sql.DataSource;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;
import java.util.logging.Logger;

/** Models, lease statements and databases for the lease tests. */
final class LeaseFixture {
    private static final AtomicLong DATABASES = new AtomicLong();

    /** H2's epoch-millisecond conversions. */
    static final LeaseLock.Clock H2 = new LeaseLock.Clock(
            e -> "DATEADD(MILLISECOND, CAST(" + e + " AS BIGINT), TIMESTAMP '1970-01-01 00:00:00')",
            e -> "DATEDIFF(MILLISECOND, TIMESTAMP '1970-01-01 00:00:00', " + e + ")");

    /** Spark SQL's quoting (what DatabricksDialect.quote does). */
    static final UnaryOperator<String> BACKTICKS = id -> "`" + id.replace("`", "``") + "`";

    private LeaseFixture() {
    }

    /** A model as the engine resolves it; the lease reads only its name, metadata schema and fold. */
    static ResolvedModel model(String name, String metadataSchema, UnaryOperator<String> fold) {
        ModelSettings s = ModelSettings.builder(name).target("snap." + name).source("SELECT * FROM raw")
                .uniqueKey("id").updatedAt("updated_at").sequenceBy("file_date").metadataSchema(metadataSchema)
                .build();
        List<SourceColumn> columns = List.of(new SourceColumn(fold.apply("id"), Types.INTEGER, "INT", 10, 0),
                new SourceColumn(fold.apply("updated_at"), Types.TIMESTAMP, "TIMESTAMP", 26, 6),
                new SourceColumn(fold.apply("file_date"), Types.DATE, "DATE", 10, 0));
        return ResolvedModel.builder(s, fold).sourceColumns(columns).keys(List.of(fold.apply("id")))
                .updatedAt(fold.apply("updated_at")).sequenceBy(fold.apply("file_date")).build();
    }

    /** The lease statements of a model on H2. */
    static LeaseLock.Statements h2Lease(String model) {
        return new LeaseLock.Statements(new H2Dialect(), model(model, "itersnap_metadata",
                x -> x.toUpperCase(Locale.ROOT)), H2);
    }

    /** The lease statements of a model on Delta, as the Databricks dialect makes them. */
    static LeaseLock.Statements deltaLease(String model, String metadataSchema) {
        return new LeaseLock.Statements(new DatabricksDialect(), model(model, metadataSchema,
                x -> x.toLowerCase(Locale.ROOT)), DatabricksDialect.CLOCK);
    }

    /** A fresh in-memory H2 database. */
    static JdbcDataSource h2() {
        JdbcDataSource ds = new JdbcDataSource();
        ds.setURL("jdbc:h2:mem:lease_" + DATABASES.incrementAndGet() + ";DB_CLOSE_DELAY=-1");
        return ds;
    }

    /**
     * A data source whose network can be cut: {@link #down()} closes every connection it handed out and refuses new
     * ones until {@link #up()}, like a client cut off from the database (which keeps running).
     */
    static final class Switchable implements DataSource {
        private final DataSource target;
        private final List<Connection> handedOut = new ArrayList<>();
        private boolean down;

        Switchable(DataSource target) {
            this.target = target;
        }

        synchronized void down() throws SQLException {
            down = true;
            for (Connection c : handedOut) {
                c.close();
            }
            handedOut.clear();
        }

        synchronized void up() {
            down = false;
        }

        @Override
        public synchronized Connection getConnection() throws SQLException {
            if (down) {
                throw new SQLException("network is down (test)", "08001");
            }
            Connection c = target.getConnection();
            handedOut.add(c);
            return c;
        }

        @Override
        public Connection getConnection(String user, String password) throws SQLException {
            return getConnection();
        }

        @Override
        public PrintWriter getLogWriter() {
            return null;
        }

        @Override
        public void setLogWriter(PrintWriter out) {
        }

        @Override
        public void setLoginTimeout(int seconds) {
        }

        @Override
        public int getLoginTimeout() {
            return 0;
        }

        @Override
        public Logger getParentLogger() throws SQLFeatureNotSupportedException {
            throw new SQLFeatureNotSupportedException();
        }

        @Override
        public <T> T unwrap(Class<T> iface) throws SQLException {
            throw new SQLException("not a wrapper");
        }

        @Override
        public boolean isWrapperFor(Class<?> iface) {
            return false;
        }
    }
}
