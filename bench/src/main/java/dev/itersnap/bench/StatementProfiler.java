package dev.itersnap.bench;

import javax.sql.DataSource;
import java.io.PrintWriter;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * A DataSource wrapper that times every execute call (execute, executeQuery, executeUpdate, executeBatch, and the
 * large variants) per statement text, while enabled. Time spent iterating a ResultSet is not counted; both H2 and
 * the PostgreSQL driver (no fetch size) compute the whole result inside the execute call.
 */
final class StatementProfiler {
    private final Map<String, LongAdder[]> byStatement = new ConcurrentHashMap<>();
    private volatile boolean enabled;

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
    }

    /** Total time of every statement recorded since the last reset, in ms. */
    double totalMillis() {
        return byStatement.values().stream().mapToLong(a -> a[1].sum()).sum() / 1e6;
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
            if (!enabled || !name.startsWith("execute")) {
                return invoke(st, method, args);
            }
            String sql = preparedSql != null ? preparedSql
                    : (args != null && args.length > 0 && args[0] instanceof String s ? s : "(batch)");
            long start = System.nanoTime();
            try {
                return invoke(st, method, args);
            } finally {
                long elapsed = System.nanoTime() - start;
                LongAdder[] a = byStatement.computeIfAbsent(key(sql), k -> new LongAdder[] {new LongAdder(), new LongAdder()});
                a[0].increment();
                a[1].add(elapsed);
            }
        };
        return Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {type}, h);
    }

    private static String key(String sql) {
        String s = sql.replaceAll("\\s+", " ").trim();
        // values are bound parameters, but a few statements name dated objects; keep the shape only
        s = s.replaceAll("'\\d{4}-\\d{2}-\\d{2}[^']*'", "'<ts>'");
        return s.length() > 150 ? s.substring(0, 150) + "…" : s;
    }

    private static Object invoke(Object target, Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
