package dev.itersnap.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.zaxxer.hikari.HikariDataSource;
import dev.itersnap.core.ColumnNames;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.core.TableName;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code itersnap audit}: checks any SCD Type 2 table (one itersnap built, or a dbt snapshot) for the marks of a
 * history applied out of order or otherwise broken. Reads only; window functions (LAG, LEAD) portable across H2 and
 * PostgreSQL.
 */
@Command(name = "audit", mixinStandardHelpOptions = true,
        description = {"Checks any SCD Type 2 table (itersnap-built or a dbt snapshot) for broken history; writes nothing.",
                "Per key, versions are ordered by valid_from; it counts:",
                "  out_of_order      a version whose updated_at is earlier than its predecessor's (the fingerprint "
                        + "of a batch applied late); a key's return after a deletion is not compared, nor a deletion "
                        + "record",
                "  overlap           a version still valid when its successor starts (valid_to NULL or after the "
                        + "successor's valid_from)",
                "  gap               a version closed before its successor starts (also what a deleted key that "
                        + "returned looks like, unless the table marks deletions: a version whose change type is "
                        + "'delete' or a deletion record ends the key's life, and the gap after it is its absence)",
                "  multiple_current  more than one version with valid_to NULL for one key (counted per key)",
                "  inverted          valid_to before valid_from",
                "  missing_versions  with --source and --sequence-by: a (key, updated_at) of the raw batches that no "
                        + "version of the table carries (what a timestamp-strategy snapshot drops silently)",
                "Prints counts and up to 5 examples per check. Exit 0 when clean, 5 when any check found a problem."})
public final class AuditCommand implements Callable<Integer> {
    static final int EXAMPLES = 5;

    @Spec
    private CommandSpec spec;

    @Mixin
    private ConnectionOptions connection;

    @Option(names = "--table", required = true, paramLabel = "T", description = "the history table: table, "
            + "schema.table or catalog.schema.table")
    private String table;

    @Option(names = "--key", required = true, split = ",", paramLabel = "K", description = "key column(s), "
            + "comma-separated")
    private List<String> keys;

    @Option(names = "--updated-at", defaultValue = "dbt_updated_at", paramLabel = "U",
            description = "column with the source's modification time (default: ${DEFAULT-VALUE})")
    private String updatedAt;

    @Option(names = "--valid-from", defaultValue = "dbt_valid_from", paramLabel = "COL",
            description = "default: ${DEFAULT-VALUE}")
    private String validFrom;

    @Option(names = "--valid-to", defaultValue = "dbt_valid_to", paramLabel = "COL",
            description = "default: ${DEFAULT-VALUE}")
    private String validTo;

    @Option(names = "--valid-to-current", paramLabel = "LITERAL", description = "the value current versions carry "
            + "in valid_to instead of NULL (dbt 1.9's dbt_valid_to_current, itersnap's valid_to_current), e.g. "
            + "9999-12-31")
    private String validToCurrent;

    @Option(names = "--source", paramLabel = "SQL", description = "a SELECT over the raw batches; with it the audit "
            + "also lists versions that should exist and do not (needs --sequence-by)")
    private String source;

    @Option(names = "--sequence-by", paramLabel = "COL", description = "the source column naming a row's batch")
    private String sequenceBy;

    @Option(names = "--source-updated-at", defaultValue = "updated_at", paramLabel = "COL",
            description = "the source column that becomes the table's --updated-at (default: ${DEFAULT-VALUE}); "
                    + "the source's key columns have the names given in --key")
    private String sourceUpdatedAt;

    @Option(names = "--change-type", defaultValue = "dbt_change_type", paramLabel = "COL",
            description = "where the table has it (itersnap's histories do): a version whose value is 'delete' was "
                    + "closed by a deletion (default: ${DEFAULT-VALUE})")
    private String changeType = "dbt_change_type";

    @Option(names = "--is-deleted", defaultValue = "dbt_is_deleted", paramLabel = "COL",
            description = "where the table has it (hard_deletes: new_record): a version whose value is true (or the "
                    + "text 'True', as dbt writes it) is a deletion record (default: ${DEFAULT-VALUE})")
    private String isDeleted = "dbt_is_deleted";

    @Option(names = "--opened-seq", defaultValue = "dbt_opened_seq", paramLabel = "COL",
            description = "where the table has it (itersnap's histories do): the batch that opened each version, which "
                    + "orders versions that start at the same time (default: ${DEFAULT-VALUE})")
    private String openedSeq = "dbt_opened_seq";

