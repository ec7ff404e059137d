package dev.itersnap.testing;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What a test expects of one version of a key: only what is set is checked. Values may be Java values or their
 * text ({@code "2024-03-01 09:00"}); {@code validTo(null)} expects an open (current) version.
 *
 * <pre>{@code
 * version().validFrom("2024-03-01 09:00").validTo("2024-03-02 10:00").changeType("update")
 *          .changedAttributes("tier").with("tier", "silver")
 * }</pre>
 *
 * Immutable: every method returns a new expectation.
 */
public final class Version {
    private static final Object UNSET = new Object();

    private final Object validFrom;
    private final Object validTo;
    private final String changeType;
    private final List<String> changedAttributes;
    private final Map<String, Object> values;

    private Version(Object validFrom, Object validTo, String changeType, List<String> changedAttributes,
                    Map<String, Object> values) {
        this.validFrom = validFrom;
        this.validTo = validTo;
        this.changeType = changeType;
        this.changedAttributes = changedAttributes;
        this.values = values;
    }

    /** An expectation that checks nothing yet. */
    public static Version version() {
        return new Version(UNSET, UNSET, null, null, Map.of());
    }

    /** Expects {@code dbt_valid_from}. */
    public Version validFrom(Object time) {
        return new Version(time, validTo, changeType, changedAttributes, values);
    }

    /** Expects {@code dbt_valid_to}; null expects the current version. */
    public Version validTo(Object time) {
        return new Version(validFrom, time, changeType, changedAttributes, values);
    }

    /** Expects {@code dbt_change_type}: {@code insert} (current), {@code update} or {@code delete}. */
    public Version changeType(String type) {
        return new Version(validFrom, validTo, type, changedAttributes, values);
    }

    /** Expects {@code changed_attributes}: the tracked columns that differ in the successor, in any order. */
    public Version changedAttributes(String... columns) {
        return new Version(validFrom, validTo, changeType, List.of(columns), values);
    }

    /** Expects the column to hold the value. */
    public Version with(String column, Object value) {
        Map<String, Object> more = new LinkedHashMap<>(values);
        more.put(column.toLowerCase(java.util.Locale.ROOT), value);
        return new Version(validFrom, validTo, changeType, changedAttributes, more);
    }

    /** The differences between this expectation and a version, one line each (empty: it matches). */
    List<String> mismatches(Map<String, Object> row, dev.itersnap.core.ColumnNames meta) {
        List<String> out = new ArrayList<>();
        if (validFrom != UNSET) {
            compare(History.lower(meta.validFrom()), validFrom, row, out);
        }
        if (validTo != UNSET) {
            compare(History.lower(meta.validTo()), validTo, row, out);
        }
        if (changeType != null) {
            compare(History.lower(meta.changeType()), changeType, row, out);
        }
        if (changedAttributes != null) {
            String column = History.lower(meta.changedAttributes());
            List<String> actual = parseChangedAttributes(row.get(column));
            if (!new java.util.TreeSet<>(lowered(changedAttributes)).equals(new java.util.TreeSet<>(lowered(actual)))) {
                out.add(column + " " + actual + ", expected " + changedAttributes);
            }
        }
        values.forEach((column, value) -> compare(column, value, row, out));
        return out;
    }

    static List<String> parseChangedAttributes(Object json) {
        if (json == null) {
            return List.of();
        }
        Object parsed = Values.parseJson(String.valueOf(json));
        return parsed instanceof List<?> list ? list.stream().map(String::valueOf).toList()
                : List.of(String.valueOf(parsed));
    }

    private static List<String> lowered(List<String> names) {
        return names.stream().map(History::lower).toList();
    }

    private static void compare(String column, Object expected, Map<String, Object> row, List<String> out) {
        if (!row.containsKey(column)) {
            out.add("no column " + column + " in the history " + row.keySet());
        } else if (!Values.matches(expected, row.get(column))) {
            out.add(column + " = " + row.get(column) + ", expected " + expected);
        }
    }

    @Override
    public String toString() {
        List<String> parts = new ArrayList<>();
        if (validFrom != UNSET) {
            parts.add("valid from " + validFrom);
        }
        if (validTo != UNSET) {
            parts.add(validTo == null ? "current" : "valid to " + validTo);
        }
        if (changeType != null) {
            parts.add("change type " + changeType);
        }
        if (changedAttributes != null) {
            parts.add("changed " + changedAttributes);
        }
        if (!values.isEmpty()) {
            parts.add("with " + values);
        }
        return parts.isEmpty() ? "any version" : String.join(", ", parts);
    }
}
