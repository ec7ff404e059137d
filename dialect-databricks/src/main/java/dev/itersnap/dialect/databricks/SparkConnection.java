package dev.itersnap.dialect.databricks;

import dev.itersnap.spi.NamedMarkers;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Types;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;

/**
 * A JDBC {@link Connection} over a SparkSession; it binds named markers ({@link NamedMarkers}: {@code
 * isWrapperFor(NamedMarkers.class)} is true), so itersnap renders its statements with {@code :_p1 … :_pN}, and a
 * {@code ?} is not a parameter marker here. There are no transactions: every statement commits on its own, so
 * {@code setAutoCommit} only records the flag, {@code commit} does nothing and {@code rollback} cannot undo anything
 * (the dialect reports {@code transactionalDml() = false}, so the engine never relies on it). The schema is the
 * session's current schema, shared by every connection of one {@link SparkDataSource}.
 */
final class SparkConnection implements InvocationHandler {
    private final SparkScope scope;
    private final SparkSession spark;
    private boolean autoCommit = true;
    private boolean closed;
    /** Whether statements run outside the scope's window ({@link #outsideWindow}). */
    private volatile boolean outsideWindow;

    private SparkConnection(SparkScope scope) {
        this.scope = scope;
        this.spark = scope.session();
    }

    static Connection open(SparkScope scope) {
        return (Connection) Proxy.newProxyInstance(SparkConnection.class.getClassLoader(),
                new Class<?>[] {Connection.class}, new SparkConnection(scope));
    }

    /**
     * Runs one statement on the session (see {@link SparkSql#run}) and reads its result: inside the scope's window, or,
     * on a connection marked {@link SparkDataSource#OUTSIDE_WINDOW}, outside it ({@link #outsideWindow}).
     */
    <T> T run(String sql, List<Object> binds, Reader<T> reader) throws SQLException {
        checkOpen();
        if (outsideWindow) {
            return reader.read(SparkSql.run(spark, SparkSql.inline(sql, binds), List.of()));
        }
        return scope.within(s -> reader.read(scope.binding() == SparkScope.Binding.LITERALS
                ? SparkSql.run(s, SparkSql.inline(sql, binds), List.of()) : SparkSql.run(s, sql, binds)));
    }

    /**
     * Whether this connection's statements run outside the window: on the session as it is, without taking the
     * session's statement lock and without changing a setting, so they never wait for a statement of the window (the
     * lease's heartbeat, docs/decisions/0008-lease-statements-outside-the-window.md). What the window gives a
     * statement it must then not need: its tables are qualified with their catalog (the current catalog and schema
     * are the caller's, or another window's), its values are inlined as literals (no parameter-substitution setting;
     * {@link SparkSql#inline}), and it neither binds nor reads a TIMESTAMP in the session time zone (the lease converts
     * epoch milliseconds with {@code timestamp_millis} and {@code unix_millis}, which do not depend on it).
     */
    boolean outsideWindow() {
        return outsideWindow;
    }

    /** Reads a statement's result. */
    interface Reader<T> {
        T read(Dataset<Row> result) throws SQLException;
    }

    /** The time zone TIMESTAMP values are read and bound in: always UTC ({@link SparkScope}). */
    ZoneId zone() {
        return ZoneOffset.UTC;
    }

    private void checkOpen() throws SQLException {
        if (closed) {
            throw new SQLException("connection is closed", "08003");
        }
    }

