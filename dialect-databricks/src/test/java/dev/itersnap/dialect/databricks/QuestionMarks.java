package dev.itersnap.dialect.databricks;

/**
 * Test support: turns the {@code ?} markers of the suite's own JDBC statements (raw tables, fixtures) into the named
 * markers {@link SparkDataSource} binds ({@code :_p1 … :_pN}). itersnap's engine needs none of this: it renders named
 * markers itself for such a connection. A {@code ?} inside a string literal, a quoted identifier or a comment stays.
 */
final class QuestionMarks {
    private QuestionMarks() {
    }

    /** Replaces each {@code ?} outside literals, quoted identifiers and comments by {@code :_pN}, N from 1. */
    static String toNamedMarkers(String sql) {
        StringBuilder out = new StringBuilder(sql.length() + 16);
        int n = 0;
        int i = 0;
        int len = sql.length();
        while (i < len) {
            char c = sql.charAt(i);
            if (c == '\'' || c == '"' || c == '`') {
                int j = i + 1;
                while (j < len) {
                    char d = sql.charAt(j);
                    if (d == '\\' && c != '`') {
                        j += 2;
                    } else if (d == c && j + 1 < len && sql.charAt(j + 1) == c) {
                        j += 2; // a doubled quote inside
                    } else if (d == c) {
                        break;
                    } else {
                        j++;
                    }
                }
                j = Math.min(j + 1, len);
                out.append(sql, i, j);
                i = j;
            } else if (c == '-' && i + 1 < len && sql.charAt(i + 1) == '-') {
                int j = sql.indexOf('\n', i);
                j = j < 0 ? len : j;
                out.append(sql, i, j);
                i = j;
            } else if (c == '/' && i + 1 < len && sql.charAt(i + 1) == '*') {
                int j = sql.indexOf("*/", i + 2);
                j = j < 0 ? len : j + 2;
                out.append(sql, i, j);
                i = j;
            } else if (c == '?') {
                out.append(":_p").append(++n);
                i++;
            } else {
                out.append(c);
                i++;
            }
        }
        return out.toString();
    }
}
