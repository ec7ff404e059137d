package dev.itersnap.dialect.databricks;

import dev.itersnap.spi.NamedMarkers;
import org.apache.spark.SparkThrowable;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.sql.SQLException;
import java.sql.SQLTransactionRollbackException;
import java.sql.Types;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.ConcurrentModificationException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Runs SQL with named markers ({@code :_p1 … :_pN}, {@link NamedMarkers}) and JDBC values on a SparkSession, and turns
 * its results and failures into JDBC terms: rows with JDBC column types, update counts from the DML metrics row,
 * {@link SQLException}s naming Spark's error condition. The value set at index i is bound to {@code :_pi} by name:
 * Spark 4.2.0 binds five or more positional values in the wrong order without a word (SPARK-58341).
 */
final class SparkSql {
    /** Columns of the row a Delta DML statement returns, in the order they are preferred as the update count. */
    private static final List<String> COUNT_COLUMNS = List.of("num_affected_rows", "num_inserted_rows");

    private SparkSql() {
    }

    /** Runs one statement with its values bound; DDL and DML run now, a query runs when its rows are read. */
    static Dataset<Row> run(SparkSession spark, String sql, List<Object> binds) throws SQLException {
        try {
            if (binds.isEmpty()) {
                return spark.sql(sql);
            }
            Map<String, Object> args = new LinkedHashMap<>();
            for (int i = 0; i < binds.size(); i++) {
                args.put(NamedMarkers.name(i + 1), toSpark(binds.get(i)));
            }
            return spark.sql(sql, args);
        } catch (Exception e) { // AnalysisException is a checked exception to Java
            throw translate(e);
        }
    }

    /**
     * {@code sql} with each named marker {@code :_pN} replaced by the N-th value as a literal, for a statement that
     * runs outside the window ({@link SparkConnection#outsideWindow}): there the parameter-substitution workaround
     * cannot be set (the session is shared with running statements), and a literal binds the same on every runtime;
     * and for every statement of a session that binds no parameters at all ({@link SparkScope.Binding#LITERALS}).
     * Markers inside quotes, backticks and comments are left alone. Each literal has the type the value binds as and
     * reads the same whatever the session's settings: text, whole numbers, decimals, floating point, booleans, dates,
     * local date-times ({@code TIMESTAMP_NTZ}), instants (microseconds since the epoch), bytes and NULL; anything else
     * is an SQLException.
     */
    static String inline(String sql, List<Object> binds) throws SQLException {
        StringBuilder out = new StringBuilder(sql.length() + 64);
        int n = sql.length();
        int i = 0;
        while (i < n) {
            char c = sql.charAt(i);
            int end;
            if (c == '\'' || c == '"' || c == '`') {
                end = i + 1;
                while (end < n && sql.charAt(end) != c) {
                    end += sql.charAt(end) == '\\' && c != '`' ? 2 : 1;
                }
                end = Math.min(n, end + 1);
            } else if (c == '-' && sql.startsWith("--", i)) {
                end = sql.indexOf('\n', i);
                end = end < 0 ? n : end;
            } else if (c == '/' && sql.startsWith("/*", i)) {
                end = sql.indexOf("*/", i + 2);
                end = end < 0 ? n : end + 2;
            } else if (c == ':' && sql.startsWith("_p", i + 1)) {
                end = i + 3;
                while (end < n && Character.isDigit(sql.charAt(end))) {
                    end++;
                }
                boolean whole = end == n || !Character.isLetterOrDigit(sql.charAt(end)) && sql.charAt(end) != '_';
                if (end > i + 3 && whole) {
                    int index = Integer.parseInt(sql.substring(i + 3, end));
                    if (index < 1 || index > binds.size()) {
                        throw new SQLException("parameter :_p" + index + " has no value", "07001");
                    }
                    out.append(literal(toSpark(binds.get(index - 1))));
                    i = end;
                    continue;
                }
                end = i + 1;
            } else {
                end = i + 1;
            }
            out.append(sql, i, end);
            i = end;
        }
        return out.toString();
    }

    /** Characters a text literal may hold as is, whatever {@code spark.sql.parser.escapedStringLiterals} says. */
    private static final java.util.regex.Pattern PLAIN_TEXT =
            java.util.regex.Pattern.compile("[A-Za-z0-9 _./:@+=,#-]*");

