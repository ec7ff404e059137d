package dev.itersnap.conformance;

import javax.sql.DataSource;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/**
 * A JDBC proxy (level 3 of the test pyramid): wraps a {@link DataSource} so that every connection, statement and
 * prepared statement it hands out counts the statements executed through it, commits included, across all its
 * connections (a run uses two: one holds the model lock). When armed with {@link #failAt(int)}, the k-th statement
 * throws an {@link SQLException} instead of running; every other statement runs normally. Armed with
 * {@link #crashAt(int)}, the k-th statement and every later call (statements, commits, rollbacks; close still closes)
 * fail, like a process that died: the engine can neither roll back nor log the failure, and the database discards the
 * open transactions when the connections close. Thread-safe.
 */
public final class FaultInjectingDataSource {
    /** SQLState of the injected failure (connection failure: the kind of error a retry must survive). */
    public static final String SQL_STATE = "08006";

    private final DataSource target;
    private final DataSource proxy;
    private final List<String> executed = new ArrayList<>();
    private int failAt;
    private boolean crash;
    private boolean injected;

    public FaultInjectingDataSource(DataSource target) {
        this.target = target;
        this.proxy = (DataSource) Proxy.newProxyInstance(DataSource.class.getClassLoader(),
                new Class<?>[] {DataSource.class}, this::onDataSource);
    }

    /** The wrapped data source to hand to the engine. */
    public DataSource dataSource() {
        return proxy;
    }

    /** Resets the count and fails the k-th statement from now on (0: never fail, only count). */
    public synchronized void failAt(int k) {
        this.failAt = k;
        this.crash = false;
        this.injected = false;
        this.executed.clear();
    }

    /** Resets the count; the k-th statement and everything after it fail (a crash). */
    public synchronized void crashAt(int k) {
        failAt(k);
        this.crash = true;
    }

    /** Statements executed (or attempted, for the failed one) since the last {@link #failAt(int)}. */
    public synchronized int count() {
        return executed.size();
    }

    /** The statements seen since the last {@link #failAt(int)}, in order ({@code COMMIT} for commits). */
    public synchronized List<String> statements() {
        return List.copyOf(executed);
    }

    /** True when the armed fault has fired. */
    public synchronized boolean injected() {
        return injected;
    }

    private synchronized void count(String sql) throws SQLException {
        if (crash && injected) {
            throw new SQLException("crashed at statement " + failAt, SQL_STATE);
        }
        executed.add(sql);
        if (executed.size() == failAt) {
            injected = true;
            throw new SQLException("injected fault at statement " + failAt + ": " + sql, SQL_STATE);
        }
    }

    /** After a crash, every call but close fails. */
    private synchronized void afterCrash(String method) throws SQLException {
        if (crash && injected && !method.equals("close") && !method.equals("isClosed")) {
            throw new SQLException("crashed at statement " + failAt + " (" + method + ")", SQL_STATE);
        }
    }

    private Object onDataSource(Object p, Method method, Object[] args) throws Throwable {
        Object result = invoke(target, method, args);
        if (result instanceof Connection c) {
            return wrap(Connection.class, c, connectionHandler(c));
        }
        return result;
    }

    private InvocationHandler connectionHandler(Connection c) {
        return (p, method, args) -> {
            String name = method.getName();
            if (name.equals("commit")) {
                count("COMMIT");
            } else {
                afterCrash(name);
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
                String sql = args != null && args.length > 0 && args[0] instanceof String text ? text : preparedSql;
                count(sql);
            } else if (name.equals("getConnection")) {
                return proxyConnection;
            } else {
                afterCrash(name);
            }
            return invoke(s, method, args);
        };
    }

    private static String sqlOf(Object[] args) {
        return args != null && args.length > 0 && args[0] instanceof String sql ? sql : null;
    }

    @SuppressWarnings("unchecked")
    private static <T> T wrap(Class<T> type, Object target, InvocationHandler handler) {
        return (T) Proxy.newProxyInstance(FaultInjectingDataSource.class.getClassLoader(), new Class<?>[] {type},
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
