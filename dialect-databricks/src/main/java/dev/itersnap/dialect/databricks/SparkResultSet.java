package dev.itersnap.dialect.databricks;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.math.BigDecimal;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Statement;
import java.sql.Types;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.util.List;
import java.util.Locale;

/**
 * A forward-only, read-only JDBC {@link ResultSet} over rows already read from Spark (the engine's queries return
 * few rows: sequences, ledger entries, counts). Dates read as {@link java.sql.Date}, timestamps as
 * {@link java.sql.Timestamp} in the session's time zone, or as java.time through {@code getObject(i, Class)}.
 */
final class SparkResultSet implements InvocationHandler {
    /** A column as JDBC describes it. */
    record Column(String name, int jdbcType, String typeName, int precision, int scale) {
    }

    /** Columns and rows. */
    record Table(List<Column> columns, List<Object[]> rows) {
    }

    private final Table table;
    private final Statement statement;
    private final ZoneId zone;
    private int row = -1;
    private boolean wasNull;
    private boolean closed;

    private SparkResultSet(Table table, Statement statement, ZoneId zone) {
        this.table = table;
        this.statement = statement;
        this.zone = zone;
    }

    static ResultSet of(Table table, Statement statement, ZoneId zone) {
        return (ResultSet) Proxy.newProxyInstance(SparkResultSet.class.getClassLoader(),
                new Class<?>[] {ResultSet.class}, new SparkResultSet(table, statement, zone));
    }