    /** A value as a Spark SQL literal of the type it binds as (see {@link #inline}). */
    static String literal(Object v) throws SQLException {
        if (v == null) {
            return "NULL";
        }
        if (v instanceof String s) {
            if (PLAIN_TEXT.matcher(s).matches()) {
                return "'" + s + "'";
            }
            // any other text as its UTF-8 bytes: no escaping rules involved
            StringBuilder hex = new StringBuilder("CAST(X'");
            for (byte b : s.getBytes(java.nio.charset.StandardCharsets.UTF_8)) {
                hex.append(Character.forDigit((b >> 4) & 0xF, 16)).append(Character.forDigit(b & 0xF, 16));
            }
            return hex.append("' AS STRING)").toString();
        }
        if (v instanceof Long l) {
            return l == Long.MIN_VALUE ? "(-9223372036854775807L - 1L)" : l + "L";
        }
        if (v instanceof Integer x) {
            return x == Integer.MIN_VALUE ? "(-2147483647 - 1)" : x.toString();
        }
        if (v instanceof Short x) {
            return x + "S";
        }
        if (v instanceof Byte x) {
            return x + "Y";
        }
        if (v instanceof BigDecimal d) {
            return d.toPlainString() + "BD";
        }
        if (v instanceof Double || v instanceof Float) { // exact, NaN and infinities included
            return "CAST('" + v + "' AS " + (v instanceof Double ? "DOUBLE" : "FLOAT") + ")";
        }
        if (v instanceof Boolean b) {
            return b ? "TRUE" : "FALSE";
        }
        if (v instanceof java.time.LocalDate d) {
            return "DATE'" + d + "'";
        }
        if (v instanceof LocalDateTime t) {
            return "TIMESTAMP_NTZ'" + t + "'";
        }
        if (v instanceof Instant t) { // microseconds since the epoch: the same instant whatever the session time zone
            long micros = Math.addExact(Math.multiplyExact(t.getEpochSecond(), 1_000_000L), t.getNano() / 1_000);
            return "timestamp_micros(" + micros + "L)";
        }
        if (v instanceof byte[] b) {
            StringBuilder hex = new StringBuilder("X'");
            for (byte x : b) {
                hex.append(Character.forDigit((x >> 4) & 0xF, 16)).append(Character.forDigit(x & 0xF, 16));
            }
            return hex.append("'").toString();
        }
        throw new SQLException("a " + v.getClass().getName() + " value cannot be sent as a literal (only text, "
                + "numbers, booleans, dates, date-times, instants and bytes)", "0A000");
    }

    /** The update count a statement's result reports: affected rows of UPDATE, DELETE and MERGE; else 0. */
    static long updateCount(Dataset<Row> result) throws SQLException {
        List<String> names = List.of(schema(result).fieldNames());
        for (String column : COUNT_COLUMNS) {
            int i = names.indexOf(column);
            if (i >= 0) {
                try {
                    List<Row> rows = result.collectAsList();
                    return rows.isEmpty() || rows.get(0).isNullAt(i) ? 0 : ((Number) rows.get(0).get(i)).longValue();
                } catch (Exception e) { // AnalysisException is a checked exception to Java
                    throw translate(e);
                }
            }
        }
        return 0;
    }

    /**
     * A result's schema. On Spark Connect it is asked of the server (an AnalyzePlan call), so it can fail like the
     * statement: an analysis error there (checked to Java, so it would escape a JDBC facade as an
     * UndeclaredThrowableException) or a lost connection become the SQLException {@link #translate} makes.
     */
    static org.apache.spark.sql.types.StructType schema(Dataset<Row> result) throws SQLException {
        try {
            return result.schema();
        } catch (Exception e) { // AnalysisException is a checked exception to Java
            throw translate(e);
        }
    }

    /** Reads a query's rows (at most {@code maxRows} when positive) into a JDBC result set. */
    static SparkResultSet.Table read(Dataset<Row> result, int maxRows, ZoneId zone) throws SQLException {
        List<SparkResultSet.Column> columns = new ArrayList<>();
        for (StructField f : schema(result).fields()) {
            columns.add(column(f));
        }
        List<Row> rows;
        try {
            rows = maxRows > 0 ? result.limit(maxRows).collectAsList() : result.collectAsList();
        } catch (Exception e) { // AnalysisException is a checked exception to Java
            throw translate(e);
        }
        List<Object[]> out = new ArrayList<>(rows.size());
        for (Row r : rows) {
            Object[] values = new Object[columns.size()];
            for (int i = 0; i < values.length; i++) {
                values[i] = r.isNullAt(i) ? null : fromSpark(r.get(i), zone);
            }
            out.add(values);
        }
        return new SparkResultSet.Table(columns, out);
    }

    /** A column as JDBC describes it. TIMESTAMP (an instant shown in the session time zone) reads as local time. */
    static SparkResultSet.Column column(StructField f) {
        DataType t = f.dataType();
        int jdbc;
        int precision = 0;
        int scale = 0;
        if (t instanceof StringType) {
            jdbc = Types.VARCHAR;
        } else if (t instanceof IntegerType) {
            jdbc = Types.INTEGER;
            precision = 10;
        } else if (t instanceof LongType) {
            jdbc = Types.BIGINT;
            precision = 19;
        } else if (t instanceof ShortType) {
            jdbc = Types.SMALLINT;
            precision = 5;
        } else if (t instanceof ByteType) {
            jdbc = Types.TINYINT;
            precision = 3;
        } else if (t instanceof DecimalType d) {
            jdbc = Types.DECIMAL;
            precision = d.precision();
            scale = d.scale();
        } else if (t instanceof DoubleType) {
            jdbc = Types.DOUBLE;
            precision = 15;
        } else if (t instanceof FloatType) {
            jdbc = Types.REAL;
            precision = 7;
        } else if (t instanceof BooleanType) {
            jdbc = Types.BOOLEAN;
        } else if (t instanceof DateType) {
            jdbc = Types.DATE;
            precision = 10;
        } else if (t instanceof TimestampType || t instanceof TimestampNTZType) {
            jdbc = Types.TIMESTAMP;
            precision = 26;
            scale = 6;
        } else if (t instanceof BinaryType) {
            jdbc = Types.VARBINARY;
        } else {
            jdbc = Types.OTHER;
        }
        return new SparkResultSet.Column(f.name(), jdbc, t.sql(), precision, scale);
    }

