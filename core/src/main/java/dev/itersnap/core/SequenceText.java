package dev.itersnap.core;

/**
 * The canonical text of a sequence or time value, as the ledger, the run log and the messages write it: ISO-8601 for
 * times, plain digits for numbers, a {@code sequence_by} list's values as {@code (2024-03-01, 3)}.
 */
public final class SequenceText {
    private SequenceText() {
    }

    /** The canonical text of {@code v} (null for null). */
    public static String of(Object v) {
        if (v == null) {
            return null;
        }
        if (v instanceof java.math.BigDecimal b) {
            return b.toPlainString();
        }
        if (v instanceof java.util.List<?> tuple) {
            // a sequence_by list's values, as the engine writes a list's text
            StringBuilder s = new StringBuilder("(");
            for (Object part : tuple) {
                s.append(s.length() > 1 ? ", " : "").append(part instanceof String str
                        ? "'" + str.replace("'", "''") + "'" : part == null ? "NULL" : of(part));
            }
            return s.append(')').toString();
        }
        return v.toString();
    }
}