    @Override
    public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
        String name = method.getName();
        switch (name) {
            case "next":
                checkOpen();
                if (row < table.rows().size()) {
                    row++;
                }
                return row < table.rows().size();
            case "close":
                closed = true;
                return null;
            case "isClosed": return closed;
            case "wasNull": return wasNull;
            case "getMetaData": return metaData(table.columns());
            case "findColumn": return findColumn((String) args[0]);
            case "getStatement": return statement;
            case "getRow": return row < table.rows().size() ? row + 1 : 0;
            case "isBeforeFirst": return row < 0 && !table.rows().isEmpty();
            case "isAfterLast": return row >= table.rows().size() && !table.rows().isEmpty();
            case "getType": return ResultSet.TYPE_FORWARD_ONLY;
            case "getConcurrency": return ResultSet.CONCUR_READ_ONLY;
            case "getHoldability": return ResultSet.CLOSE_CURSORS_AT_COMMIT;
            case "getFetchSize": return table.rows().size();
            case "setFetchSize": case "clearWarnings": return null;
            case "getWarnings": return null;
            case "unwrap": throw new SQLException("not a wrapper for " + args[0]);
            case "isWrapperFor": return false;
            case "hashCode": return System.identityHashCode(proxy);
            case "equals": return proxy == args[0];
            case "toString": return "SparkResultSet" + table.columns().stream().map(Column::name).toList();
            default:
                if (name.startsWith("get") && args != null && args.length >= 1
                        && (args[0] instanceof Integer || args[0] instanceof String)) {
                    int i = args[0] instanceof String label ? findColumn(label) : (Integer) args[0];
                    Object v = value(i);
                    return name.equals("getObject") && args.length == 2 && args[1] instanceof Class<?> type
                            ? as(v, type) : get(name, v, table.columns().get(i - 1));
                }
                throw new SQLFeatureNotSupportedException("ResultSet." + name + " is not supported on Spark");
        }
    }

    private void checkOpen() throws SQLException {
        if (closed) {
            throw new SQLException("result set is closed");
        }
    }

    private int findColumn(String label) throws SQLException {
        for (int i = 0; i < table.columns().size(); i++) {
            if (table.columns().get(i).name().equalsIgnoreCase(label)) {
                return i + 1;
            }
        }
        throw new SQLException("no column " + label + " in " + table.columns().stream().map(Column::name).toList());
    }

    private Object value(int i) throws SQLException {
        checkOpen();
        if (row < 0 || row >= table.rows().size()) {
            throw new SQLException("no current row");
        }
        if (i < 1 || i > table.columns().size()) {
            throw new SQLException("column index " + i + " out of range 1.." + table.columns().size());
        }
        Object v = table.rows().get(row)[i - 1];
        wasNull = v == null;
        return v;
    }

    /** The typed getters: NULL is null for objects and 0 / false for primitives, as JDBC says. */
    private Object get(String getter, Object v, Column c) throws SQLException {
        switch (getter) {
            case "getObject":
                return v instanceof LocalDate d ? java.sql.Date.valueOf(d)
                        : v instanceof LocalDateTime t ? java.sql.Timestamp.valueOf(t) : v;
            case "getString": return v == null ? null : v instanceof byte[] b ? new String(b) : v.toString();
            case "getLong": return v == null ? 0L : number(v, c).longValue();
            case "getInt": return v == null ? 0 : number(v, c).intValue();
            case "getShort": return v == null ? (short) 0 : number(v, c).shortValue();
            case "getByte": return v == null ? (byte) 0 : number(v, c).byteValue();
            case "getDouble": return v == null ? 0d : number(v, c).doubleValue();
            case "getFloat": return v == null ? 0f : number(v, c).floatValue();
            case "getBigDecimal": return v == null ? null : v instanceof BigDecimal b ? b : new BigDecimal(v.toString());
            case "getBoolean":
                return v != null && (v instanceof Boolean b ? b : v instanceof Number n ? n.intValue() != 0
                        : Boolean.parseBoolean(v.toString()));
            case "getDate": return v == null ? null : java.sql.Date.valueOf(as(v, LocalDate.class));
            case "getTimestamp": return v == null ? null : java.sql.Timestamp.valueOf(as(v, LocalDateTime.class));
            case "getBytes": return v == null ? null : v instanceof byte[] b ? b : v.toString().getBytes();
            default:
                throw new SQLFeatureNotSupportedException("ResultSet." + getter + " is not supported on Spark");
        }
    }

    private static Number number(Object v, Column c) throws SQLException {
        if (v instanceof Number n) {
            return n;
        }
        if (v instanceof Boolean b) {
            return b ? 1 : 0;
        }
        try {
            return new BigDecimal(v.toString().strip());
        } catch (NumberFormatException e) {
            throw new SQLException("column " + c.name() + " value '" + v + "' is not a number", "22018");
        }
    }

    private <T> T as(Object v, Class<T> type) throws SQLException {
        if (v == null) {
            return null;
        }
        Object out;
        if (type.isInstance(v)) {
            out = v;
        } else if (type == LocalDate.class && v instanceof LocalDateTime t) {
            out = t.toLocalDate();
        } else if (type == LocalDateTime.class && v instanceof LocalDate d) {
            out = d.atStartOfDay();
        } else if (type == OffsetDateTime.class && v instanceof LocalDateTime t) {
            out = t.atZone(zone).toOffsetDateTime();
        } else if (type == Instant.class && v instanceof LocalDateTime t) {
            out = t.atZone(zone).toInstant();
        } else if (type == java.sql.Timestamp.class && v instanceof LocalDateTime t) {
            out = java.sql.Timestamp.valueOf(t);
        } else if (type == java.sql.Date.class && v instanceof LocalDate d) {
            out = java.sql.Date.valueOf(d);
        } else if (type == String.class) {
            out = v.toString();
        } else if (type == Long.class && v instanceof Number n) {
            out = n.longValue();
        } else if (type == Integer.class && v instanceof Number n) {
            out = n.intValue();
        } else if (type == BigDecimal.class && v instanceof Number n) {
            out = new BigDecimal(n.toString());
        } else if (type == Double.class && v instanceof Number n) {
            out = n.doubleValue();
        } else if (type == LocalDate.class && v instanceof String s) {
            out = LocalDate.parse(s);
        } else {
            throw new SQLException("cannot read a " + v.getClass().getSimpleName() + " as " + type.getName(), "22018");
        }
        return type.cast(out);
    }

    /** The columns as {@link ResultSetMetaData}. */
    static ResultSetMetaData metaData(List<Column> columns) {
        return (ResultSetMetaData) Proxy.newProxyInstance(SparkResultSet.class.getClassLoader(),
                new Class<?>[] {ResultSetMetaData.class}, (proxy, method, args) -> {
                    String name = method.getName();
                    if (name.equals("getColumnCount")) {
                        return columns.size();
                    }
                    if (name.equals("unwrap")) {
                        throw new SQLException("not a wrapper for " + args[0]);
                    }
                    if (name.equals("isWrapperFor")) {
                        return false;
                    }
                    if (name.equals("hashCode")) {
                        return System.identityHashCode(proxy);
                    }
                    if (name.equals("equals")) {
                        return proxy == args[0];
                    }
                    if (name.equals("toString")) {
                        return "SparkResultSetMetaData" + columns;
                    }
                    int i = (Integer) args[0];
                    if (i < 1 || i > columns.size()) {
                        throw new SQLException("column index " + i + " out of range 1.." + columns.size());
                    }
                    Column c = columns.get(i - 1);
                    switch (name) {
                        case "getColumnLabel": case "getColumnName": return c.name();
                        case "getColumnType": return c.jdbcType();
                        case "getColumnTypeName": return c.typeName();
                        case "getPrecision": return c.precision();
                        case "getScale": return c.scale();
                        case "isNullable": return ResultSetMetaData.columnNullableUnknown;
                        case "getColumnClassName": return className(c.jdbcType());
                        case "getColumnDisplaySize": return Math.max(c.precision(), c.name().length());
                        case "isSigned":
                            return c.jdbcType() != Types.VARCHAR && c.jdbcType() != Types.BOOLEAN
                                    && c.typeName().toUpperCase(Locale.ROOT).matches("[A-Z]*INT|DECIMAL.*|DOUBLE|FLOAT");
                        case "getSchemaName": case "getTableName": case "getCatalogName": return "";
                        case "isAutoIncrement": case "isCaseSensitive": case "isCurrency": case "isWritable":
                        case "isDefinitelyWritable":
                            return false;
                        case "isSearchable": case "isReadOnly":
                            return true;
                        default:
                            throw new SQLFeatureNotSupportedException("ResultSetMetaData." + name);
                    }
                });
    }

    private static String className(int jdbcType) {
        switch (jdbcType) {
            case Types.INTEGER: return Integer.class.getName();
            case Types.BIGINT: return Long.class.getName();
            case Types.SMALLINT: return Short.class.getName();
            case Types.TINYINT: return Byte.class.getName();
            case Types.DECIMAL: return BigDecimal.class.getName();
            case Types.DOUBLE: return Double.class.getName();
            case Types.REAL: return Float.class.getName();
            case Types.BOOLEAN: return Boolean.class.getName();
            case Types.DATE: return java.sql.Date.class.getName();
            case Types.TIMESTAMP: return java.sql.Timestamp.class.getName();
            case Types.VARBINARY: return byte[].class.getName();
            default: return String.class.getName();
        }
    }
}
