package dev.itersnap.spi;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Timestamp;
import java.sql.Types;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;

/**
 * Typed binding and reading of the values itersnap binds: every value goes through the setter of its SQL type and
 * comes back through the getter of its type, never through a driver's type inference ({@code setObject(i, v)}). The
 * Databricks JDBC driver (3.4.x) infers only Long, Short, Byte, Float, String, Integer, Double and the {@code java.sql}
 * date/time classes and refuses Boolean and BigDecimal there; PostgreSQL and H2 accept the typed setters too.
 *
 * <table>
 *   <caption>Setters by Java type</caption>
 *   <tr><th>value</th><th>setter</th></tr>
 *   <tr><td>null</td><td>{@code setNull(i, Types.NULL)}; a driver that refuses an untyped NULL gets
 *   {@code setNull(i, Types.VARCHAR)} (the nullable values the engine binds are texts)</td></tr>
 *   <tr><td>Boolean, Integer, Long, Short, Byte, Double, Float, String, BigDecimal</td><td>setBoolean, setInt,
 *   setLong, setShort, setByte, setDouble, setFloat, setString, setBigDecimal</td></tr>
 *   <tr><td>BigInteger</td><td>setBigDecimal</td></tr>
 *   <tr><td>LocalDate</td><td>{@code setObject(i, v, Types.DATE)}</td></tr>
 *   <tr><td>LocalDateTime</td><td>{@code setObject(i, v, Types.TIMESTAMP)}: never through {@link Timestamp}, whose
 *   conversion depends on the JVM's time zone (a local time in a daylight-saving gap moves by an hour)</td></tr>
 *   <tr><td>OffsetDateTime, Instant</td><td>{@code setObject(i, v, Types.TIMESTAMP_WITH_TIMEZONE)} (an Instant at
 *   UTC)</td></tr>
 *   <tr><td>java.sql.Date, java.sql.Timestamp, byte[]</td><td>setDate, setTimestamp, setBytes</td></tr>
 * </table>
 */
public final class SqlValues {
    /**
     * Most values one statement may bind: the Databricks SQL endpoint accepts at most 256 parameters per statement
     * ({@code MAX_QUERY_PARAMETERS}); statements that bind a list (the ledger's forget) split it to stay below.
     */
    public static final int MAX_PARAMETERS = 256;

    private SqlValues() {
    }

    /** Binds {@code value} to parameter {@code index} (from 1) with the setter of its SQL type (see the class comment). */
    public static void bind(PreparedStatement ps, int index, Object value) throws SQLException {
        if (value == null) {
            try {
                ps.setNull(index, Types.NULL);
            } catch (SQLFeatureNotSupportedException e) {
                ps.setNull(index, Types.VARCHAR);
            }
        } else if (value instanceof String s) {
            ps.setString(index, s);
        } else if (value instanceof Boolean b) {
            ps.setBoolean(index, b);
        } else if (value instanceof Long l) {
            ps.setLong(index, l);
        } else if (value instanceof Integer n) {
            ps.setInt(index, n);
        } else if (value instanceof Short n) {
            ps.setShort(index, n);
        } else if (value instanceof Byte n) {
            ps.setByte(index, n);
        } else if (value instanceof BigDecimal d) {
            ps.setBigDecimal(index, d);
        } else if (value instanceof BigInteger d) {
            ps.setBigDecimal(index, new BigDecimal(d));
        } else if (value instanceof Double d) {
            ps.setDouble(index, d);
        } else if (value instanceof Float f) {
            ps.setFloat(index, f);
        } else if (value instanceof LocalDate d) {
            ps.setObject(index, d, Types.DATE);
        } else if (value instanceof LocalDateTime t) {
            ps.setObject(index, t, Types.TIMESTAMP);
        } else if (value instanceof OffsetDateTime t) {
            ps.setObject(index, t, Types.TIMESTAMP_WITH_TIMEZONE);
        } else if (value instanceof Instant t) {
            ps.setObject(index, t.atOffset(ZoneOffset.UTC), Types.TIMESTAMP_WITH_TIMEZONE);
        } else if (value instanceof java.sql.Date d) {
            ps.setDate(index, d);
        } else if (value instanceof Timestamp t) {
            ps.setTimestamp(index, t);
        } else if (value instanceof byte[] b) {
            ps.setBytes(index, b);
        } else {
            ps.setObject(index, value);
        }
    }

    /**
     * Reads a TIMESTAMP column as the local date-time the database shows: {@code getObject(i, LocalDateTime.class)}
     * where the driver supports it; a driver that answers with a {@link Timestamp} (whose wall-clock fields are the
     * value's) or with text (the Databricks driver 3.4.x) is converted without the JVM's time zone.
     */
    public static LocalDateTime readLocalDateTime(ResultSet rs, int i) throws SQLException {
        Object v;
        try {
            v = rs.getObject(i, LocalDateTime.class);
        } catch (SQLFeatureNotSupportedException | ClassCastException e) {
            Timestamp t = rs.getTimestamp(i);
            return t == null ? null : t.toLocalDateTime();
        } catch (SQLException e) {
            String s = rs.getString(i);
            return s == null ? null : parseLocalDateTime(s);
        }
        if (v == null || v instanceof LocalDateTime) {
            return (LocalDateTime) v;
        }
        if (v instanceof Timestamp t) {
            return t.toLocalDateTime();
        }
        return parseLocalDateTime(v.toString());
    }

    /** Reads a DATE column: {@code getObject(i, LocalDate.class)}, or the driver's Date or text. */
    public static LocalDate readLocalDate(ResultSet rs, int i) throws SQLException {
        Object v;
        try {
            v = rs.getObject(i, LocalDate.class);
        } catch (SQLFeatureNotSupportedException | ClassCastException e) {
            java.sql.Date d = rs.getDate(i);
            return d == null ? null : d.toLocalDate();
        }
        if (v == null || v instanceof LocalDate) {
            return (LocalDate) v;
        }
        if (v instanceof java.sql.Date d) {
            return d.toLocalDate();
        }
        return LocalDate.parse(v.toString().strip().substring(0, 10));
    }

    /** {@code 2024-03-01 06:00:00.123}, {@code 2024-03-01T06:00} and the like, as a LocalDateTime. */
    static LocalDateTime parseLocalDateTime(String text) {
        String t = text.strip();
        return LocalDateTime.parse(t.length() > 10 && t.charAt(10) == ' ' ? t.substring(0, 10) + 'T' + t.substring(11)
                : t);
    }
}
