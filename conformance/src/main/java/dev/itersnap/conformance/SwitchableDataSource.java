package dev.itersnap.conformance;

import javax.sql.DataSource;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Logger;

/**
 * A data source whose network can be cut: {@link #down()} closes every connection it handed out and refuses new
 * ones until {@link #up()}, like a client cut off from the database (which keeps running).
 */
public final class SwitchableDataSource implements DataSource {
    private final DataSource target;
    private final List<Connection> handedOut = new ArrayList<>();
    private boolean down;

public SwitchableDataSource(DataSource target) {
        this.target = target;
    }

public synchronized void down() throws SQLException {
        down = true;
        for (Connection c : handedOut) {
            c.close();
        }
        handedOut.clear();
    }

public synchronized void up() {
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
