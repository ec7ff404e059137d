package dev.itersnap.dialect.databricks;

import java.util.List;

/**
 * Lays a statement out one clause per line for the pinned SQL ({@code databricks-steps.sql}), so that a reviewer reads a
 * changed statement in a diff: a line break before each clause keyword and after each item of a select list, outside
 * string literals and quoted names, indented by the depth of parentheses. Only the file's layout: the statements the
 * engine runs are unchanged.
 */
final class SqlLayout {
    /** The keywords a clause starts with, longest first (so that {@code LEFT JOIN} wins over {@code JOIN}). */
    private static final List<String> CLAUSES = List.of("WHEN NOT MATCHED", "WHEN MATCHED", "LEFT JOIN", "UNION ALL",
            "GROUP BY", "SELECT", "FROM", "WHERE", "HAVING", "USING", "VALUES", "JOIN", "SET");
    private static final int MAX_DEPTH = 256;

    private SqlLayout() {
    }

    static String clauses(String sql) {
        StringBuilder out = new StringBuilder();
        int depth = 0;
        char quote = 0;
        // per depth: inside a SELECT's list (its items go one per line), and whether a SELECT was opened there (a FROM
        // elsewhere, as in SUBSTRING(x FROM 2), is no clause)
        boolean[] list = new boolean[MAX_DEPTH];
        boolean[] select = new boolean[MAX_DEPTH];
        for (int i = 0; i < sql.length(); i++) {
            char c = sql.charAt(i);
            if (quote != 0) {
                out.append(c);
                if (c == '\\' && quote == '\'' && i + 1 < sql.length()) {
                    out.append(sql.charAt(++i)); // an escaped character of a Spark string literal
                } else if (c == quote) {
                    quote = 0;
                }
                continue;
            }
            int d = Math.min(Math.max(depth, 0), MAX_DEPTH - 2);
            char before = i == 0 ? '(' : sql.charAt(i - 1);
            String clause = before == ' ' || before == '(' ? clauseAt(sql, i) : null;
            if (clause != null && clause.equals("FROM") && (!select[d] || out.toString().endsWith("DISTINCT "))) {
                clause = null;
            }
            if (clause != null) {
                if (before == ' ') {
                    out.setLength(out.length() - 1);
                    out.append('\n').append("  ".repeat(d));
                }
                if (clause.equals("SELECT")) {
                    select[d] = true;
                    list[d] = true;
                } else {
                    list[d] = false;
                }
            }
            if (c == '\'' || c == '`' || c == '"') {
                quote = c;
            } else if (c == '(') {
                depth++;
                list[d + 1] = false;
                select[d + 1] = false;
            } else if (c == ')') {
                depth--;
            } else if (c == ',' && list[d] && i + 1 < sql.length() && sql.charAt(i + 1) == ' ') {
                out.append(",\n").append("  ".repeat(d + 1));
                i++;
                continue;
            }
            out.append(c);
        }
        return out.toString();
    }

    /** The clause keyword that starts at {@code at} as a whole word, or null. */
    private static String clauseAt(String sql, int at) {
        for (String k : CLAUSES) {
            int end = at + k.length();
            if (sql.startsWith(k, at) && (end == sql.length() || !Character.isLetterOrDigit(sql.charAt(end))
                    && sql.charAt(end) != '_')) {
                return k;
            }
        }
        return null;
    }
}
