package dev.itersnap.internal;

import dev.itersnap.core.AuditReport;
import dev.itersnap.core.AuditReport.Check;
import dev.itersnap.core.AuditReport.Finding;
import dev.itersnap.core.AuditSettings;
import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.spi.Dialect;
import dev.itersnap.internal.sql.SqlSteps;
import dev.itersnap.spi.Relation;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * The audit of an SCD Type 2 table ({@code IterativeSnapshot.audit}): per key, versions ordered by valid_from, window
 * functions (LAG, LEAD) compare each version with its neighbours; every check is one query, counted, and its first
 * rows kept as examples. Reads only, on one connection of the data source. The table's own names come from JDBC
 * metadata (matched case-insensitively); nothing from the data is written into the SQL but the {@code
 * valid_to_current} literal, which {@link AuditSettings} checked to be a date, time or number. Internal.
 */
public final class HistoryAudit {
    private final DataSource dataSource;
    private final Dialect dialect;

    public HistoryAudit(DataSource dataSource, Dialect dialect) {
        this.dataSource = dataSource;
        this.dialect = dialect;
    }

    /**
     * The {@code ledger_counts} finding of a model's history ({@link AuditReport.Check#LEDGER_COUNTS}), or null when
     * its ledger records nothing (or its source cannot be described).
     */
    public static Finding ledgerCounts(DataSource dataSource, Dialect dialect, dev.itersnap.core.ModelSettings model,
                                       int examples) {
        try (Connection c = dataSource.getConnection()) {
            return EditedHistory.ledgerFinding(c, dialect, model, examples);
        } catch (SQLException e) {
            throw new ItersnapException(ErrorCode.DATABASE_ERROR, "audit of model '" + model.name() + "': "
                    + Jdbc.firstLine(e.getMessage()) + " [SQLState " + e.getSQLState() + "]", e);
        }
    }

    /** A column as a query's metadata describes it. */
    private record Column(String name, int jdbcType, String typeName) {
    }

    /** Runs every check of {@code s} and returns what they found. */
    public AuditReport audit(AuditSettings s) {
        try (Connection c = dataSource.getConnection()) {
            boolean readOnly = readOnly(c, true);
            AuditReport report;
            try {
                report = new AuditReport(s, new Run(c, s).checks());
            } catch (SQLException | RuntimeException e) {
                // the failure is what the caller needs: a pool may have closed the connection after it (HikariCP
                // does after SQLState 0A000, PostgreSQL's "WITH clause containing a data-modifying statement must be
                // at the top level"), and restoring the flag would then fail with "Connection is closed" instead
                try {
                    if (!c.isClosed()) {
                        readOnly(c, readOnly);
                    }
                } catch (SQLException restore) {
                    e.addSuppressed(restore);
                }
                throw e;
            }
            readOnly(c, readOnly);
            return report;
        } catch (SQLException e) {
            throw new ItersnapException(ErrorCode.DATABASE_ERROR, "audit of table " + s.table() + ": "
                    + Jdbc.firstLine(e.getMessage()) + Jdbc.sqlState(e), e);
        }
    }

    /**
     * Sets the connection's read-only flag, a hint the database may enforce (the audit runs a query the caller gives,
     * the source); returns what it was. A driver that refuses the flag (DuckDB's, per connection) is left as it is:
     * the audit writes nothing either way.
     */
    private static boolean readOnly(Connection c, boolean value) throws SQLException {
        boolean was = c.isReadOnly();
        if (was != value) {
            try {
                c.setReadOnly(value);
            } catch (SQLException e) {
                if (c.isClosed()) {
                    throw e;
                }
            }
        }
        return was;
    }

    /** One audit on one connection. */
    private final class Run {
        private final Connection connection;
        private final AuditSettings s;
        private final UnaryOperator<String> fold;

        Run(Connection connection, AuditSettings s) throws SQLException {
            this.connection = connection;
            this.s = s;
            this.fold = Jdbc.folding(connection, dialect);
        }

