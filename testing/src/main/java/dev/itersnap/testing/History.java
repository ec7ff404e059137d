package dev.itersnap.testing;

import dev.itersnap.core.ColumnNames;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * A history table as read after a run: one map per version, column names in lower case, values as comparable Java
 * values (integers as {@code Long}, decimals without trailing zeros, timestamps as {@code LocalDateTime}, dates as
 * {@code LocalDate}). Immutable. Assert on it with {@link ItersnapAssertions#assertThat(History)}.
 */
public final class History {
    private final List<Map<String, Object>> rows;
    private final List<String> keyColumns;
    private final ColumnNames meta;

    History(List<Map<String, Object>> rows, List<String> keyColumns, ColumnNames meta) {
        this.keyColumns = keyColumns.stream().map(k -> k.toLowerCase(Locale.ROOT)).toList();
        this.meta = meta;
        List<Map<String, Object>> sorted = new ArrayList<>(rows);
        sorted.sort(Comparator.comparing((Map<String, Object> r) -> keyText(r))
                .thenComparing(r -> String.valueOf(r.get(lower(meta.validFrom()))))
                .thenComparing(r -> String.valueOf(r.get(lower(meta.openedSeq())))));
        this.rows = List.copyOf(sorted.stream().map(java.util.Collections::unmodifiableMap).toList());
    }

    /** Every version, ordered by key, then validity. */
    public List<Map<String, Object>> rows() {
        return rows;
    }

    /** The versions of one key (one value per key column, in the model's key order), oldest first. */
    public List<Map<String, Object>> versionsOf(Object... key) {
        if (key.length != keyColumns.size()) {
            throw new IllegalArgumentException("the model's key has " + keyColumns.size() + " columns " + keyColumns
                    + "; got " + key.length + " values");
        }
        return rows.stream().filter(r -> {
            for (int i = 0; i < key.length; i++) {
                if (!Values.matches(key[i], r.get(keyColumns.get(i)))) {
                    return false;
                }
            }
            return true;
        }).toList();
    }

    /** The current version of a key (its {@code dbt_valid_to} is NULL), if it has one. */
    public Optional<Map<String, Object>> current(Object... key) {
        return versionsOf(key).stream().filter(r -> r.get(lower(meta.validTo())) == null).findFirst();
    }

    /** The model's key columns, lower case. */
    public List<String> keyColumns() {
        return keyColumns;
    }

    /** The meta column names of the model ({@code dbt_valid_from}, ...). */
    public ColumnNames metaColumns() {
        return meta;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof History h && lines().equals(h.lines());
    }

    @Override
    public int hashCode() {
        return lines().hashCode();
    }

    /** One line per version, sorted. */
    List<String> lines() {
        return rows.stream().map(r -> new java.util.TreeMap<>(r).toString()).sorted().toList();
    }

    @Override
    public String toString() {
        StringBuilder out = new StringBuilder("history of " + rows.size() + " versions:");
        rows.forEach(r -> out.append("\n  ").append(r));
        return out.toString();
    }

    private String keyText(Map<String, Object> r) {
        StringBuilder b = new StringBuilder();
        for (String k : keyColumns) {
            Object v = r.get(k);
            b.append(v instanceof Number n ? String.format("%030.6f", new java.math.BigDecimal(n.toString())) : v)
                    .append('\u0000');
        }
        return b.toString();
    }

    static String lower(String s) {
        return s.toLowerCase(Locale.ROOT);
    }
}