    @Option(names = "--json", description = "print the findings as one JSON object on stdout")
    private boolean json;

    /** One check's findings: count and up to {@link #EXAMPLES} example rows under {@code headers}. */
    record Finding(String check, String description, long count, List<String> headers, List<List<String>> examples) {
    }

    /**
     * The audit of a table as {@code adopt} runs it first: the table's own checks (no source), under the model's key
     * and meta column names.
     */
    static AuditCommand of(String table, List<String> keys, String updatedAt, String validFrom, String validTo,
                           String validToCurrent) {
        AuditCommand a = new AuditCommand();
        a.table = table;
        a.keys = keys;
        a.updatedAt = updatedAt;
        a.validFrom = validFrom;
        a.validTo = validTo;
        a.validToCurrent = validToCurrent;
        return a;
    }

    /** As above, under the model's meta column names (deletions read from its change type and deletion flag). */
    static AuditCommand of(String table, List<String> keys, ColumnNames names, String validToCurrent) {
        AuditCommand a = of(table, keys, names.updatedAt(), names.validFrom(), names.validTo(), validToCurrent);
        a.changeType = names.changeType();
        a.isDeleted = names.isDeleted();
        a.openedSeq = names.openedSeq();
        return a;
    }

    /** Runs the checks. */
    List<Finding> findings(Sql sql) throws SQLException {
        return audit(sql);
    }

    @Override
    public Integer call() throws SQLException {
        List<Finding> findings;
        try (HikariDataSource dataSource = connection.open(); Connection c = dataSource.getConnection()) {
            Sql.readOnly(c);
            findings = audit(new Sql(c));
        }
        PrintWriter out = spec.commandLine().getOut();
        long total = findings.stream().mapToLong(Finding::count).sum();
        if (json) {
            out.println(json(findings, total));
        } else {
            print(out, findings, total);
        }
        out.flush();
        return total == 0 ? ExitCodes.OK : ExitCodes.AUDIT_PROBLEMS;
    }

