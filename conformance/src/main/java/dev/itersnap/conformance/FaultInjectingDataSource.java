package dev.itersnap.conformance;

import javax.sql.DataSource;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiPredicate;

/**
 * A JDBC proxy (level 3 of the test pyramid): wraps a {@link DataSource} so that every connection, statement and
 * prepared statement it hands out counts the calls made through it, across all its connections (a run uses two: one
 * holds the model lock), and fails one of them on demand.
 *
 * <p>Five kinds of call are counted ({@link Call}): statements executed (commits included), connections taken from
 * the data source, statements prepared (or created), rows read ({@code ResultSet.next}), and catalog reads (a
 * {@code DatabaseMetaData} call that returns rows, such as {@code getTables}: a query of the catalog, a round trip
 * like a statement, a metadata call to a SQL warehouse). Armed with
 * {@link #arm(Call, int, Mode)}, the k-th call of a kind fails:
 * <ul>
 *   <li>{@link Mode#FAIL}: it throws an {@link SQLException} instead of running; every other call runs normally;</li>
 *   <li>{@link Mode#EXECUTED_THEN_FAIL} (statements): it runs, then the client gets an error, like a commit whose
 *   acknowledgement is lost on the network;</li>
 *   <li>{@link Mode#CRASH} (statements): it and every later call (statements, commits, rollbacks; close still
 *   closes) fail, like a process that died: the engine can neither roll back nor log the failure, and the database
 *   discards the open transactions when the connections close.</li>
 * </ul>
 * {@link #failFirst} fails the first statement a rule picks instead (for example the first write of a recovery).
 * {@link #hook} runs code of the test right before and right after each statement (a loader changing the source
 * between two statements of one run). Thread-safe.
 */
public final class FaultInjectingDataSource {
    /** SQLState of the injected failure (connection failure: the kind of error a retry must survive). */
    public static final String SQL_STATE = "08006";

    /** The kinds of call counted. */
    public enum Call { STATEMENT, CONNECTION, PREPARE, NEXT, CATALOG }

    /** How an armed call fails. */
    public enum Mode { FAIL, EXECUTED_THEN_FAIL, CRASH }

    private final DataSource target;
    private final DataSource proxy;
    private final List<String> executed = new ArrayList<>();
    private final List<String> timed = new ArrayList<>();
    private final Map<Call, Integer> counts = new EnumMap<>(Call.class);
    private Call armedCall = Call.STATEMENT;
    private int failAt;
    private Mode mode = Mode.FAIL;
    private BiPredicate<List<String>, String> rule;
    private boolean injected;
    private volatile StatementHook hook = (sql, after) -> { };

    /** Code run right before ({@code after} false) and right after ({@code after} true) each statement executed. */
    @FunctionalInterface
    public interface StatementHook {
        void on(String sql, boolean after);
    }

    public FaultInjectingDataSource(DataSource target) {
        this.target = target;
        this.proxy = (DataSource) Proxy.newProxyInstance(DataSource.class.getClassLoader(),
                new Class<?>[] {DataSource.class}, this::onDataSource);
    }

    /** The wrapped data source to hand to the engine. */
    public DataSource dataSource() {
        return proxy;
    }

    /**
     * Runs {@code hook} (on the engine's thread, outside any lock of this wrapper) right before and right after each
     * statement executed through the wrapper (commits excluded), the failed ones aside.
     */
    public void hook(StatementHook hook) {
        this.hook = hook == null ? (sql, after) -> { } : hook;
    }

    /** Resets the counts and fails the k-th statement from now on (0: never fail, only count). */
    public synchronized void failAt(int k) {
        arm(Call.STATEMENT, k, Mode.FAIL);
    }

    /** Resets the counts; the k-th statement and everything after it fail (a crash). */
    public synchronized void crashAt(int k) {
        arm(Call.STATEMENT, k, Mode.CRASH);
    }

    /** Resets the counts and fails the k-th call of the given kind in the given way (k = 0: never). */
    public synchronized void arm(Call call, int k, Mode how) {
        if (how != Mode.FAIL && call != Call.STATEMENT) {
            throw new IllegalArgumentException(how + " applies to statements only");
        }
        this.armedCall = call;
        this.failAt = k;
        this.mode = how;
        this.rule = null;
        this.injected = false;
        this.executed.clear();
        this.timed.clear();
        this.counts.clear();
    }

    /**
     * Resets the counts and fails (without running it) the first statement for which {@code rule} holds, given the
     * statements before it ({@code COMMIT} for commits) and its SQL.
     */
    public synchronized void failFirst(BiPredicate<List<String>, String> rule) {
        arm(Call.STATEMENT, 0, Mode.FAIL);
        this.rule = rule;
    }

    /** Statements executed (or attempted, for the failed one) since the fault was armed. */
    public synchronized int count() {
        return executed.size();
    }

    /** Calls of one kind since the fault was armed. */
    public synchronized int count(Call call) {
        return counts.getOrDefault(call, 0);
    }

