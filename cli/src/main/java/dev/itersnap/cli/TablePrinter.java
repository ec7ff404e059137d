package dev.itersnap.cli;

import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.sql.Types;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** Prints rows as an aligned text table in the style of psql: numbers right-aligned, NULL as blank. */
final class TablePrinter {
    private TablePrinter() {
    }

    /** Runs {@code sql} with {@code params} bound and prints its rows, headers in lower case. */
    static void print(PrintWriter out, Connection connection, String sql, Object... params) throws SQLException {
        try (PreparedStatement ps = connection.prepareStatement(sql)) {
            for (int i = 0; i < params.length; i++) {
                dev.itersnap.spi.SqlValues.bind(ps, i + 1, params[i]);
            }
            try (ResultSet rs = ps.executeQuery()) {
                ResultSetMetaData md = rs.getMetaData();
                int n = md.getColumnCount();
                List<String> headers = new ArrayList<>();
                boolean[] numeric = new boolean[n];
                for (int c = 1; c <= n; c++) {
                    headers.add(md.getColumnLabel(c).toLowerCase(java.util.Locale.ROOT));
                    numeric[c - 1] = isNumeric(md.getColumnType(c));
                }
                List<List<String>> rows = new ArrayList<>();
                while (rs.next()) {
                    List<String> row = new ArrayList<>();
                    for (int c = 1; c <= n; c++) {
                        row.add(cell(rs, c, md.getColumnType(c)));
                    }
                    rows.add(row);
                }
                print(out, headers, rows, numeric);
            }
        }
    }

    /** Prints {@code rows} under {@code headers}; {@code rightAligned[i]} aligns column i to the right. */
    static void print(PrintWriter out, List<String> headers, List<List<String>> rows, boolean... rightAligned) {
        int[] width = new int[headers.size()];
        for (int c = 0; c < width.length; c++) {
            width[c] = headers.get(c).length();
            for (List<String> row : rows) {
                width[c] = Math.max(width[c], row.get(c) == null ? 0 : row.get(c).length());
            }
        }
        List<String> rule = new ArrayList<>();
        for (int w : width) {
            rule.add("-".repeat(w + 2));
        }
        out.println(line(headers, width, new boolean[width.length]));
        out.println(String.join("+", rule));
        for (List<String> row : rows) {
            out.println(line(row, width, rightAligned.length == width.length ? rightAligned : new boolean[width.length]));
        }
        out.println("(" + rows.size() + (rows.size() == 1 ? " row)" : " rows)"));
        out.flush();
    }

    private static String line(List<String> cells, int[] width, boolean[] right) {
        List<String> padded = new ArrayList<>();
        for (int c = 0; c < width.length; c++) {
            String v = cells.get(c) == null ? "" : cells.get(c);
            String pad = " ".repeat(width[c] - v.length());
            padded.add(" " + (right[c] ? pad + v : v + pad) + " ");
        }
        return String.join("|", padded).stripTrailing();
    }

    private static String cell(ResultSet rs, int c, int type) throws SQLException {
        if (type == Types.TIMESTAMP) {
            Timestamp t = rs.getTimestamp(c);
            return t == null ? null : DateTimeFormatter.ISO_LOCAL_DATE_TIME.format(t.toLocalDateTime()).replace('T', ' ');
        }
        if (type == Types.BOOLEAN) {
            boolean b = rs.getBoolean(c);
            return rs.wasNull() ? null : String.valueOf(b);
        }
        return rs.getString(c);
    }

    private static boolean isNumeric(int type) {
        return Arrays.asList(Types.TINYINT, Types.SMALLINT, Types.INTEGER, Types.BIGINT, Types.DECIMAL, Types.NUMERIC,
                Types.REAL, Types.FLOAT, Types.DOUBLE).contains(type);
    }
}
