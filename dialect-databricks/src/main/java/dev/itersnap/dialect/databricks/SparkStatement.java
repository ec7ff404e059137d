package dev.itersnap.dialect.databricks;

import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * A JDBC {@link Statement} or {@link PreparedStatement} that runs on the connection's SparkSession. The value set with
 * any {@code setXxx(index, value)} is bound to the named marker {@code :_p<index>} ({@link SparkSql}); a statement runs
 * when executed. The update
 * count is the {@code num_affected_rows} of UPDATE, DELETE and MERGE and 0 for everything else, INSERT included:
 * Spark reports no count for an INSERT.
 */
final class SparkStatement implements InvocationHandler {
    /** Statements that return rows (a DML statement returns its metrics row only to executeQuery). */
    private static final Set<String> QUERIES = Set.of("SELECT", "WITH", "VALUES", "TABLE", "FROM", "SHOW", "DESCRIBE",
            "DESC", "EXPLAIN", "LIST");
    /** Setters of PreparedStatement that are not parameter values. */
    private static final Set<String> NOT_VALUES = Set.of("setMaxRows", "setLargeMaxRows", "setFetchSize",
            "setQueryTimeout", "setEscapeProcessing", "setPoolable", "setCursorName", "setFetchDirection",
            "setMaxFieldSize");

    private final SparkConnection connection;
    private final Connection connectionProxy;
    private final String preparedSql;
    private final List<Object> binds = new ArrayList<>();
    private final List<List<Object>> batch = new ArrayList<>();
    private int maxRows;
    private int queryTimeout;
    private ResultSet resultSet;
    private long updateCount = -1;
    private boolean closed;

    private SparkStatement(SparkConnection connection, Connection connectionProxy, String preparedSql) {
        this.connection = connection;
        this.connectionProxy = connectionProxy;
        this.preparedSql = preparedSql;
    }

    static Statement create(SparkConnection connection, Connection proxy) {
        return (Statement) Proxy.newProxyInstance(SparkStatement.class.getClassLoader(),
                new Class<?>[] {Statement.class}, new SparkStatement(connection, proxy, null));
    }

    static PreparedStatement prepare(SparkConnection connection, Connection proxy, String sql) {
        return (PreparedStatement) Proxy.newProxyInstance(SparkStatement.class.getClassLoader(),
                new Class<?>[] {PreparedStatement.class}, new SparkStatement(connection, proxy, sql));
    }