    /** The statements that ran since the fault was armed, each with its time in milliseconds first (commits left out). */
    public synchronized List<String> timedStatements() {
        return List.copyOf(timed);
    }

    private synchronized void timed(long startNanos, String sql) {
        timed.add(String.format(java.util.Locale.ROOT, "%7.1f ms  %s", (System.nanoTime() - startNanos) / 1e6, sql));
    }

    /** The statements seen since the fault was armed, in order ({@code COMMIT} for commits). */
    public synchronized List<String> statements() {
        return List.copyOf(executed);
    }

    /** True when the armed fault has fired. */
    public synchronized boolean injected() {
        return injected;
    }

    /** Counts a call; true when it is the armed one (the caller then fails it). */
    private synchronized boolean arrive(Call call, String sql) throws SQLException {
        if (mode == Mode.CRASH && injected) {
            throw new SQLException("crashed at statement " + failAt, SQL_STATE);
        }
        int n = counts.merge(call, 1, Integer::sum);
        if (call == Call.STATEMENT) {
            if (!injected && rule != null && rule.test(List.copyOf(executed), sql == null ? "" : sql)) {
                executed.add(sql);
                injected = true;
                return true;
            }
            executed.add(sql);
        }
        if (!injected && call == armedCall && n == failAt) {
            injected = true;
            return true;
        }
        return false;
    }

    private SQLException fault(Call call, String sql) {
        return new SQLException("injected fault at " + call.name().toLowerCase(java.util.Locale.ROOT) + " "
                + failAt + (sql == null ? "" : ": " + sql), SQL_STATE);
    }

    /** After a crash, every call but close fails. */
    private synchronized void afterCrash(String method) throws SQLException {
        if (mode == Mode.CRASH && injected && !method.equals("close") && !method.equals("isClosed")) {
            throw new SQLException("crashed at statement " + failAt + " (" + method + ")", SQL_STATE);
        }
    }

    private synchronized boolean executedThenFail() {
        return mode == Mode.EXECUTED_THEN_FAIL && rule == null;
    }

    private Object onDataSource(Object p, Method method, Object[] args) throws Throwable {
        if (method.getName().equals("getConnection")) {
            afterCrash("getConnection");
            if (arrive(Call.CONNECTION, null)) {
                throw fault(Call.CONNECTION, null);
            }
        }
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
                boolean armed = arrive(Call.STATEMENT, "COMMIT");
                if (armed && !executedThenFail()) {
                    throw fault(Call.STATEMENT, "COMMIT");
                }
                Object result = invoke(c, method, args);
                if (armed) {
                    throw fault(Call.STATEMENT, "COMMIT (after it committed)");
                }
                return result;
            }
            afterCrash(name);
            if (name.equals("getMetaData")) {
                DatabaseMetaData md = (DatabaseMetaData) invoke(c, method, args);
                return md == null ? null : wrap(DatabaseMetaData.class, md, catalogHandler(md, (Connection) p));
            }
            if (name.equals("prepareStatement") || name.equals("prepareCall") || name.equals("createStatement")) {
                if (arrive(Call.PREPARE, sqlOf(args))) {
                    throw fault(Call.PREPARE, sqlOf(args));
                }
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
                boolean armed = arrive(Call.STATEMENT, sql);
                if (armed && !executedThenFail()) {
                    throw fault(Call.STATEMENT, sql);
                }
                hook.on(sql, false);
                long start = System.nanoTime();
                Object result = invoke(s, method, args);
                timed(start, sql);
                hook.on(sql, true);
                if (armed) {
                    throw fault(Call.STATEMENT, sql + " (after it ran)");
                }
                return result instanceof ResultSet rs ? wrap(ResultSet.class, rs, resultHandler(rs)) : result;
            }
            if (name.equals("getConnection")) {
                return proxyConnection;
            }
            afterCrash(name);
            Object result = invoke(s, method, args);
            return result instanceof ResultSet rs ? wrap(ResultSet.class, rs, resultHandler(rs)) : result;
        };
    }

    /** Counts (and fails, when armed) each catalog read: a call of {@code md} that returns rows. */
    private InvocationHandler catalogHandler(DatabaseMetaData md, Connection proxyConnection) {
        return (p, method, args) -> {
            String name = method.getName();
            if (name.equals("getConnection")) {
                return proxyConnection;
            }
            afterCrash(name);
            if (method.getReturnType() == ResultSet.class) {
                if (arrive(Call.CATALOG, null)) {
                    throw fault(Call.CATALOG, "DatabaseMetaData." + name);
                }
                long start = System.nanoTime();
                Object result = invoke(md, method, args);
                timed(start, "DatabaseMetaData." + name + java.util.Arrays.toString(args));
                return result;
            }
            return invoke(md, method, args);
        };
    }

    private InvocationHandler resultHandler(ResultSet rs) {
        return (p, method, args) -> {
            String name = method.getName();
            afterCrash(name);
            if (name.equals("next") && arrive(Call.NEXT, null)) {
                throw fault(Call.NEXT, null);
            }
            return invoke(rs, method, args);
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
