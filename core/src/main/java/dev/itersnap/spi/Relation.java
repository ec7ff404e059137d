package dev.itersnap.spi;

import dev.itersnap.core.TableName;

/**
 * Something to select from, for the engine's {@code describe} step: a table, or a query, optionally filtered by a predicate.
 *
 * @param table     the table, or null
 * @param query     the query's text, or null
 * @param predicate a predicate over the relation's rows (alias {@code s}), or null
 */
public record Relation(TableName table, String query, String predicate) {
    public static Relation table(TableName table) {
        return new Relation(table, null, null);
    }

    public static Relation query(String query) {
        return new Relation(null, query, null);
    }

    /** The same relation filtered by {@code predicate}. */
    public Relation where(String predicate) {
        return new Relation(table, query, predicate);
    }
}