        List<Finding> checks() throws SQLException {
            String t = String.join(".", s.table().parts().stream().map(p -> dialect.quote(fold.apply(p))).toList());
            List<Column> columns;
            try {
                columns = describe("SELECT * FROM " + t + " WHERE 1 = 0");
            } catch (SQLException e) {
                throw new ItersnapException(ErrorCode.INVALID_SETTING, "cannot read table " + s.table() + ": "
                        + Jdbc.firstLine(e.getMessage()), e);
            }
            List<String> k = new ArrayList<>();
            for (String key : s.uniqueKey()) {
                k.add(column(columns, "unique_key", key));
            }
            String u = column(columns, "updated_at", s.updatedAt());
            String vf = column(columns, "valid_from", s.validFrom());
            String vt = column(columns, "valid_to", s.validTo());
            String keyList = String.join(", ", k);
            String current = vt + " IS NULL";
            if (s.validToCurrent() != null) {
                current = "(" + vt + " IS NULL OR " + vt + " = CAST('" + s.validToCurrent() + "' AS "
                        + find(columns, s.validTo()).typeName() + "))";
            }
            // versions that start at the same time (a version that lasts no time: deleted, or changed again, at the
            // time it opened) are ordered by the batch that opened them where the table records it, else by updated_at
            Column opened = find(columns, s.openedSeq());
            String order = vf + ", " + vt + " NULLS LAST, " + (opened == null ? "" : q(opened) + ", ") + u;
            // deletions, where the table records them: a version closed by one (change type 'delete') or a deletion
            // record (hard_deletes: new_record) ends the key's life; the next version is a return, which starts at the
            // later of its updated_at and the deletion (so its updated_at may be earlier), and the gap before it is
            // the key's absence
            Column changeType = find(columns, s.changeType());
            Column deleted = find(columns, s.isDeleted());
            String record = deleted == null ? "0" : "CASE WHEN " + (deleted.jdbcType() == Types.BOOLEAN
                    || deleted.jdbcType() == Types.BIT ? q(deleted) + " = TRUE" : "UPPER(" + q(deleted) + ") = 'TRUE'")
                    + " THEN 1 ELSE 0 END";
            String ends = changeType == null ? record : "CASE WHEN " + q(changeType) + " = 'delete' THEN 1 ELSE "
                    + record + " END";
            String window = " OVER (PARTITION BY " + keyList + " ORDER BY " + order + ")";
            String v = "SELECT " + keyList + ", " + vf + " AS itersnap_vf, " + vt + " AS itersnap_vt, " + u + " AS itersnap_u, CASE WHEN "
                    + current + " THEN 1 ELSE 0 END AS itersnap_cur, " + record
                    + " AS itersnap_drec, " + ends + " AS itersnap_ends, LAG(" + ends + ")" + window + " AS itersnap_prev_ends, "
                    + "LAG(" + u + ")" + window + " AS itersnap_prev_u, LAG(" + vf + ")" + window + " AS itersnap_prev_vf, "
                    + "LEAD(" + vf + ")" + window + " AS itersnap_next_vf FROM " + t;
            List<String> keys = s.uniqueKey();
            List<Finding> out = new ArrayList<>();
            out.add(check(Check.OUT_OF_ORDER, "versions whose updated_at is earlier than the previous version's",
                    "SELECT " + keyList + ", itersnap_vf, itersnap_u, itersnap_prev_vf, itersnap_prev_u FROM (" + v + ") v WHERE itersnap_u < itersnap_prev_u AND itersnap_drec = 0 "
                            + "AND itersnap_prev_ends = 0",
                    headers(keys, "valid_from", "updated_at", "previous_valid_from", "previous_updated_at")));
            out.add(check(Check.OVERLAP, "versions still valid when the next version of the key starts",
                    "SELECT " + keyList + ", itersnap_vf, itersnap_vt, itersnap_next_vf FROM (" + v + ") v WHERE itersnap_next_vf IS NOT NULL "
                            + "AND (itersnap_vt IS NULL OR itersnap_next_vf < itersnap_vt)",
                    headers(keys, "valid_from", "valid_to", "next_valid_from")));
            out.add(check(Check.GAP, "versions closed before the next version of the key starts",
                    "SELECT " + keyList + ", itersnap_vf, itersnap_vt, itersnap_next_vf FROM (" + v + ") v WHERE itersnap_vt IS NOT NULL "
                            + "AND itersnap_next_vf IS NOT NULL AND itersnap_next_vf > itersnap_vt AND itersnap_ends = 0",
                    headers(keys, "valid_from", "valid_to", "next_valid_from")));
            out.add(check(Check.MULTIPLE_CURRENT, "keys with more than one current version (valid_to NULL"
                            + (s.validToCurrent() == null ? "" : " or " + s.validToCurrent()) + ")",
                    "SELECT " + keyList + ", COUNT(*) AS versions FROM " + t + " WHERE " + current + " GROUP BY "
                            + keyList + " HAVING COUNT(*) > 1",
                    headers(keys, "current_versions")));
            out.add(check(Check.INVERTED, "versions whose valid_to is before their valid_from",
                    "SELECT " + keyList + ", " + vf + ", " + vt + " FROM " + t + " WHERE " + vt + " < " + vf,
                    headers(keys, "valid_from", "valid_to")));
            if (s.source() != null) {
                out.add(missing(t, k, u));
            }
            Column closed = find(columns, s.closedSeq());
            if (opened != null && closed != null) {
                // itersnap's bookkeeping: a version is open exactly while no batch closed it, and a change that closed
                // it opened the next version in the same batch
                String os = q(opened);
                String cs = q(closed);
                String rows = "SELECT " + keyList + ", " + vf + ", " + vt + ", " + os + ", " + cs + " FROM " + t;
                String query = rows + " v WHERE (" + current + " AND " + cs + " IS NOT NULL) OR (NOT " + current
                        + " AND " + cs + " IS NULL)";
                if (changeType != null) {
                    String o = SqlSteps.outer("v");
                    List<String> same = new ArrayList<>();
                    for (String key : k) {
                        same.add("x." + key + " = " + o + "." + key);
                    }
                    query += " UNION " + rows + " " + o + " WHERE " + q(changeType) + " = 'update' AND " + cs
                            + " IS NOT NULL AND NOT EXISTS (SELECT 1 FROM " + t + " x WHERE " + String.join(" AND ",
                            same) + " AND x." + os + " = " + o + "." + cs + ")";
                }
                out.add(check(Check.BOOKKEEPING, "versions whose valid_to and closing batch disagree (open with a "
                                + "closing batch, closed without one), or closed by a change at a batch that opened no "
                                + "version of the key", query,
                        headers(keys, "valid_from", "valid_to", "opened_seq", "closed_seq")));
            }
            if (changeType != null) {
                out.add(check(Check.CLOSED_WITHOUT_SUCCESSOR, "keys whose last version is closed, and not by a "
                                + "deletion: no current version",
                        "SELECT " + keyList + ", itersnap_vf, itersnap_vt FROM (" + v + ") v WHERE itersnap_next_vf IS NULL AND itersnap_cur = 0 AND "
                                + "itersnap_ends = 0",
                        headers(keys, "valid_from", "valid_to")));
            }
            return out;
        }

