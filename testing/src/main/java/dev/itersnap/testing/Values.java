package dev.itersnap.testing;

import java.math.BigDecimal;
import java.sql.SQLException;
import java.sql.Types;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/** Converting and comparing values: text to a column's type, database values to comparable Java values, JSON. */
final class Values {
    private Values() {
    }

    /** A value read from the database as a comparable Java value (numbers widened, times as java.time). */
    static Object normalize(Object v) {
        if (v == null) {
            return null;
        }
        if (v instanceof java.sql.Timestamp t) {
            return t.toLocalDateTime();
        }
        if (v instanceof java.sql.Date d) {
            return d.toLocalDate();
        }
        if (v instanceof java.sql.Time t) {
            return t.toLocalTime();
        }
        if (v instanceof OffsetDateTime o) {
            return o.withOffsetSameInstant(ZoneOffset.UTC);
        }
        if (v instanceof java.time.ZonedDateTime z) {
            return z.toOffsetDateTime().withOffsetSameInstant(ZoneOffset.UTC);
        }
        if (v instanceof Integer || v instanceof Short || v instanceof Byte) {
            return ((Number) v).longValue();
        }
        if (v instanceof java.math.BigInteger b) {
            return new BigDecimal(b);
        }
        if (v instanceof BigDecimal b) {
            return b; // as the column holds it (10.00, not 1E+1); expected values compare by value (matches)
        }
        if (v instanceof java.sql.Clob clob) {
            try {
                return clob.getSubString(1, (int) clob.length());
            } catch (SQLException e) {
                throw new IllegalStateException("cannot read a CLOB: " + e.getMessage(), e);
            }
        }
        return v;
    }

    /** Text given for a column of JDBC type {@code sqlType} as the Java value to bind. */
    static Object fromText(String text, int sqlType, String column) {
        String t = text.strip();
        try {
            return switch (sqlType) {
                case Types.TINYINT, Types.SMALLINT, Types.INTEGER -> Integer.valueOf(t);
                case Types.BIGINT -> Long.valueOf(t);
                case Types.DECIMAL, Types.NUMERIC -> new BigDecimal(t);
                case Types.REAL, Types.FLOAT, Types.DOUBLE -> Double.valueOf(t);
                case Types.BOOLEAN, Types.BIT -> Boolean.valueOf(t);
                case Types.DATE -> LocalDate.parse(t);
                case Types.TIME -> LocalTime.parse(t);
                case Types.TIMESTAMP -> dateTime(t);
                case Types.TIMESTAMP_WITH_TIMEZONE -> OffsetDateTime.parse(t.replace(' ', 'T'));
                default -> text;
            };
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("value '" + text + "' does not fit column " + column + " ("
                    + jdbcTypeName(sqlType) + "): " + e.getMessage(), e);
        }
    }

    private static LocalDateTime dateTime(String t) {
        if (t.length() == 10) {
            return LocalDate.parse(t).atStartOfDay();
        }
        return LocalDateTime.parse(t.replace(' ', 'T'));
    }

    private static String jdbcTypeName(int sqlType) {
        try {
            return java.sql.JDBCType.valueOf(sqlType).getName();
        } catch (IllegalArgumentException e) {
            return "type " + sqlType;
        }
    }

    /**
     * True when an expected value (as a test writes it) equals an actual one (as {@link #normalize} returns it):
     * numbers by value, text against a date or time by its ISO form ({@code "2024-03-01 09:30"} or
     * {@code "2024-03-01T09:30"}; a date alone means midnight for a timestamp), anything else by equals.
     */
    static boolean matches(Object expected, Object actual) {
        Object e = normalize(expected);
        if (e == null || actual == null) {
            return e == null && actual == null;
        }
        if (e instanceof Number n && actual instanceof Number a) {
            return new BigDecimal(n.toString()).compareTo(new BigDecimal(a.toString())) == 0;
        }
        if (e instanceof String s && !(actual instanceof String)) {
            try {
                if (actual instanceof LocalDateTime) {
                    return dateTime(s.strip()).equals(actual);
                }
                if (actual instanceof LocalDate) {
                    return LocalDate.parse(s.strip()).equals(actual);
                }
                if (actual instanceof Number a) {
                    return new BigDecimal(s.strip()).compareTo(new BigDecimal(a.toString())) == 0;
                }
            } catch (RuntimeException notParsable) {
                return false;
            }
            return s.equals(String.valueOf(actual));
        }
        if (e instanceof LocalDate d && actual instanceof LocalDateTime) {
            return d.atStartOfDay().equals(actual);
        }
        return Objects.equals(e, actual);
    }

