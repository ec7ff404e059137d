package dev.itersnap.bench;

import javax.sql.DataSource;
import java.io.PrintWriter;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.regex.Pattern;

/**
 * A DataSource wrapper that times every execute call (execute, executeQuery, executeUpdate, executeBatch, and the
 * large variants) per statement text, while enabled. Time spent iterating a ResultSet is not counted; both H2 and
 * the PostgreSQL driver (no fetch size) compute the whole result inside the execute call.
 *
 * <p>Independently of the timing, it counts the execute calls of one engine run between {@link #startCounting} and
 * {@link #stopCounting}: all of them, the writes among them (statement text starting with INSERT, UPDATE, DELETE or
 * MERGE; DDL is not a write), and the rows the writes to one table (the history) report as their update count.
 */
final class StatementProfiler {
    private static final Pattern WRITE = Pattern.compile("(?is)\\s*(INSERT|UPDATE|DELETE|MERGE)\\b.*");

    private final Map<String, LongAdder[]> byStatement = new ConcurrentHashMap<>();
    /** The whole text of the last statement recorded under each key (for --explain). */
    private final Map<String, String> fullText = new ConcurrentHashMap<>();
    private volatile boolean enabled;
    private volatile Pattern countedTarget; // non-null while counting
    private final LongAdder statements = new LongAdder();
    private final LongAdder writes = new LongAdder();
    private final LongAdder targetRows = new LongAdder();

    /** What one counted run executed: statements, writes among them, rows written to the counted table. */
    record Counts(long statements, long writes, long targetRows) {
    }