        /** Source (key, updated_at) pairs that no version carries, with the first batch holding each. */
        private Finding missing(String t, List<String> tableKeys, String u) throws SQLException {
            List<Column> sourceColumns;
            try {
                sourceColumns = describe("SELECT * FROM " + Relation.parenthesized(s.source()) + " s WHERE 1 = 0");
            } catch (SQLException e) {
                throw new ItersnapException(ErrorCode.INVALID_SOURCE, "setting 'source' cannot be run: "
                        + Jdbc.firstLine(e.getMessage()), e);
            }
            // the source's alias, which the subquery over the table refers to
            String o = SqlSteps.outer("s");
            List<String> sk = new ArrayList<>();
            for (String key : s.uniqueKey()) {
                sk.add(o + "." + sourceColumn(sourceColumns, "unique_key", key));
            }
            String su = o + "." + sourceColumn(sourceColumns, "source_updated_at", s.sourceUpdatedAt());
            String seq = o + "." + sourceColumn(sourceColumns, "sequence_by", s.sequenceBy());
            List<String> match = new ArrayList<>();
            StringBuilder keyPresent = new StringBuilder();
            for (int i = 0; i < sk.size(); i++) {
                match.add("t." + tableKeys.get(i) + " = " + sk.get(i));
                keyPresent.append(sk.get(i)).append(" IS NOT NULL AND ");
            }
            String keyList = String.join(", ", sk);
            String query = "SELECT " + keyList + ", " + su + ", MIN(" + seq + ") FROM " + Relation.parenthesized(s.source())
                    + " " + o + " WHERE "
                    + keyPresent + seq + " IS NOT NULL AND " + su + " IS NOT NULL AND NOT EXISTS (SELECT 1 FROM " + t
                    + " t WHERE " + String.join(" AND ", match) + " AND t." + u + " = " + su + ") GROUP BY "
                    + keyList + ", " + su;
            return check(Check.MISSING_VERSIONS, "source rows (key, updated_at) that no version of the table carries",
                    query, headers(s.uniqueKey(), "updated_at", "first_batch"));
        }