    private List<Finding> audit(Sql sql) throws SQLException {
        TableName name;
        try {
            name = TableName.parse("--table", table);
        } catch (ItersnapException e) {
            throw new ConfigException(e.getMessage(), e);
        }
        String t = sql.table(name.parts());
        List<Sql.Column> columns;
        try {
            columns = sql.describe("SELECT * FROM " + t + " WHERE 1 = 0");
        } catch (SQLException e) {
            throw new ConfigException("cannot read table " + table + ": " + ModelInspection.firstLine(e.getMessage()), e);
        }
        List<String> k = new ArrayList<>();
        for (String key : keys) {
            k.add(column(sql, columns, "--key", key));
        }
        String u = column(sql, columns, "--updated-at", updatedAt);
        String vf = column(sql, columns, "--valid-from", validFrom);
        String vt = column(sql, columns, "--valid-to", validTo);
        String keyList = String.join(", ", k);
        String current = vt + " IS NULL";
        if (validToCurrent != null) {
            String lit = validToCurrent.strip();
            if (lit.length() > 1 && lit.startsWith("'") && lit.endsWith("'")) {
                lit = lit.substring(1, lit.length() - 1).strip();
            }
            if (!lit.matches("[0-9A-Za-z :.+\\-]{1,40}")) {
                throw new ConfigException("option --valid-to-current expected a date, time or number literal such as "
                        + "9999-12-31, got '" + validToCurrent + "'");
            }
            current = "(" + vt + " IS NULL OR " + vt + " = CAST('" + lit + "' AS " + Sql.find(columns, validTo)
                    .typeName() + "))";
        }
        // versions that start at the same time (a version that lasts no time: deleted, or changed again, at the time
        // it opened) are ordered by the batch that opened them where the table records it, else by updated_at
        Sql.Column opened = Sql.find(columns, openedSeq);
        String order = vf + ", " + vt + " NULLS LAST, " + (opened == null ? "" : sql.quote(opened.name()) + ", ") + u;
        // deletions, where the table records them: a version closed by one (change type 'delete') or a deletion record
        // (hard_deletes: new_record) ends the key's life; the next version is a return, which starts at the later of
        // its updated_at and the deletion (so its updated_at may be earlier), and the gap before it is the absence
        Sql.Column ctColumn = Sql.find(columns, changeType);
        Sql.Column delColumn = Sql.find(columns, isDeleted);
        String record = delColumn == null ? "0" : "CASE WHEN " + (delColumn.jdbcType() == java.sql.Types.BOOLEAN
                || delColumn.jdbcType() == java.sql.Types.BIT ? sql.quote(delColumn.name()) + " = TRUE"
                : "UPPER(" + sql.quote(delColumn.name()) + ") = 'TRUE'") + " THEN 1 ELSE 0 END";
        String ends = ctColumn == null ? record : "CASE WHEN " + sql.quote(ctColumn.name()) + " = 'delete' THEN 1 ELSE "
                + record + " END";
        String v = "SELECT " + keyList + ", " + vf + " AS vf, " + vt + " AS vt, " + u + " AS u, " + record
                + " AS drec, " + ends + " AS ends, LAG(" + ends + ") OVER (PARTITION BY " + keyList + " ORDER BY "
                + order + ") AS prev_ends, "
                + "LAG(" + u + ") OVER (PARTITION BY " + keyList + " ORDER BY " + order + ") AS prev_u, "
                + "LAG(" + vf + ") OVER (PARTITION BY " + keyList + " ORDER BY " + order + ") AS prev_vf, "
                + "LEAD(" + vf + ") OVER (PARTITION BY " + keyList + " ORDER BY " + order + ") AS next_vf FROM " + t;
        List<String> keyHeaders = keys.stream().toList();
        List<Finding> out = new ArrayList<>();
        out.add(check(sql, "out_of_order", "versions whose updated_at is earlier than the previous version's",
                "SELECT " + keyList + ", vf, u, prev_vf, prev_u FROM (" + v + ") v WHERE u < prev_u AND drec = 0 "
                        + "AND prev_ends = 0",
                headers(keyHeaders, "valid_from", "updated_at", "previous_valid_from", "previous_updated_at")));
        out.add(check(sql, "overlap", "versions still valid when the next version of the key starts",
                "SELECT " + keyList + ", vf, vt, next_vf FROM (" + v + ") v WHERE next_vf IS NOT NULL "
                        + "AND (vt IS NULL OR next_vf < vt)",
                headers(keyHeaders, "valid_from", "valid_to", "next_valid_from")));
        out.add(check(sql, "gap", "versions closed before the next version of the key starts",
                "SELECT " + keyList + ", vf, vt, next_vf FROM (" + v + ") v WHERE vt IS NOT NULL "
                        + "AND next_vf IS NOT NULL AND next_vf > vt AND ends = 0",
                headers(keyHeaders, "valid_from", "valid_to", "next_valid_from")));
        out.add(check(sql, "multiple_current", "keys with more than one current version (valid_to NULL"
                        + (validToCurrent == null ? "" : " or " + validToCurrent) + ")",
                "SELECT " + keyList + ", COUNT(*) AS versions FROM " + t + " WHERE " + current + " GROUP BY "
                        + keyList + " HAVING COUNT(*) > 1",
                headers(keyHeaders, "current_versions")));
        out.add(check(sql, "inverted", "versions whose valid_to is before their valid_from",
                "SELECT " + keyList + ", " + vf + ", " + vt + " FROM " + t + " WHERE " + vt + " < " + vf,
                headers(keyHeaders, "valid_from", "valid_to")));
        if (source != null || sequenceBy != null) {
            out.add(missing(sql, t, k, u, keyHeaders));
        }
        return out;
    }

    /** Source (key, updated_at) pairs that no version carries, with the first batch holding each. */
    private Finding missing(Sql sql, String t, List<String> tableKeys, String u, List<String> keyHeaders)
            throws SQLException {
        if (source == null || sequenceBy == null) {
            throw new ConfigException("--source and --sequence-by go together: the raw batches and the column naming "
                    + "a row's batch");
        }
        List<Sql.Column> sourceColumns;
        try {
            sourceColumns = sql.describe("SELECT * FROM (" + source + ") s WHERE 1 = 0");
        } catch (SQLException e) {
            throw new ConfigException("cannot run --source: " + ModelInspection.firstLine(e.getMessage()), e);
        }
        List<String> sk = new ArrayList<>();
        for (String key : keys) {
            sk.add("s." + sourceColumn(sql, sourceColumns, "--key", key));
        }
        String su = "s." + sourceColumn(sql, sourceColumns, "--source-updated-at", sourceUpdatedAt);
        String seq = "s." + sourceColumn(sql, sourceColumns, "--sequence-by", sequenceBy);
        List<String> match = new ArrayList<>();
        List<String> keyPresent = new ArrayList<>();
        for (int i = 0; i < sk.size(); i++) {
            match.add("t." + tableKeys.get(i) + " = " + sk.get(i));
            keyPresent.add(sk.get(i) + " IS NOT NULL AND ");
        }
        String keyList = String.join(", ", sk);
        String query = "SELECT " + keyList + ", " + su + ", MIN(" + seq + ") FROM (" + source + ") s WHERE "
                + String.join("", keyPresent) + seq + " IS NOT NULL AND " + su + " IS NOT NULL AND NOT EXISTS (SELECT 1 FROM " + t + " t WHERE "
                + String.join(" AND ", match) + " AND t." + u + " = " + su + ") GROUP BY " + keyList + ", " + su;
        return check(sql, "missing_versions", "source rows (key, updated_at) that no version of the table carries",
                query, headers(keyHeaders, "updated_at", "first_batch"));
    }