    /** A flat JSON value: object, array, string, number, true, false or null (what the error log and
     * {@code changed_attributes} hold). Objects keep their order, keys lower-cased. */
    static Object parseJson(String json) {
        int[] at = {0};
        Object v = json(json, at);
        skip(json, at);
        if (at[0] != json.length()) {
            throw new IllegalArgumentException("trailing text in JSON at " + at[0] + ": " + json);
        }
        return v;
    }

    private static Object json(String s, int[] at) {
        skip(s, at);
        if (at[0] >= s.length()) {
            throw new IllegalArgumentException("JSON ends early: " + s);
        }
        char c = s.charAt(at[0]);
        if (c == '{') {
            Map<String, Object> map = new LinkedHashMap<>();
            at[0]++;
            skip(s, at);
            if (s.charAt(at[0]) == '}') {
                at[0]++;
                return map;
            }
            while (true) {
                skip(s, at);
                String key = string(s, at);
                skip(s, at);
                expect(s, at, ':');
                map.put(key.toLowerCase(java.util.Locale.ROOT), json(s, at));
                skip(s, at);
                if (s.charAt(at[0]) == ',') {
                    at[0]++;
                } else {
                    expect(s, at, '}');
                    return map;
                }
            }
        }
        if (c == '[') {
            List<Object> list = new ArrayList<>();
            at[0]++;
            skip(s, at);
            if (s.charAt(at[0]) == ']') {
                at[0]++;
                return list;
            }
            while (true) {
                list.add(json(s, at));
                skip(s, at);
                if (s.charAt(at[0]) == ',') {
                    at[0]++;
                } else {
                    expect(s, at, ']');
                    return list;
                }
            }
        }
        if (c == '"') {
            return string(s, at);
        }
        int start = at[0];
        while (at[0] < s.length() && ",]} \n\r\t".indexOf(s.charAt(at[0])) < 0) {
            at[0]++;
        }
        String word = s.substring(start, at[0]);
        return switch (word) {
            case "null" -> null;
            case "true" -> Boolean.TRUE;
            case "false" -> Boolean.FALSE;
            default -> normalize(new BigDecimal(word));
        };
    }

    private static String string(String s, int[] at) {
        expect(s, at, '"');
        StringBuilder out = new StringBuilder();
        while (true) {
            char c = s.charAt(at[0]++);
            if (c == '"') {
                return out.toString();
            }
            if (c == '\\') {
                char e = s.charAt(at[0]++);
                switch (e) {
                    case 'n' -> out.append('\n');
                    case 't' -> out.append('\t');
                    case 'r' -> out.append('\r');
                    case 'b' -> out.append('\b');
                    case 'f' -> out.append('\f');
                    case 'u' -> {
                        out.append((char) Integer.parseInt(s.substring(at[0], at[0] + 4), 16));
                        at[0] += 4;
                    }
                    default -> out.append(e);
                }
            } else {
                out.append(c);
            }
        }
    }

    private static void expect(String s, int[] at, char c) {
        if (at[0] >= s.length() || s.charAt(at[0]) != c) {
            throw new IllegalArgumentException("expected '" + c + "' at " + at[0] + " in JSON: " + s);
        }
        at[0]++;
    }

    private static void skip(String s, int[] at) {
        while (at[0] < s.length() && Character.isWhitespace(s.charAt(at[0]))) {
            at[0]++;
        }
    }
}