        /** The count of {@code query}'s rows and its first rows as text. */
        private Finding check(Check check, String description, String query, List<String> headers)
                throws SQLException {
            long count = ((Number) rows(0, "SELECT COUNT(*) FROM (" + query + ") x").get(0).get(0)).longValue();
            List<List<String>> examples = new ArrayList<>();
            if (count > 0 && s.examples() > 0) {
                for (List<Object> row : rows(s.examples(), query + " ORDER BY 1")) {
                    examples.add(row.stream().map(HistoryAudit::text).toList());
                }
            }
            return new Finding(check, description, count, headers, examples);
        }

        private List<List<Object>> rows(int limit, String sql) throws SQLException {
            try (Statement st = connection.createStatement()) {
                st.setMaxRows(limit);
                try (ResultSet rs = st.executeQuery(sql)) {
                    int n = rs.getMetaData().getColumnCount();
                    List<List<Object>> out = new ArrayList<>();
                    // setMaxRows is a hint (DuckDB's driver ignores it): read no more rows than asked for
                    while ((limit == 0 || out.size() < limit) && rs.next()) {
                        List<Object> row = new ArrayList<>(n);
                        for (int i = 1; i <= n; i++) {
                            row.add(rs.getObject(i));
                        }
                        out.add(row);
                    }
                    return out;
                }
            }
        }

        private List<Column> describe(String sql) throws SQLException {
            try (Statement st = connection.createStatement(); ResultSet rs = st.executeQuery(sql)) {
                ResultSetMetaData md = rs.getMetaData();
                List<Column> out = new ArrayList<>();
                for (int i = 1; i <= md.getColumnCount(); i++) {
                    out.add(new Column(md.getColumnLabel(i), md.getColumnType(i), md.getColumnTypeName(i)));
                }
                return out;
            }
        }

        /** The table's column called {@code name} (case-insensitive), quoted. */
        private String column(List<Column> columns, String setting, String name) {
            Column c = find(columns, name);
            if (c == null) {
                throw new ItersnapException(ErrorCode.INVALID_SETTING, "setting '" + setting + "' names column '"
                        + name + "', which table " + s.table() + " does not have; its columns: "
                        + columns.stream().map(Column::name).toList());
            }
            return q(c);
        }

        private String sourceColumn(List<Column> columns, String setting, String name) {
            Column c = find(columns, name);
            if (c == null) {
                throw new ItersnapException(ErrorCode.INVALID_SETTING, "setting '" + setting + "' names column '"
                        + name + "', which setting 'source' does not return; its columns: "
                        + columns.stream().map(Column::name).toList());
            }
            return q(c);
        }

        private String q(Column c) {
            return dialect.quote(c.name());
        }
    }

    private static List<String> headers(List<String> keys, String... more) {
        List<String> h = new ArrayList<>(keys);
        h.addAll(List.of(more));
        return h;
    }

    /** The column called {@code name}, case-insensitively, or null. */
    private static Column find(List<Column> columns, String name) {
        for (Column c : columns) {
            if (c.name().equalsIgnoreCase(name)) {
                return c;
            }
        }
        return null;
    }

    /** A value as text for people and JSON: ISO-8601 with a space before the time, plain digits, "" for NULL. */
    static String text(Object v) {
        if (v == null) {
            return "";
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
