package dev.itersnap.testing;

import javax.sql.DataSource;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * Wraps a data source so that every statement executed through its connections (commits included) is counted, across
 * all connections, and the k-th one can be made to fail with an {@link SQLException} instead of running (SQLState
 * 08006, a connection failure: the kind of error a rerun must survive). Thread-safe.
 */
final class FailingDataSource {
    private final DataSource target;
    private final DataSource proxy;
    private int count;
    private int failAt;
    private String failed;

    FailingDataSource(DataSource target) {
        this.target = target;
        this.proxy = (DataSource) Proxy.newProxyInstance(FailingDataSource.class.getClassLoader(),
                new Class<?>[] {DataSource.class}, this::onDataSource);
    }

    DataSource dataSource() {
        return proxy;
    }

    /** Resets the count; the k-th statement from now on fails (0: none, only count). */
    synchronized void failAt(int k) {
        count = 0;
        failAt = k;
        failed = null;
    }

    /** Statements executed or attempted since {@link #failAt}. */
    synchronized int count() {
        return count;
    }

    /** The statement that was made to fail, or null. */
    synchronized String failed() {
        return failed;
    }

    private synchronized void arrive(String sql) throws SQLException {
        count++;
        if (count == failAt && failed == null) {
            failed = sql;
            throw new SQLException("failure injected by itersnap-testing at statement " + count + ": " + sql, "08006");
        }
    }

    private Object onDataSource(Object p, Method method, Object[] args) throws Throwable {
        Object result = invoke(target, method, args);
        return result instanceof Connection c ? wrap(Connection.class, c, connectionHandler(c)) : result;
    }

    private InvocationHandler connectionHandler(Connection c) {
        return (p, method, args) -> {
            String name = method.getName();
            if (name.equals("commit")) {
                arrive("COMMIT");
            }
            Object result = invoke(c, method, args);
            if (result instanceof CallableStatement s) {
                return wrap(CallableStatement.class, s, statementHandler(s, (Connection) p, sqlOf(args)));
            }
            if (result instanceof PreparedStatement s) {
                return wrap(PreparedStatement.class, s, statementHandler(s, (Connection) p, sqlOf(args)));
            }
            if (result instanceof Statement s) {
                return wrap(Statement.class, s, statementHandler(s, (Connection) p, null));
            }
            return result;
        };
    }

    private InvocationHandler statementHandler(Statement s, Connection proxyConnection, String preparedSql) {
        return (p, method, args) -> {
            String name = method.getName();
            if (name.startsWith("execute")) {
                arrive(args != null && args.length > 0 && args[0] instanceof String text ? text : preparedSql);
            }
            if (name.equals("getConnection")) {
                return proxyConnection;
            }
            return invoke(s, method, args);
        };
    }

    private static String sqlOf(Object[] args) {
        return args != null && args.length > 0 && args[0] instanceof String sql ? sql : null;
    }

    @SuppressWarnings("unchecked")
    private static <T> T wrap(Class<T> type, Object target, InvocationHandler handler) {
        return (T) Proxy.newProxyInstance(FailingDataSource.class.getClassLoader(), new Class<?>[] {type},
                (p, method, args) -> {
                    if (method.getName().equals("unwrap") && args != null && args[0] == type) {
                        return p;
                    }
                    if (method.getName().equals("equals") && args != null && args.length == 1) {
                        return p == args[0];
                    }
                    if (method.getName().equals("hashCode") && (args == null || args.length == 0)) {
                        return System.identityHashCode(p);
                    }
                    return handler.invoke(p, method, args);
                });
    }

    private static Object invoke(Object target, Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