    @Override
    public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
        String name = method.getName();
        int argc = args == null ? 0 : args.length;
        switch (name) {
            case "executeQuery": return executeQuery(proxy, sql(args));
            case "executeUpdate": return (int) executeUpdate(sql(args));
            case "executeLargeUpdate": return executeUpdate(sql(args));
            case "execute": return execute(proxy, sql(args));
            case "getResultSet": return resultSet;
            case "getUpdateCount": return (int) updateCount;
            case "getLargeUpdateCount": return updateCount;
            case "getMoreResults":
                resultSet = null;
                updateCount = -1;
                return false;
            case "clearParameters":
                binds.clear();
                return null;
            case "addBatch":
                if (preparedSql == null) {
                    throw new SQLFeatureNotSupportedException("Statement.addBatch(String) is not supported on Spark");
                }
                batch.add(new ArrayList<>(values())); // values may be null
                return null;
            case "clearBatch":
                batch.clear();
                return null;
            case "executeBatch": return executeBatch();
            case "executeLargeBatch": return java.util.Arrays.stream(executeBatch()).asLongStream().toArray();
            case "setMaxRows": case "setLargeMaxRows":
                maxRows = ((Number) args[0]).intValue();
                return null;
            case "getMaxRows": return maxRows;
            case "getLargeMaxRows": return (long) maxRows;
            case "setQueryTimeout":
                queryTimeout = (Integer) args[0];
                return null;
            case "getQueryTimeout": return queryTimeout;
            case "setFetchSize": case "setEscapeProcessing": case "setPoolable": case "clearWarnings":
            case "setFetchDirection": case "closeOnCompletion":
                return null;
            case "getFetchSize": return 0;
            case "getFetchDirection": return ResultSet.FETCH_FORWARD;
            case "getWarnings": return null;
            case "isPoolable": case "isCloseOnCompletion": return false;
            case "getResultSetType": return ResultSet.TYPE_FORWARD_ONLY;
            case "getResultSetConcurrency": return ResultSet.CONCUR_READ_ONLY;
            case "getResultSetHoldability": return ResultSet.CLOSE_CURSORS_AT_COMMIT;
            case "getConnection": return connectionProxy;
            case "close":
                closed = true;
                return null;
            case "isClosed": return closed;
            case "unwrap": throw new SQLException("not a wrapper for " + args[0]);
            case "isWrapperFor": return false;
            case "hashCode": return System.identityHashCode(proxy);
            case "equals": return proxy == args[0];
            case "toString": return "SparkStatement[" + preparedSql + "]";
            default:
                if (preparedSql != null && name.startsWith("set") && !NOT_VALUES.contains(name) && argc >= 2
                        && args[0] instanceof Integer index) {
                    bind(index, name.equals("setNull") ? null : args[1]);
                    return null;
                }
                throw new SQLFeatureNotSupportedException("Statement." + name + " is not supported on Spark");
        }
    }

    private String sql(Object[] args) throws SQLException {
        if (closed) {
            throw new SQLException("statement is closed");
        }
        if (args != null && args.length > 0 && args[0] instanceof String sql) {
            if (preparedSql != null) {
                throw new SQLException("a PreparedStatement runs the SQL it was prepared with");
            }
            return sql;
        }
        if (preparedSql == null) {
            throw new SQLException("no SQL to execute");
        }
        return preparedSql;
    }

    private void bind(int index, Object value) throws SQLException {
        if (index < 1) {
            throw new SQLException("parameter index " + index + " is below 1");
        }
        while (binds.size() < index) {
            binds.add(Unset.VALUE);
        }
        binds.set(index - 1, value);
    }

    private List<Object> values() throws SQLException {
        int missing = binds.indexOf(Unset.VALUE);
        if (missing >= 0) {
            throw new SQLException("parameter " + (missing + 1) + " has no value", "07001");
        }
        return binds;
    }

    private Dataset<Row> run(String sql) throws SQLException {
        resultSet = null;
        updateCount = -1;
        return connection.run(sql, preparedSql == null ? List.of() : values());
    }

    private ResultSet executeQuery(Object proxy, String sql) throws SQLException {
        Dataset<Row> result = run(sql);
        resultSet = SparkResultSet.of(SparkSql.read(result, maxRows, connection.zone()), (Statement) proxy,
                connection.zone());
        return resultSet;
    }

    private long executeUpdate(String sql) throws SQLException {
        updateCount = SparkSql.updateCount(run(sql));
        return updateCount;
    }

    /** Runs the statement once per added set of values (each its own Delta commit). */
    private int[] executeBatch() throws SQLException {
        List<List<Object>> sets = List.copyOf(batch);
        batch.clear();
        int[] counts = new int[sets.size()];
        for (int i = 0; i < sets.size(); i++) {
            counts[i] = (int) SparkSql.updateCount(connection.run(preparedSql, sets.get(i)));
        }
        return counts;
    }

    private boolean execute(Object proxy, String sql) throws SQLException {
        if (QUERIES.contains(firstWord(sql))) {
            executeQuery(proxy, sql);
            return true;
        }
        executeUpdate(sql);
        return false;
    }

    private static String firstWord(String sql) {
        String s = sql.stripLeading();
        while (s.startsWith("(")) {
            s = s.substring(1).stripLeading();
        }
        int end = 0;
        while (end < s.length() && Character.isLetter(s.charAt(end))) {
            end++;
        }
        return s.substring(0, end).toUpperCase(Locale.ROOT);
    }

    /** A parameter not set yet (null is a value). */
    private enum Unset { VALUE }
}
