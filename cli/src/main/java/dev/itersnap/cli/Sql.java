package dev.itersnap.cli;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.UnaryOperator;

/**
 * Read-only SQL for the inspecting commands (status, dry runs, validate, audit): identifiers folded the way the
 * database folds unquoted ones and quoted with its quote string; values always bound.
 */
final class Sql {
    private final Connection connection;
    private final UnaryOperator<String> fold;
    private final String quote;

    Sql(Connection connection) throws SQLException {
        this.connection = connection;
        DatabaseMetaData md = connection.getMetaData();
        if (md.storesUpperCaseIdentifiers()) {
            fold = s -> s.toUpperCase(Locale.ROOT);
        } else if (md.storesLowerCaseIdentifiers()) {
            fold = s -> s.toLowerCase(Locale.ROOT);
        } else {
            fold = s -> s;
        }
        String q = md.getIdentifierQuoteString();
        quote = q == null || q.isBlank() ? "\"" : q.strip();
    }

    Connection connection() {
        return connection;
    }

    /**
     * Marks the connection of an inspecting command read-only, a hint the database may enforce. DuckDB's driver has no
     * read-only mode per connection and refuses the call ("Can't change read-only status on connection level"); the
     * commands write nothing either way.
     */
    static void readOnly(Connection c) throws SQLException {
        try {
            c.setReadOnly(true);
        } catch (SQLException e) {
            if (c.isClosed()) {
                throw e;
            }
        }
    }

    String fold(String identifier) {
        return fold.apply(identifier);
    }

    /** Quotes an identifier as it is (already folded or the database's own spelling). */
    String quote(String identifier) {
        return quote + identifier.replace(quote, quote + quote) + quote;
    }

    /** Folds, then quotes. */
    String id(String identifier) {
        return quote(fold(identifier));
    }

    /** Folded, quoted and joined name of a table given as unquoted parts. */
    String table(List<String> parts) {
        return String.join(".", parts.stream().map(this::id).toList());
    }

    /** Whether the table (parts already folded) exists. */
    boolean tableExists(String schema, String table) throws SQLException {
        try (ResultSet rs = connection.getMetaData().getTables(null, schema, table, null)) {
            while (rs.next()) {
                if (rs.getString("TABLE_NAME").equals(table)
                        && (schema == null || schema.equals(rs.getString("TABLE_SCHEM")))) {
                    return true;
                }
            }
            return false;
        }
    }

    /** Rows of {@code sql} with {@code params} bound, each as a list of column values (JDBC's getObject). */
    List<List<Object>> rows(String sql, Object... params) throws SQLException {
        return rows(0, sql, params);
    }

    /** At most {@code limit} rows (all when 0) of {@code sql} with {@code params} bound. */
    List<List<Object>> rows(int limit, String sql, Object... params) throws SQLException {
        try (PreparedStatement ps = connection.prepareStatement(sql)) {
            ps.setMaxRows(limit);
            for (int i = 0; i < params.length; i++) {
                dev.itersnap.spi.SqlValues.bind(ps, i + 1, params[i]);
            }
            try (ResultSet rs = ps.executeQuery()) {
                int n = rs.getMetaData().getColumnCount();
                List<List<Object>> out = new ArrayList<>();
                while (rs.next()) {
                    List<Object> row = new ArrayList<>();
                    for (int c = 1; c <= n; c++) {
                        row.add(rs.getObject(c));
                    }
                    out.add(row);
                }
                return out;
            }
        }
    }

    /** Column labels and JDBC types of a query that returns no rows ({@code ... WHERE 1 = 0}). */
    List<Column> describe(String sql) throws SQLException {
        try (Statement st = connection.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            ResultSetMetaData md = rs.getMetaData();
            List<Column> out = new ArrayList<>();
            for (int i = 1; i <= md.getColumnCount(); i++) {
                out.add(new Column(md.getColumnLabel(i), md.getColumnType(i), md.getColumnTypeName(i),
                        md.getPrecision(i), md.getScale(i)));
            }
            return out;
        }
    }

    /** A column as JDBC metadata reports it. */
    record Column(String name, int jdbcType, String typeName, int precision, int scale) {
    }

    /** The column called {@code name}, case-insensitively, or null. */
    static Column find(List<Column> columns, String name) {
        for (Column c : columns) {
            if (c.name().equalsIgnoreCase(name)) {
                return c;
            }
        }
        return null;
    }

    /** Text of a value for people and JSON: ISO-8601 with a space before the time, plain digits. */
    static String text(Object v) {
        if (v == null) {
            return null;
        }
        if (v instanceof java.sql.Timestamp t) {
            return t.toLocalDateTime().toString().replace('T', ' ');
        }
        if (v instanceof java.time.LocalDateTime t) {
            return t.toString().replace('T', ' ');
        }
        if (v instanceof java.math.BigDecimal d) {
            return d.toPlainString();
        }
        return v.toString();
    }
}