    DataSource wrap(DataSource target) {
        return (DataSource) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {DataSource.class},
                (proxy, method, args) -> {
                    Object result = invoke(target, method, args);
                    if (result instanceof Connection c && method.getName().equals("getConnection")) {
                        return connection(c);
                    }
                    return result;
                });
    }

    void enable(boolean on) {
        enabled = on;
    }

    void reset() {
        byStatement.clear();
        fullText.clear();
    }

    /**
     * Starts counting execute calls (whether or not timing is enabled). Writes to {@code table} are those whose text
     * starts with INSERT INTO, UPDATE, DELETE FROM or MERGE INTO followed by the table's name, quoted or not,
     * optionally schema-qualified, in any case: the way the engine renders the model's target.
     */
    void startCounting(String table) {
        statements.reset();
        writes.reset();
        targetRows.reset();
        String part = "(?:\"[^\"]*\"|[A-Za-z_][A-Za-z0-9_$]*)";
        String name = "(?:\"" + Pattern.quote(table) + "\"|" + Pattern.quote(table) + ")";
        countedTarget = Pattern.compile("(?is)\\s*(?:INSERT\\s+INTO|UPDATE|DELETE\\s+FROM|MERGE\\s+INTO)\\s+(?:" + part
                + "\\s*\\.\\s*)*" + name + "(?![A-Za-z0-9_$\"]).*");
    }

    /** Stops counting and returns what was executed since {@link #startCounting}. */
    Counts stopCounting() {
        countedTarget = null;
        return new Counts(statements.sum(), writes.sum(), targetRows.sum());
    }

    /** Total time of every statement recorded since the last reset, in ms. */
    double totalMillis() {
        return byStatement.values().stream().mapToLong(a -> a[1].sum()).sum() / 1e6;
    }

    /** The whole texts of the {@code limit} statements that took the most time since the last reset. */
    List<String> slowest(int limit) {
        List<Map.Entry<String, LongAdder[]>> entries = new ArrayList<>(byStatement.entrySet());
        entries.sort((a, b) -> Long.compare(b.getValue()[1].sum(), a.getValue()[1].sum()));
        return entries.stream().limit(limit).map(e -> fullText.get(e.getKey())).toList();
    }

    /** The statements that took the most time, as markdown table rows. */
    void printTop(PrintWriter out, String title, int limit) {
        List<Map.Entry<String, LongAdder[]>> entries = new ArrayList<>(byStatement.entrySet());
        entries.sort((a, b) -> Long.compare(b.getValue()[1].sum(), a.getValue()[1].sum()));
        double total = totalMillis();
        out.printf(Locale.ROOT, "%n%s: %d distinct statements, %.0f ms in execute calls%n%n", title, entries.size(), total);
        out.println("| share | total ms | calls | statement (first 150 chars) |");
        out.println("|---:|---:|---:|---|");
        for (int i = 0; i < Math.min(limit, entries.size()); i++) {
            Map.Entry<String, LongAdder[]> e = entries.get(i);
            double ms = e.getValue()[1].sum() / 1e6;
            out.printf(Locale.ROOT, "| %.0f%% | %.0f | %d | `%s` |%n", total == 0 ? 0 : 100 * ms / total, ms,
                    e.getValue()[0].sum(), e.getKey().replace("|", "\\|").replace("`", "'"));
        }
        out.flush();
    }

    private Connection connection(Connection c) {
        return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Connection.class},
                (proxy, method, args) -> {
                    Object result = invoke(c, method, args);
                    String name = method.getName();
                    if (result instanceof PreparedStatement ps && (name.equals("prepareStatement") || name.equals("prepareCall"))) {
                        return statement(ps, (String) args[0],
                                name.equals("prepareCall") ? java.sql.CallableStatement.class : PreparedStatement.class);
                    }
                    if (result instanceof Statement st && name.equals("createStatement")) {
                        return statement(st, null, Statement.class);
                    }
                    return result;
                });
    }

    private Object statement(Statement st, String preparedSql, Class<?> type) {
        InvocationHandler h = (proxy, method, args) -> {
            String name = method.getName();
            Pattern target = countedTarget;
            if (!(enabled || target != null) || !name.startsWith("execute")) {
                return invoke(st, method, args);
            }
            String sql = preparedSql != null ? preparedSql
                    : (args != null && args.length > 0 && args[0] instanceof String s ? s : "(batch)");
            if (!enabled) {
                return count(st, sql, target, invoke(st, method, args));
            }
            long start = System.nanoTime();
            try {
                return target == null ? invoke(st, method, args) : count(st, sql, target, invoke(st, method, args));
            } finally {
                long elapsed = System.nanoTime() - start;
                LongAdder[] a = byStatement.computeIfAbsent(key(sql), k -> new LongAdder[] {new LongAdder(), new LongAdder()});
                fullText.put(key(sql), sql);
                a[0].increment();
                a[1].add(elapsed);
            }
        };
        return Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {type}, h);
    }

    /**
     * Counts one execute call and, for a write to the counted table, its update count: the value executeUpdate
     * returns, the sum of executeBatch's, or {@code getUpdateCount()} after an execute that returned no result set.
     * Returns the call's result unchanged.
     */
    private Object count(Statement st, String sql, Pattern target, Object result) throws SQLException {
        statements.increment();
        if (!WRITE.matcher(sql).matches()) {
            return result;
        }
        writes.increment();
        if (target.matcher(sql).matches()) {
            if (result instanceof Number n) {
                targetRows.add(Math.max(0, n.longValue()));
            } else if (result instanceof Boolean b && !b) {
                targetRows.add(Math.max(0, st.getUpdateCount()));
            } else if (result instanceof int[] counts) {
                for (int c : counts) {
                    targetRows.add(Math.max(0, c));
                }
            } else if (result instanceof long[] counts) {
                for (long c : counts) {
                    targetRows.add(Math.max(0, c));
                }
            }
        }
        return result;
    }

    private static String key(String sql) {
        String s = sql.replaceAll("\\s+", " ").trim();
        // values are bound parameters, but a few statements name dated objects; keep the shape only
        s = s.replaceAll("'\\d{4}-\\d{2}-\\d{2}[^']*'", "'<ts>'");
        // statements that differ after their first 150 characters (the two fingerprints, over the source and over
        // the stage) are told apart by a hash of their whole text
        return s.length() > 150 ? s.substring(0, 150) + "… #" + String.format(Locale.ROOT, "%08x", s.hashCode()) : s;
    }

    private static Object invoke(Object target, Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