    /** A JDBC value as Spark binds it: java.time for dates and times (local ones bind as TIMESTAMP_NTZ). */
    static Object toSpark(Object v) {
        if (v instanceof java.sql.Timestamp t) {
            return t.toLocalDateTime();
        }
        if (v instanceof java.sql.Date d) {
            return d.toLocalDate();
        }
        if (v instanceof java.sql.Time t) {
            return t.toString();
        }
        if (v instanceof OffsetDateTime o) {
            return o.toInstant();
        }
        if (v instanceof ZonedDateTime z) {
            return z.toInstant();
        }
        if (v instanceof java.util.Date d) {
            return d.toInstant();
        }
        if (v instanceof BigInteger b) {
            return new BigDecimal(b);
        }
        if (v instanceof Character || v instanceof java.util.UUID) {
            return v.toString();
        }
        return v;
    }

    /** A Spark value as the result set keeps it: java.time local values, numbers, strings; anything else as text. */
    static Object fromSpark(Object v, ZoneId zone) {
        if (v instanceof Instant i) {
            return LocalDateTime.ofInstant(i, zone);
        }
        if (v instanceof java.sql.Timestamp t) {
            return LocalDateTime.ofInstant(t.toInstant(), zone);
        }
        if (v instanceof java.sql.Date d) {
            return d.toLocalDate();
        }
        if (v instanceof Number || v instanceof String || v instanceof Boolean || v instanceof byte[]
                || v instanceof java.time.LocalDate || v instanceof LocalDateTime) {
            return v;
        }
        return String.valueOf(v);
    }

    /**
     * The error condition of a Spark failure: {@code getCondition()} from Spark 4.0 on, {@code getErrorClass()} on
     * Spark 3.5 (Databricks Runtime 15.4 and 16.4 LTS), where SparkThrowable has no getCondition.
     */
    static String condition(SparkThrowable t) {
        try {
            return t.getCondition();
        } catch (IncompatibleClassChangeError spark35) { // NoSuchMethodError, AbstractMethodError
            return errorClass(t);
        }
    }

    @SuppressWarnings("deprecation")
    private static String errorClass(SparkThrowable t) {
        return t.getErrorClass();
    }

    /**
     * Error conditions of Delta Lake's optimistic-concurrency conflicts: another writer committed first, and the
     * statement committed nothing (delta-error-classes.json, SQLSTATE 2D521). On a SparkSession the exception is a
     * {@link ConcurrentModificationException}; through Spark Connect (serverless, standard clusters) the client knows
     * no Delta class and the conflict arrives as a plain SparkException carrying only the condition, so the condition
     * is what is recognized.
     */
    private static final List<String> CONFLICT_CONDITIONS = List.of("DELTA_CONCURRENT_", "DELTA_METADATA_CHANGED",
            "DELTA_PROTOCOL_CHANGED");

    /** Whether an error condition is one of Delta's write conflicts ({@link #CONFLICT_CONDITIONS}). */
    static boolean conflictCondition(String condition) {
        return condition != null && CONFLICT_CONDITIONS.stream().anyMatch(condition::startsWith);
    }

    /**
     * A Spark failure as an SQLException: the message starts with the error condition; a write conflict (a
     * ConcurrentModificationException in the chain, or a Delta conflict condition anywhere in it) is an
     * {@link SQLTransactionRollbackException} with SQLSTATE 40001, the state a JDBC caller retries.
     */
    static SQLException translate(Exception e) {
        String condition = null;
        String state = null;
        boolean conflict = false;
        for (Throwable x = e; x != null; x = x.getCause() == x ? null : x.getCause()) {
            if (x instanceof SparkThrowable st) {
                String c = condition(st);
                if (condition == null) {
                    condition = c;
                    state = st.getSqlState();
                }
                conflict |= conflictCondition(c);
            }
            conflict |= x instanceof ConcurrentModificationException;
        }
        String message = String.valueOf(e.getMessage());
        if (condition != null && !message.startsWith("[")) {
            message = "[" + condition + "] " + message;
        }
        return conflict ? new SQLTransactionRollbackException(message, "40001", e)
                : new SQLException(message, state, e);
    }
}
