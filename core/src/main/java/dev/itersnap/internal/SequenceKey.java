package dev.itersnap.internal;

import dev.itersnap.spi.SourceColumn;
import dev.itersnap.spi.ValueType;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/**
 * A {@code sequence_by} of several columns ({@code [file_date, file_no]}): batches are ordered by the first column,
 * then the next on a tie, each compared in its own type. The engine carries such a sequence as one text, the
 * <em>sequence key</em>, whose code point order is the order of the tuples; the dialect computes it in SQL from the
 * source row ({@code SqlSteps.sequenceKey} in the engine) and this class computes the same text from Java values (for a
 * point a user names, or the ledger's text) and reads the values back from it.
 *
 * <p>Each component is written so that text order is value order, with no separator needed:
 * <ul>
 *   <li>integers: {@code p} and the value in 19 digits, or {@code n} and the value plus 10<sup>19</sup> in 19 digits
 *   for a negative one;</li>
 *   <li>decimals (precision at most 18): the value times 10<sup>scale</sup> as an integer;</li>
 *   <li>dates: the days since 1970-01-01 as an integer; timestamps: the microseconds since 1970-01-01 00:00 (UTC for a
 *   timestamp with time zone) as an integer;</li>
 *   <li>strings: the text with U+0001 written as U+0001 U+0003 and U+0000 as U+0001 U+0002, ended by U+0001
 *   U+0001 (which sorts before any character).</li>
 * </ul>
 * A NULL component makes the whole key NULL (the row has no sequence).
 *
 * <p>The readable form ({@link #text}), which the ledger, the error log, events and messages show, is the tuple
 * {@code (2024-01-05, 3)}: each value in its canonical text ({@link ValueType#format}), strings in single quotes.
 */
public final class SequenceKey {
    private static final BigInteger SHIFT = BigInteger.TEN.pow(19);
    private static final int WIDTH = 19;

    private final List<String> columns;
    private final List<ValueType> types;
    private final List<Integer> scales;

    private SequenceKey(List<String> columns, List<ValueType> types, List<Integer> scales) {
        this.columns = List.copyOf(columns);
        this.types = List.copyOf(types);
        this.scales = List.copyOf(scales);
    }

    /**
     * The key of these source columns, in order.
     *
     * @throws IllegalArgumentException naming the column, for a type a component cannot have: one that cannot order
     *                                  batches, a decimal whose precision is unknown or above 18, a timestamp with
     *                                  more than microseconds
     */
    public static SequenceKey of(List<SourceColumn> parts) {
        List<String> names = new ArrayList<>();
        List<ValueType> types = new ArrayList<>();
        List<Integer> scales = new ArrayList<>();
        for (SourceColumn c : parts) {
            ValueType t = c.valueType();
            String what = "column '" + c.name() + "' has type " + c.typeName();
            if (!t.orderable()) {
                throw new IllegalArgumentException(what + ", which is not a DATE, TIMESTAMP, integer, decimal or "
                        + "string type");
            }
            if (t == ValueType.DECIMAL && (c.precision() <= 0 || c.precision() > 18 || c.scale() < 0
                    || c.scale() > c.precision())) {
                throw new IllegalArgumentException(what + (c.precision() <= 0 ? " without a precision" : "(" + c.precision()
                        + ", " + c.scale() + ")") + "; a decimal in a sequence_by list needs a precision of at most 18: "
                        + "cast it in the source query, e.g. CAST(" + c.name() + " AS DECIMAL(18, "
                        + Math.max(0, Math.min(c.scale(), 18)) + "))");
            }
            if ((t == ValueType.TIMESTAMP || t == ValueType.TIMESTAMP_TZ) && c.scale() > 6) {
                throw new IllegalArgumentException(what + " with " + c.scale() + " fractional digits; a timestamp in "
                        + "a sequence_by list is compared to the microsecond: cast it in the source query to a "
                        + "TIMESTAMP(6)");
            }
            names.add(c.name());
            types.add(t);
            scales.add(t == ValueType.DECIMAL ? c.scale() : 0);
        }
        return new SequenceKey(names, types, scales);
    }

    /** The component columns, in order. */
    public List<String> columns() {
        return columns;
    }

    /** The components' types, in order. */
    public List<ValueType> types() {
        return types;
    }

    /** The scale of each component (a decimal's; 0 for every other type). */
    public List<Integer> scales() {
        return scales;
    }

    // ---------------------------------------------------------------- the key

