package dev.itersnap.core;

import javax.sql.DataSource;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.Objects;
import java.util.Properties;
import java.util.logging.Logger;

/**
 * A {@link DataSource} over a JDBC URL, for drivers that ship none (DuckDB's): every {@link #getConnection()} is a new
 * connection from {@link DriverManager}, with the properties given. No pool: a run takes two or three connections, and
 * an application that runs often should hand itersnap its own pool instead. Immutable and thread-safe.
 *
 * <pre>{@code
 * DataSource ds = DriverDataSource.of("jdbc:duckdb:/data/warehouse.duckdb");
 * IterativeSnapshot.builder().dataSource(ds)...
 * }</pre>
 */
public final class DriverDataSource implements DataSource {
    private final String url;
    private final Properties properties;

    private DriverDataSource(String url, Properties properties) {
        this.url = Objects.requireNonNull(url, "url");
        this.properties = properties;
    }

    /** Connections to {@code url} without properties. */
    public static DriverDataSource of(String url) {
        return new DriverDataSource(url, new Properties());
    }

    /** Connections to {@code url} with a copy of {@code properties} (user, password, driver settings). */
    public static DriverDataSource of(String url, Properties properties) {
        Properties copy = new Properties();
        copy.putAll(properties);
        return new DriverDataSource(url, copy);
    }

    /** The JDBC URL. */
    public String url() {
        return url;
    }

    @Override
    public Connection getConnection() throws SQLException {
        return DriverManager.getConnection(url, properties);
    }

    @Override
    public Connection getConnection(String user, String password) throws SQLException {
        Properties p = new Properties();
        p.putAll(properties);
        if (user != null) {
            p.setProperty("user", user);
        }
        if (password != null) {
            p.setProperty("password", password);
        }
        return DriverManager.getConnection(url, p);
    }

    @Override
    public PrintWriter getLogWriter() {
        return DriverManager.getLogWriter();
    }

    @Override
    public void setLogWriter(PrintWriter out) {
        throw new UnsupportedOperationException("DriverDataSource is immutable: use DriverManager.setLogWriter");
    }

    @Override
    public void setLoginTimeout(int seconds) {
        throw new UnsupportedOperationException("DriverDataSource is immutable: use DriverManager.setLoginTimeout");
    }

    @Override
    public int getLoginTimeout() {
        return DriverManager.getLoginTimeout();
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
        throw new SQLFeatureNotSupportedException("no parent logger");
    }

    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
        if (iface.isInstance(this)) {
            return iface.cast(this);
        }
        throw new SQLException("DriverDataSource is not a wrapper for " + iface.getName());
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) {
        return iface.isInstance(this);
    }

    /** The URL with secrets masked ({@link Secrets#mask}); never the properties, which may hold a password. */
    @Override
    public String toString() {
        return "DriverDataSource[" + Secrets.mask(url) + "]";
    }
}
