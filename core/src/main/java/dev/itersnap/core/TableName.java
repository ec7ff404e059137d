package dev.itersnap.core;

import java.util.List;

/**
 * A table name of one, two or three parts ({@code table}, {@code schema.table}, {@code catalog.schema.table}).
 * Each part is a plain identifier or, written in backticks, a name with other characters (Unity Catalog's
 * {@code `sales-eu`}), kept without the backticks; the dialect quotes every part.
 */
public record TableName(List<String> parts) {
    /** Checks there are one to three parts. */
    public TableName {
        if (parts == null || parts.isEmpty() || parts.size() > 3) {
            throw new IllegalArgumentException("a table name has one to three parts");
        }
        parts = List.copyOf(parts);
    }

    /**
     * Parses {@code a}, {@code a.b} or {@code a.b.c}, each part plain or in backticks ({@code `my-catalog`.sales.t});
     * {@code setting} names the setting in error messages.
     */
    public static TableName parse(String setting, String value) {
        if (value == null || value.isBlank()) {
            throw Settings.invalid(setting, "is required");
        }
        String[] split = value.trim().split("\\.", -1);
        if (split.length > 3) {
            throw Settings.invalid(setting, "expected table, schema.table or catalog.schema.table, got '" + value + "'");
        }
        java.util.List<String> parts = new java.util.ArrayList<>();
        for (String part : split) {
            if (part.isBlank()) {
                throw Settings.invalid(setting, "expected table, schema.table or catalog.schema.table, got '" + value
                        + "', which has an empty part");
            }
            parts.add(Settings.namePart(setting, part, value.trim()));
        }
        return new TableName(parts);
    }

    /** The last part. */
    public String table() {
        return parts.get(parts.size() - 1);
    }

    /** The schema part, or null when the name has one part. */
    public String schema() {
        return parts.size() >= 2 ? parts.get(parts.size() - 2) : null;
    }

    @Override
    public String toString() {
        return String.join(".", parts);
    }
}