    /** The key of a tuple of values (each normalized by its type); null when a value is null. */
    public String encode(List<?> values) {
        check(values);
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < types.size(); i++) {
            Object v = types.get(i).normalize(values.get(i));
            if (v == null) {
                return null;
            }
            switch (types.get(i)) {
                case INTEGER -> integer(b, BigInteger.valueOf((Long) v));
                case DECIMAL -> {
                    BigDecimal d = ((BigDecimal) v).setScale(scales.get(i), RoundingMode.UNNECESSARY);
                    integer(b, d.unscaledValue());
                }
                case DATE -> integer(b, BigInteger.valueOf(((LocalDate) v).toEpochDay()));
                case TIMESTAMP -> integer(b, micros(((LocalDateTime) v).toInstant(ZoneOffset.UTC)));
                case TIMESTAMP_TZ -> integer(b, micros(((OffsetDateTime) v).toInstant()));
                case STRING -> {
                    String s = (String) v;
                    for (int k = 0; k < s.length(); k++) {
                        char c = s.charAt(k);
                        if (c == '\u0001') {
                            b.append("\u0001\u0003");
                        } else if (c == '\u0000') {
                            b.append("\u0001\u0002");
                        } else {
                            b.append(c);
                        }
                    }
                    b.append("\u0001\u0001");
                }
                default -> throw new IllegalStateException(types.get(i).name());
            }
        }
        return b.toString();
    }

    private static BigInteger micros(Instant t) {
        if (t.getNano() % 1000 != 0) {
            throw new IllegalArgumentException("'" + t + "' has a fraction below a microsecond");
        }
        return BigInteger.valueOf(t.getEpochSecond()).multiply(BigInteger.valueOf(1_000_000))
                .add(BigInteger.valueOf(t.getNano() / 1000));
    }

    private static void integer(StringBuilder b, BigInteger v) {
        BigInteger shown = v.signum() < 0 ? v.add(SHIFT) : v;
        if (shown.signum() < 0 || shown.compareTo(SHIFT) >= 0) {
            throw new IllegalArgumentException("'" + v + "' is outside the range of a sequence_by list component");
        }
        String digits = shown.toString();
        b.append(v.signum() < 0 ? 'n' : 'p').append("0".repeat(WIDTH - digits.length())).append(digits);
    }

    /**
     * The values of a key, each of its component's type.
     *
     * @throws IllegalArgumentException when the text is not a key of these components
     */
    public List<Object> decode(String key) {
        List<Object> out = new ArrayList<>();
        int[] at = {0};
        try {
            for (int i = 0; i < types.size(); i++) {
                ValueType t = types.get(i);
                if (t == ValueType.STRING) {
                    StringBuilder s = new StringBuilder();
                    while (true) {
                        char c = key.charAt(at[0]++);
                        if (c != '\u0001') {
                            s.append(c);
                            continue;
                        }
                        char next = key.charAt(at[0]++);
                        if (next == '\u0001') {
                            break;
                        }
                        s.append(next == '\u0003' ? '\u0001' : next == '\u0002' ? '\u0000' : fail(key));
                    }
                    out.add(s.toString());
                    continue;
                }
                BigInteger v = readInteger(key, at);
                out.add(switch (t) {
                    case INTEGER -> v.longValueExact();
                    case DECIMAL -> t.normalize(new BigDecimal(v, scales.get(i)));
                    case DATE -> LocalDate.ofEpochDay(v.longValueExact());
                    case TIMESTAMP -> LocalDateTime.ofInstant(instant(v), ZoneOffset.UTC);
                    case TIMESTAMP_TZ -> OffsetDateTime.ofInstant(instant(v), ZoneOffset.UTC);
                    default -> throw new IllegalStateException(t.name());
                });
            }
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("'" + printable(key) + "' is not a sequence key of " + columns, e);
        }
        if (at[0] != key.length()) {
            throw new IllegalArgumentException("'" + printable(key) + "' is not a sequence key of " + columns);
        }
        return Collections.unmodifiableList(out);
    }

    private static char fail(String key) {
        throw new IllegalArgumentException("bad escape in '" + printable(key) + "'");
    }

    private static Instant instant(BigInteger micros) {
        BigInteger[] qr = micros.divideAndRemainder(BigInteger.valueOf(1_000_000));
        long seconds = qr[0].longValueExact();
        long rest = qr[1].longValueExact();
        if (rest < 0) {
            seconds--;
            rest += 1_000_000;
        }
        return Instant.ofEpochSecond(seconds, rest * 1000);
    }

    private static BigInteger readInteger(String key, int[] at) {
        char sign = key.charAt(at[0]);
        String digits = key.substring(at[0] + 1, at[0] + 1 + WIDTH);
        if ((sign != 'p' && sign != 'n') || !digits.chars().allMatch(Character::isDigit)) {
            throw new IllegalArgumentException("bad integer component");
        }
        at[0] += 1 + WIDTH;
        BigInteger v = new BigInteger(digits);
        return sign == 'n' ? v.subtract(SHIFT) : v;
    }

    /** A key with its control characters shown as {@code \\u0001}, for messages. */
    public static String printable(String key) {
        return key == null ? null : key.replace("\u0000", "\\u0000").replace("\u0001", "\\u0001")
                .replace("\u0002", "\\u0002").replace("\u0003", "\\u0003");
    }

    // ---------------------------------------------------------------- the readable form

    /** The readable form of a tuple: {@code (2024-01-05, 3)}, strings in single quotes ({@code ''} for a quote). */
    public String text(List<?> values) {
        check(values);
        List<Object> normalized = new ArrayList<>();
        for (int i = 0; i < values.size(); i++) {
            normalized.add(types.get(i).normalize(values.get(i)));
        }
        return ValueType.text(normalized);
    }

    /** The key of a tuple a user or the ledger names ({@link #parse}, then {@link #encode}). */
    public String keyOf(Object value) {
        return encode(parse(value));
    }

    /**
     * Reads a tuple a user or the ledger gives: a list of values (each read by {@link ValueType#coerce}), or text as
     * {@link #text} writes it; the parentheses and the quotes around a string without a comma may be left out
     * ({@code 2024-01-05,3}).
     *
     * @throws IllegalArgumentException naming the component that cannot be read, or a wrong number of them
     */
    public List<Object> parse(Object value) {
        List<?> raw;
        if (value instanceof List<?> l) {
            raw = l;
        } else {
            raw = split(value.toString());
        }
        if (raw.size() != types.size()) {
            throw new IllegalArgumentException("'" + value + "' has " + raw.size() + " value" + (raw.size() == 1 ? "" : "s")
                    + "; sequence_by " + columns + " needs " + types.size() + ", like " + example());
        }
        List<Object> out = new ArrayList<>();
        for (int i = 0; i < raw.size(); i++) {
            try {
                Object v = raw.get(i);
                if (v == null) {
                    throw new IllegalArgumentException("NULL is no sequence");
                }
                out.add(types.get(i).normalize(types.get(i).coerce(v)));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("'" + value + "': " + columns.get(i) + " (" + types.get(i).name()
                        .toLowerCase(Locale.ROOT).replace('_', ' ') + "): " + e.getMessage(), e);
            }
        }
        return Collections.unmodifiableList(out);
    }

    private String example() {
        List<String> parts = new ArrayList<>();
        for (ValueType t : types) {
            parts.add(switch (t) {
                case DATE -> "2024-01-05";
                case TIMESTAMP, TIMESTAMP_TZ -> "2024-01-05T10:00:00";
                case STRING -> "'a'";
                case DECIMAL -> "1.5";
                default -> "3";
            });
        }
        return "(" + String.join(", ", parts) + ")";
    }

    /** Splits {@code (a, 'b,c', d)} into its values, outside single quotes; quotes are removed. */
    private static List<String> split(String text) {
        String s = text.strip();
        if (s.startsWith("(") && s.endsWith(")")) {
            s = s.substring(1, s.length() - 1);
        }
        List<String> out = new ArrayList<>();
        StringBuilder cur = new StringBuilder();
        boolean quoted = false;
        boolean wasQuoted = false;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (quoted) {
                if (c == '\'' && i + 1 < s.length() && s.charAt(i + 1) == '\'') {
                    cur.append('\'');
                    i++;
                } else if (c == '\'') {
                    quoted = false;
                } else {
                    cur.append(c);
                }
            } else if (c == '\'' && cur.toString().isBlank()) {
                quoted = true;
                wasQuoted = true;
                cur.setLength(0);
            } else if (c == ',') {
                out.add(wasQuoted ? cur.toString() : cur.toString().strip());
                cur.setLength(0);
                wasQuoted = false;
            } else if (!(wasQuoted && Character.isWhitespace(c))) {
                cur.append(c);
            }
        }
        if (quoted) {
            throw new IllegalArgumentException("'" + text + "' has an unclosed quote");
        }
        out.add(wasQuoted ? cur.toString() : cur.toString().strip());
        return out;
    }

    /** Compares two tuples component by component, each in its type (the order of their keys). */
    public int compare(List<?> a, List<?> b) {
        for (int i = 0; i < types.size(); i++) {
            int c = types.get(i).compare(types.get(i).normalize(a.get(i)), types.get(i).normalize(b.get(i)));
            if (c != 0) {
                return c;
            }
        }
        return 0;
    }

    private void check(List<?> values) {
        if (values.size() != types.size()) {
            throw new IllegalArgumentException(values + " has " + values.size() + " values; sequence_by " + columns
                    + " has " + types.size());
        }
    }
}
