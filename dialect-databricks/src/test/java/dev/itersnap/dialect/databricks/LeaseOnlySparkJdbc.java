package dev.itersnap.dialect.databricks;

import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

import javax.sql.DataSource;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Just the JDBC calls DeltaLease makes, over a local SparkSession, so that the lease class itself (heartbeat, waits,
 * takeover) runs on Delta: each connection is a session of its own ({@code newSession()}), statements bind by name
 * ({@link DeltaLeaseDeltaTest#run}), an update count is {@code num_affected_rows}, and Spark's failures become
 * {@link SQLException}s with the original as cause, as a driver's would. Anything else throws. The dialect's
 * SparkDataSource (branch dbx) is the full facade; this one exists only until it is merged.
 */
final class LeaseOnlySparkJdbc {
    private LeaseOnlySparkJdbc() {
    }

    static DataSource dataSource(SparkSession root) {
        return proxy(DataSource.class, (p, m, a) -> switch (m.getName()) {
            case "getConnection" -> connection(root.newSession());
            default -> throw new UnsupportedOperationException("DataSource." + m.getName());
        });
    }

    private static Connection connection(SparkSession session) {
        boolean[] closed = {false};
        return proxy(Connection.class, (p, m, a) -> switch (m.getName()) {
            case "setAutoCommit", "commit", "rollback" -> null;
            case "getAutoCommit" -> true;
            case "close" -> closed[0] = true;
            case "isClosed" -> closed[0];
            case "prepareStatement" -> {
                if (closed[0]) {
                    throw new SQLException("connection closed", "08003");
                }
                yield statement(session, (String) a[0], closed);
            }
            default -> throw new UnsupportedOperationException("Connection." + m.getName());
        });
    }

    private static PreparedStatement statement(SparkSession session, String sql, boolean[] closed) {
        List<Object> binds = new ArrayList<>();
        return proxy(PreparedStatement.class, (p, m, a) -> switch (m.getName()) {
            case "setString", "setLong" -> {
                int i = (Integer) a[0];
                while (binds.size() < i) {
                    binds.add(null);
                }
                binds.set(i - 1, a[1]);
                yield null;
            }
            case "executeUpdate" -> {
                Dataset<Row> result = execute(session, sql, binds, closed);
                yield Arrays.asList(result.schema().fieldNames()).contains("num_affected_rows")
                        ? (int) result.first().getLong(0) : 0;
            }
            case "executeQuery" -> resultSet(execute(session, sql, binds, closed).collectAsList());
            case "close" -> null;
            default -> throw new UnsupportedOperationException("PreparedStatement." + m.getName());
        });
    }

    private static Dataset<Row> execute(SparkSession session, String sql, List<Object> binds, boolean[] closed)
            throws SQLException {
        if (closed[0]) {
            throw new SQLException("connection closed", "08003");
        }
        try {
            return DeltaLeaseDeltaTest.run(session, new LeaseSql.Statement(sql, List.copyOf(binds)));
        } catch (Exception e) {
            throw new SQLException(e.getMessage(), e);
        }
    }

    private static ResultSet resultSet(List<Row> rows) {
        int[] at = {-1};
        boolean[] wasNull = {false};
        return proxy(ResultSet.class, (p, m, a) -> switch (m.getName()) {
            case "next" -> ++at[0] < rows.size();
            case "getString", "getLong" -> {
                Row r = rows.get(at[0]);
                int i = (Integer) a[0] - 1;
                wasNull[0] = r.isNullAt(i);
                yield m.getName().equals("getString") ? (wasNull[0] ? null : String.valueOf(r.get(i)))
                        : (wasNull[0] ? 0L : ((Number) r.get(i)).longValue());
            }
            case "wasNull" -> wasNull[0];
            case "close" -> null;
            default -> throw new UnsupportedOperationException("ResultSet." + m.getName());
        });
    }

    @SuppressWarnings("unchecked")
    private static <T> T proxy(Class<T> type, InvocationHandler handler) {
        InvocationHandler withObjectMethods = (p, m, a) -> switch (m.getName()) {
            case "toString" -> type.getSimpleName() + " over a SparkSession";
            case "hashCode" -> System.identityHashCode(p);
            case "equals" -> p == a[0];
            default -> handler.invoke(p, m, a);
        };
        return (T) Proxy.newProxyInstance(LeaseOnlySparkJdbc.class.getClassLoader(), new Class<?>[] {type},
                withObjectMethods);
    }
}
