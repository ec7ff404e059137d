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

    /**
     * {@code query} in parentheses, for a derived table or a subquery: {@code (query)}, with a line end before the
     * closing parenthesis when the query's last line holds a {@code --} comment (which would run over the parenthesis
     * and the rest of the statement: "syntax error at end of input"). The text is unchanged otherwise.
     */
    public static String parenthesized(String query) {
        String lastLine = query.substring(Math.max(query.lastIndexOf('\n'), query.lastIndexOf('\r')) + 1);
        return "(" + query + (lastLine.contains("--") ? "\n" : "") + ")";
    }

    /** The same relation filtered by {@code predicate}. */
    public Relation where(String predicate) {
        return new Relation(table, query, predicate);
    }
}
