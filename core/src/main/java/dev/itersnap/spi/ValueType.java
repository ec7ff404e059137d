package dev.itersnap.spi;

import java.math.BigDecimal;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Locale;

/**
 * The Java side of a sequence or {@code updated_at} column: how values are read, compared, written as canonical text
 * (ledger) and parsed back. Values are LocalDate, LocalDateTime, OffsetDateTime (UTC), Long, BigDecimal or String.
 */
public enum ValueType {
    DATE, TIMESTAMP, TIMESTAMP_TZ, INTEGER, DECIMAL, STRING, OTHER;

    /** Classifies a JDBC column type. */
    public static ValueType of(int jdbcType, String typeName) {
        String name = typeName == null ? "" : typeName.toLowerCase(Locale.ROOT);
        if (name.equals("timestamptz") || name.contains("with time zone") && name.startsWith("timestamp")) {
            return TIMESTAMP_TZ;
        }
        switch (jdbcType) {
            case Types.DATE:
                return DATE;
            case Types.TIMESTAMP:
                return TIMESTAMP;
            case Types.TIMESTAMP_WITH_TIMEZONE:
                return TIMESTAMP_TZ;
            case Types.TINYINT: case Types.SMALLINT: case Types.INTEGER: case Types.BIGINT:
                return INTEGER;
            case Types.NUMERIC: case Types.DECIMAL:
                return DECIMAL;
            case Types.CHAR: case Types.VARCHAR: case Types.NCHAR: case Types.NVARCHAR: case Types.LONGVARCHAR:
            case Types.LONGNVARCHAR:
                return STRING;
            default:
                return OTHER;
        }
    }

    /** True for DATE and the timestamp types. */
    public boolean temporal() {
        return this == DATE || this == TIMESTAMP || this == TIMESTAMP_TZ;
    }

    /** Whether batches can be ordered by a column of this type. */
    public boolean orderable() {
        return this != OTHER;
    }

    /** Reads column {@code i}; null for SQL NULL. */
    public Object read(ResultSet rs, int i) throws SQLException {
        Object v;
        switch (this) {
            case DATE: v = SqlValues.readLocalDate(rs, i); break;
            case TIMESTAMP: v = SqlValues.readLocalDateTime(rs, i); break;
            case TIMESTAMP_TZ: v = rs.getObject(i, OffsetDateTime.class); break;
            case INTEGER: long l = rs.getLong(i); v = rs.wasNull() ? null : l; break;
            case DECIMAL: v = rs.getBigDecimal(i); break;
            case STRING: v = rs.getString(i); break;
            default: v = rs.getObject(i);
        }
        return normalize(v);
    }

    /** Canonical form, so that equal values are {@code equals}. */
    public Object normalize(Object v) {
        if (v == null) {
            return null;
        }
        if (v instanceof OffsetDateTime o) {
            return o.withOffsetSameInstant(ZoneOffset.UTC);
        }
        if (v instanceof BigDecimal b) {
            return b.signum() == 0 ? BigDecimal.ZERO : b.stripTrailingZeros();
        }
        return v;
    }

    /** Canonical text of a value (ISO-8601, plain digits). */
    public String format(Object v) {
        return text(v);
    }

    /** Canonical text of any sequence or time value (the form the ledger stores), whatever its type. */
    public static String text(Object v) {
        return dev.itersnap.core.SequenceText.of(v);
    }

    /**
     * Reads a value given by a user or stored as text: canonical text, or a Java value of a compatible type.
     *
     * @throws IllegalArgumentException when it cannot be read as this type
     */
    public Object coerce(Object v) {
        if (v == null) {
            return null;
        }
        try {
            switch (this) {
                case DATE:
                    if (v instanceof LocalDate) return v;
                    if (v instanceof java.sql.Date d) return d.toLocalDate();
                    return LocalDate.parse(v.toString().trim());
                case TIMESTAMP:
                    if (v instanceof LocalDateTime) return v;
                    if (v instanceof java.sql.Timestamp t) return t.toLocalDateTime();
                    if (v instanceof LocalDate d) return d.atStartOfDay();
                    return LocalDateTime.parse(v.toString().trim().replace(' ', 'T'));
                case TIMESTAMP_TZ:
                    if (v instanceof OffsetDateTime o) return normalize(o);
                    return normalize(OffsetDateTime.parse(v.toString().trim().replace(' ', 'T')));
                case INTEGER:
                    if (v instanceof Number n && !(v instanceof BigDecimal) && !(v instanceof Double) && !(v instanceof Float)) {
                        return n.longValue();
                    }
                    return new BigDecimal(v.toString().trim()).longValueExact();
                case DECIMAL:
                    return normalize(new BigDecimal(v.toString().trim()));
                case STRING:
                    return v.toString();
                default:
                    return v;
            }
        } catch (RuntimeException e) {
            String type = name().toLowerCase(Locale.ROOT).replace('_', ' ');
            throw new IllegalArgumentException("'" + v + "' is not " + (type.startsWith("i") ? "an " : "a ") + type
                    + " value", e);
        }
    }

    /** Compares two non-null values of this type; strings by code point. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    public int compare(Object a, Object b) {
        if (a instanceof String x && b instanceof String y) {
            return codePointCompare(x, y);
        }
        return ((Comparable) a).compareTo(b);
    }

    private static int codePointCompare(String x, String y) {
        int i = 0;
        int j = 0;
        while (i < x.length() && j < y.length()) {
            int a = x.codePointAt(i);
            int b = y.codePointAt(j);
            if (a != b) {
                return Integer.compare(a, b);
            }
            i += Character.charCount(a);
            j += Character.charCount(b);
        }
        return Integer.compare(x.length() - i, y.length() - j);
    }

    /**
     * Converts a sequence value of type {@code from} into a value of this type, for deletion times; null when
     * there is no sensible conversion.
     */
    public Object convertTemporal(ValueType from, Object v) {
        if (v == null || !temporal() || !from.temporal()) {
            return null;
        }
        if (from == this) {
            return v;
        }
        LocalDateTime ldt = v instanceof LocalDate d ? d.atStartOfDay()
                : v instanceof LocalDateTime t ? t : ((OffsetDateTime) v).toLocalDateTime();
        switch (this) {
            case DATE: return ldt.toLocalDate();
            case TIMESTAMP: return ldt;
            default: return v instanceof OffsetDateTime o ? o : ldt.atOffset(ZoneOffset.UTC);
        }
    }
}