    private String sourceColumn(Sql sql, List<Sql.Column> columns, String option, String name) {
        Sql.Column c = Sql.find(columns, name);
        if (c == null) {
            throw new ConfigException("option " + option + " names column '" + name + "', which --source does not "
                    + "return; its columns: " + columns.stream().map(Sql.Column::name).toList());
        }
        return sql.quote(c.name());
    }

    private static List<String> headers(List<String> keys, String... more) {
        List<String> h = new ArrayList<>(keys);
        h.addAll(List.of(more));
        return h;
    }

    static Finding check(Sql sql, String check, String description, String query, List<String> headers)
            throws SQLException {
        long count = ((Number) sql.rows("SELECT COUNT(*) FROM (" + query + ") x").get(0).get(0)).longValue();
        List<List<String>> examples = new ArrayList<>();
        if (count > 0) {
            for (List<Object> row : sql.rows(EXAMPLES, query + " ORDER BY 1")) {
                examples.add(row.stream().map(Sql::text).toList().stream().map(s -> s == null ? "" : s).toList());
            }
        }
        return new Finding(check, description, count, headers, examples);
    }

    /** The table's column called {@code name} (case-insensitive), quoted. */
    private String column(Sql sql, List<Sql.Column> columns, String option, String name) {
        Sql.Column c = Sql.find(columns, name);
        if (c == null) {
            throw new ConfigException("option " + option + " names column '" + name + "', which table " + table
                    + " does not have; its columns: " + columns.stream().map(Sql.Column::name).toList());
        }
        return sql.quote(c.name());
    }

    void print(PrintWriter out, List<Finding> findings, long total) {
        print(out, findings, total, true);
    }

    /** The findings as text; the closing verdict line with the exit code only when {@code withExitCode}. */
    void print(PrintWriter out, List<Finding> findings, long total, boolean withExitCode) {
        out.println("audit of " + table + " (key " + String.join(", ", keys) + ", updated_at " + updatedAt
                + ", validity " + validFrom + " .. " + validTo + ")");
        for (Finding f : findings) {
            out.println();
            out.println(f.check() + ": " + f.count() + " - " + f.description());
            if (!f.examples().isEmpty()) {
                TablePrinter.print(out, f.headers(), f.examples());
            }
        }
        out.println();
        if (withExitCode) {
            out.println(total == 0 ? "clean: no problem found" : "problems found: " + total
                    + " (exit code " + ExitCodes.AUDIT_PROBLEMS + ")");
        }
    }

    private String json(List<Finding> findings, long total) {
        ObjectMapper mapper = new ObjectMapper();
        ObjectNode o = jsonNode(mapper, findings, total);
        try {
            return mapper.writeValueAsString(o);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The findings as the JSON object {@code --json} prints. */
    ObjectNode jsonNode(ObjectMapper mapper, List<Finding> findings, long total) {
        ObjectNode o = mapper.createObjectNode().put("table", table).put("clean", total == 0).put("problems", total);
        ObjectNode checks = o.putObject("checks");
        for (Finding f : findings) {
            ObjectNode c = checks.putObject(f.check()).put("description", f.description()).put("count", f.count());
            ArrayNode ex = c.putArray("examples");
            for (List<String> row : f.examples()) {
                ObjectNode e = ex.addObject();
                for (int i = 0; i < f.headers().size(); i++) {
                    e.put(f.headers().get(i), row.get(i));
                }
            }
        }
        return o;
    }
}