    @Override
    public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
        String name = method.getName();
        switch (name) {
            case "createStatement":
                checkOpen();
                return SparkStatement.create(this, (Connection) proxy);
            case "prepareStatement":
                checkOpen();
                return SparkStatement.prepare(this, (Connection) proxy, (String) args[0]);
            case "nativeSQL": return args[0];
            case "setAutoCommit":
                checkOpen();
                autoCommit = (Boolean) args[0];
                return null;
            case "getAutoCommit": return autoCommit;
            case "commit": case "rollback":
                checkOpen();
                return null;
            case "close":
                closed = true;
                return null;
            case "isClosed": return closed;
            case "isValid": return !closed;
            case "getMetaData": return metaData((Connection) proxy);
            case "getSchema": return scope.schema();
            case "setSchema":
                checkOpen();
                scope.setSchema((String) args[0]);
                return null;
            case "getCatalog": return scope.catalog();
            case "setCatalog":
                checkOpen();
                scope.setCatalog((String) args[0]);
                return null;
            case "getTransactionIsolation": return Connection.TRANSACTION_NONE;
            case "setClientInfo":
                if (args.length == 2 && SparkDataSource.OUTSIDE_WINDOW.equals(args[0])) {
                    outsideWindow = Boolean.parseBoolean((String) args[1]);
                }
                return null;
            case "setTransactionIsolation": case "setReadOnly": case "clearWarnings": case "setHoldability":
            case "setNetworkTimeout":
                return null;
            case "isReadOnly": return false;
            case "getWarnings": return null;
            case "getHoldability": return ResultSet.CLOSE_CURSORS_AT_COMMIT;
            case "getNetworkTimeout": return 0;
            case "getClientInfo":
                if (args != null && SparkDataSource.OUTSIDE_WINDOW.equals(args[0])) {
                    return String.valueOf(outsideWindow);
                }
                return args == null ? new java.util.Properties() : null;
            case "unwrap":
                if (args[0] == SparkSession.class) {
                    return spark;
                }
                throw new SQLException("not a wrapper for " + args[0]);
            case "isWrapperFor": return args[0] == SparkSession.class || args[0] == NamedMarkers.class;
            case "hashCode": return System.identityHashCode(proxy);
            case "equals": return proxy == args[0];
            case "toString": return "SparkConnection[" + spark + "]";
            default:
                throw new SQLFeatureNotSupportedException("Connection." + name + " is not supported on Spark");
        }
    }

    /**
     * What the engine asks JDBC metadata: the product, identifier case (Spark's catalog stores names in lower case,
     * quoted or not) and whether a table exists ({@code getTables} with exact names; patterns are not expanded).
     */
    private DatabaseMetaData metaData(Connection connection) {
        return (DatabaseMetaData) Proxy.newProxyInstance(SparkConnection.class.getClassLoader(),
                new Class<?>[] {DatabaseMetaData.class}, (proxy, method, args) -> {
                    switch (method.getName()) {
                        case "getDatabaseProductName": return "Spark SQL";
                        case "getDatabaseProductVersion": return spark.version();
                        case "getDriverName": return "itersnap SparkDataSource";
                        case "getDriverVersion": return "1";
                        case "getURL": return null;
                        case "getUserName": return spark.sparkContext().sparkUser();
                        case "getConnection": return connection;
                        case "getIdentifierQuoteString": return "`";
                        case "storesLowerCaseIdentifiers": case "storesLowerCaseQuotedIdentifiers": return true;
                        case "storesUpperCaseIdentifiers": case "storesUpperCaseQuotedIdentifiers":
                        case "storesMixedCaseIdentifiers": case "storesMixedCaseQuotedIdentifiers":
                        case "supportsMixedCaseIdentifiers": case "supportsMixedCaseQuotedIdentifiers":
                        case "supportsTransactions": case "supportsMultipleTransactions":
                        case "dataDefinitionCausesTransactionCommit": case "isReadOnly":
                            return false;
                        case "getDefaultTransactionIsolation": return Connection.TRANSACTION_NONE;
                        case "getTables":
                            return tables((String) args[0], (String) args[1], (String) args[2]);
                        case "unwrap": throw new SQLException("not a wrapper for " + args[0]);
                        case "isWrapperFor": return false;
                        case "hashCode": return System.identityHashCode(proxy);
                        case "equals": return proxy == args[0];
                        case "toString": return "SparkDatabaseMetaData[" + spark + "]";
                        default:
                            throw new SQLFeatureNotSupportedException("DatabaseMetaData." + method.getName()
                                    + " is not supported on Spark");
                    }
                });
    }

    /**
     * One row (TABLE_CAT, TABLE_SCHEM, TABLE_NAME, TABLE_TYPE, REMARKS: the table's comment) when the table exists,
     * else none: looked up in {@code catalog}, or in the data source's current catalog when it is null (never in any
     * catalog).
     */
    private ResultSet tables(String catalog, String schema, String table) throws SQLException {
        checkOpen();
        String c = catalog != null ? catalog : scope.catalog();
        String s = schema != null ? schema : scope.schema();
        String qualified = quote(c) + "." + quote(s) + "." + quote(table);
        String[] comment = new String[1];
        boolean exists = scope.within(spark -> {
            try {
                boolean found = spark.catalog().tableExists(qualified);
                if (found) {
                    comment[0] = spark.catalog().getTable(qualified).description();
                }
                return found;
            } catch (Exception e) { // AnalysisException is a checked exception to Java
                throw SparkSql.translate(e);
            }
        });
        List<SparkResultSet.Column> columns = new ArrayList<>();
        for (String name : List.of("TABLE_CAT", "TABLE_SCHEM", "TABLE_NAME", "TABLE_TYPE", "REMARKS")) {
            columns.add(new SparkResultSet.Column(name, Types.VARCHAR, "STRING", 0, 0));
        }
        List<Object[]> rows = new ArrayList<>();
        if (exists) {
            rows.add(new Object[] {c, s, table, "TABLE", comment[0]});
        }
        return SparkResultSet.of(new SparkResultSet.Table(columns, rows), null, zone());
    }

    private static String quote(String identifier) {
        return '`' + identifier.replace("`", "``") + '`';
    }
}
