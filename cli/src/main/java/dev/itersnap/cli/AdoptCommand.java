package dev.itersnap.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.zaxxer.hikari.HikariDataSource;
import dev.itersnap.core.AdoptionPlan;
import dev.itersnap.core.AuditReport;
import dev.itersnap.core.BatchResult;
import dev.itersnap.core.ColumnNames;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.RunResult;
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
 * {@code itersnap adopt}: takes over an existing SCD Type 2 table (a dbt snapshot) as the model's history through a
 * sequence, after auditing it.
 */
@Command(name = "adopt", mixinStandardHelpOptions = true,
        description = {"Takes over the table the model's target names (a dbt snapshot, or any SCD Type 2 table with "
                + "the model's meta column names) as its history through batch SEQ.",
                "The table is audited first (the checks of audit); problems stop the adoption with exit code 5 unless "
                        + "--accept-problems. The source's batches up to SEQ (inclusive) are declared applied, the "
                        + "versions kept as they are, the bookkeeping columns the table lacks added and filled. Later "
                        + "runs apply the batches after SEQ; a batch at or before SEQ arriving later is refused "
                        + "(LATE_BEFORE_ADOPTION, exit code 7).",
                "--rebuild-from SEQ0 (instead of --through) is the repair path: the versions that closed before "
                        + "SEQ0 are kept, each key's version current then reopened, the rest rebuilt from the source's "
                        + "batches from SEQ0 on; the audit is listed but does not stop it, and the versions removed, "
                        + "added and re-dated are listed against the table as it was, kept as <target>_before_adopt.",
                "Refuses to start without --yes; --dry-run prints the audit and the batches it would declare "
                        + "applied, and writes nothing."})
public final class AdoptCommand implements Callable<Integer> {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Spec
    private CommandSpec spec;

    @Mixin
    private ConnectionOptions connection;

    @Mixin
    private ModelOption model;

    @Option(names = "--through", paramLabel = "SEQ", description = "the last batch the table holds, as text: "
            + "2024-03-01, 2024-03-01 06:00:00, 42")
    private String through;

    @Option(names = "--rebuild-from", paramLabel = "SEQ0", description = "instead of --through: keep the versions "
            + "that closed before batch SEQ0 (the oldest the source holds) and rebuild the rest from the source's "
            + "batches in order; the table as it was is kept as <target>_before_adopt and the changes are listed")
    private String rebuildFrom;

    @Option(names = "--accept-problems", description = "adopt even when the audit finds problems (they are listed "
            + "and stay in the adopted versions)")
    private boolean acceptProblems;

    @Option(names = "--yes", description = "confirm the adoption (it adds columns to the table and writes the ledger)")
    private boolean yes;

    @Option(names = "--dry-run", description = "print the audit and the batches that would be declared applied; "
            + "write nothing")
    private boolean dryRun;

    @Option(names = "--json", description = "print the audit and the result (or the plan) as one JSON object on "
            + "stdout")
    private boolean json;

    @Override
    public Integer call() throws SQLException {
        ModelSettings settings = model.load();
        String target = settings.target().toString();
        if ((through == null) == (rebuildFrom == null)) {
            throw new ConfigException("adopt needs one of --through SEQ (the last batch the table holds) and "
                    + "--rebuild-from SEQ0 (the oldest batch the source holds)");
        }
        if (rebuildFrom != null) {
            return rebuild(settings, target);
        }
        if (!yes && !dryRun) {
            throw new ConfigException("adopt adds bookkeeping columns to " + target + " and declares the batches of "
                    + "model '" + settings.name() + "' up to " + through + " applied; add --yes to confirm (or "
                    + "--dry-run to see the audit and the plan)");
        }
        PrintWriter out = spec.commandLine().getOut();
        try (HikariDataSource dataSource = connection.open(settings)) {
            // the batches it declares applied are the library's (the source's up to the point, and the point)
            var snapshots = connection.snapshots(dataSource, e -> { });
            AdoptionPlan plan = snapshots.planAdopt(settings, through);
            AuditReport audit = snapshots.audit(settings);
            List<String> declared = texts(plan);
            long problems = audit.problemCount();
            boolean refused = problems > 0 && !acceptProblems;
            ObjectNode o = JSON.createObjectNode().put("model", settings.name()).put("target", target)
                    .put("through", through).put("dry_run", dryRun);
            o.set("audit", AuditCommand.jsonNode(JSON, audit));
            if (!json) {
                AuditCommand.print(out, audit, false);
            }
            if (refused || dryRun) {
                o.put("adopted", false);
                ArrayNode batches = o.putArray("batches_to_declare");
                declared.forEach(batches::add);
                if (json) {
                    out.println(o);
                } else if (refused) {
                    out.println("not adopted: the audit found " + problems + " problems (exit code "
                            + ExitCodes.AUDIT_PROBLEMS + "); nothing was written. Repair the table, or adopt it as "
                            + "it is with --accept-problems");
                } else {
                    out.println("dry run: would adopt " + target + " through " + through + ", declaring "
                            + ConsoleListener.batches(declared.size()) + " applied (" + String.join(", ", declared) + ")"
                            + (problems > 0 ? " with the problems above" : "") + "; nothing was written");
                }
                out.flush();
                return refused ? ExitCodes.AUDIT_PROBLEMS : ExitCodes.OK;
            }
            RunResult r = connection.snapshots(dataSource, new ConsoleListener(spec.commandLine().getErr(), ""))
                    .adopt(settings, through);
            long versions = r.batches().stream().mapToLong(BatchResult::inserted).sum();
            o.put("adopted", true).put("run_id", r.runId()).put("versions", versions);
            ArrayNode batches = o.putArray("batches_declared");
            r.batches().forEach(b -> batches.add(b.sequenceText()));
            if (json) {
                out.println(o);
            } else {
                out.println("adopted " + target + " through " + through + " as the history of model '"
                        + settings.name() + "': " + versions + " versions kept, "
                        + ConsoleListener.batches(r.batches().size()) + " declared applied" + (problems > 0 ? ", with the " + problems + " problems "
                        + "above" : "") + ". run applies the batches after " + through + " from now on");
            }
            out.flush();
            return ExitCodes.OK;
        }
    }

    /** {@code --rebuild-from}: audit (listed), keep the table as it was, adopt rebuilding, list the changes. */
    private int rebuild(ModelSettings settings, String target) throws SQLException {
        if (!yes && !dryRun) {
            throw new ConfigException("adopt --rebuild-from rebuilds " + target + " from batch " + rebuildFrom
                    + " on (the table as it is is kept as " + backupName(settings) + "); add --yes to confirm (or "
                    + "--dry-run to see the audit and the plan)");
        }
        PrintWriter out = spec.commandLine().getOut();
        ObjectNode o = JSON.createObjectNode().put("model", settings.name()).put("target", target)
                .put("rebuild_from", rebuildFrom).put("dry_run", dryRun);
        try (HikariDataSource dataSource = connection.open(settings)) {
            String backup;
            String table;
            List<String> rebuilt = new ArrayList<>();
            try (Connection c = dataSource.getConnection()) {
                Sql sql = new Sql(c);
                var snapshots = connection.snapshots(dataSource, e -> { });
                AdoptionPlan plan = snapshots.planAdoptRebuildingFrom(settings, rebuildFrom);
                AuditReport audit = snapshots.audit(settings);
                o.set("audit", AuditCommand.jsonNode(JSON, audit));
                if (!json) {
                    out.println("before the rebuild:");
                    AuditCommand.print(out, audit, false);
                }
                rebuilt.addAll(texts(plan));
                table = sql.table(settings.target().parts());
                List<String> parts = new ArrayList<>(settings.target().parts());
                parts.set(parts.size() - 1, parts.get(parts.size() - 1) + "_before_adopt");
                backup = sql.table(parts);
                String schema = parts.size() > 1 ? sql.fold(parts.get(parts.size() - 2)) : null;
                if (sql.tableExists(schema, sql.fold(parts.get(parts.size() - 1)))) {
                    throw new ConfigException("table " + backupName(settings) + " exists (the table as it was before "
                            + "an earlier adopt --rebuild-from); drop or rename it first");
                }
                if (dryRun) {
                    ArrayNode batches = o.put("adopted", false).putArray("batches_to_rebuild");
                    rebuilt.forEach(batches::add);
                    out.println(json ? o.toString() : "dry run: would keep the versions of " + target + " that closed "
                            + "before " + rebuildFrom + ", rebuild from the source's batches " + rebuilt + ", and keep "
                            + "the table as it is as " + backupName(settings) + "; nothing was written");
                    out.flush();
                    return ExitCodes.OK;
                }
                c.setAutoCommit(true);
                try (var st = c.createStatement()) {
                    st.execute("CREATE TABLE " + backup + " AS SELECT * FROM " + table);
                }
            }
            RunResult r;
            try {
                r = connection.snapshots(dataSource, new ConsoleListener(spec.commandLine().getErr(), ""))
                        .adoptRebuildingFrom(settings, rebuildFrom);
            } catch (RuntimeException e) {
                if (adoptedNothing(dataSource, settings)) {
                    dropQuietly(dataSource, backup); // the copy would only block the next attempt
                } else {
                    // adopted, then the rebuild's apply failed (a rerun of `run` finishes it): the copy is the only
                    // record of the table as it was, so it stays
                    spec.commandLine().getErr().println("itersnap: the adoption was recorded before the failure; "
                            + backupName(settings) + " keeps the table as it was before this adopt");
                }
                throw e;
            }
            o.put("adopted", true).put("run_id", r.runId()).put("before_table", backupName(settings));
            ArrayNode batches = o.putArray("batches_rebuilt");
            r.batches().forEach(b -> batches.add(b.sequenceText()));
            List<Change> changes;
            try (Connection c = dataSource.getConnection()) {
                Sql.readOnly(c);
                changes = changes(new Sql(c), settings, backup, table);
            }
            AuditReport after = connection.snapshots(dataSource, e -> { }).audit(settings);
            ObjectNode ch = o.putObject("changes");
            for (Change f : changes) {
                ObjectNode node = ch.putObject(f.check()).put("description", f.description()).put("count", f.count());
                ArrayNode ex = node.putArray("examples");
                for (List<String> row : f.examples()) {
                    ObjectNode e = ex.addObject();
                    for (int i = 0; i < f.headers().size(); i++) {
                        e.put(f.headers().get(i), row.get(i));
                    }
                }
            }
            long problemsAfter = after.problemCount();
            o.set("audit_after", AuditCommand.jsonNode(JSON, after));
            if (json) {
                out.println(o);
            } else {
                out.println("adopted " + target + " as the history of model '" + settings.name() + "', rebuilt from "
                        + rebuildFrom + " (" + ConsoleListener.batches(r.batches().size()) + " applied); the table as it was is "
                        + backupName(settings) + ". Changes against it:");
                for (Change f : changes) {
                    out.println();
                    out.println(f.check() + ": " + f.count() + " - " + f.description());
                    if (!f.examples().isEmpty()) {
                        TablePrinter.print(out, f.headers(), f.examples());
                    }
                }
                out.println();
                out.println("audit after the rebuild: " + (problemsAfter == 0 ? "clean" : problemsAfter
                        + " problems (in the kept versions before " + rebuildFrom + ")"));
            }
            out.flush();
            return ExitCodes.OK;
        }
    }

    /** The plan's batches as the ledger writes them. */
    private static List<String> texts(AdoptionPlan plan) {
        return plan.batches().stream().map(SequenceText::of).toList();
    }

    /** Whether the model's ledger is still empty (an adoption that failed before recording anything). */
    private boolean adoptedNothing(HikariDataSource dataSource, ModelSettings settings) {
        try {
            return connection.snapshots(dataSource, e -> { }).inspect(settings).ledger().isEmpty();
        } catch (RuntimeException unreadable) {
            return false; // when in doubt, keep the copy
        }
    }

    private static void dropQuietly(HikariDataSource dataSource, String table) {
        try (Connection c = dataSource.getConnection(); var st = c.createStatement()) {
            c.setAutoCommit(true);
            st.execute("DROP TABLE " + table);
        } catch (SQLException ignored) {
            // the adoption's own failure is what is reported
        }
    }

    private static String backupName(ModelSettings settings) {
        return settings.target() + "_before_adopt";
    }

    /** One kind of change the rebuild made: its count and up to five examples under {@code headers}. */
    record Change(String check, String description, long count, List<String> headers, List<List<String>> examples) {
    }

    /** The count of {@code query}'s rows and its first five as text. */
    private static Change change(Sql sql, String check, String description, String query, List<String> headers)
            throws SQLException {
        long count = ((Number) sql.rows("SELECT COUNT(*) FROM (" + query + ") x").get(0).get(0)).longValue();
        List<List<String>> examples = new ArrayList<>();
        if (count > 0) {
            // setMaxRows is a hint (DuckDB's driver ignores it)
            for (List<Object> row : sql.rows(5, query + " ORDER BY 1").stream().limit(5).toList()) {
                examples.add(row.stream().map(v -> v == null ? "" : Sql.text(v)).toList());
            }
        }
        return new Change(check, description, count, headers, examples);
    }

    /**
     * The versions removed, added and re-dated, matched by key and updated_at between the table as it was and as it
     * is now.
     */
    private static List<Change> changes(Sql sql, ModelSettings settings, String before, String after)
            throws SQLException {
        ColumnNames n = settings.columnNames();
        List<String> keys = settings.uniqueKey();
        String u = sql.id(n.updatedAt());
        String vf = sql.id(n.validFrom());
        String vt = sql.id(n.validTo());
        // y is referred to from inside the subqueries over the other table, whose columns are the source's: Spark
        // resolves y.x against the subquery's own columns first, so the alias is one no source column can have
        String y = "itersnap_outer_y";
        List<String> match = new ArrayList<>();
        List<String> cols = new ArrayList<>();
        for (String k : keys) {
            match.add("x." + sql.id(k) + " = " + y + "." + sql.id(k));
            cols.add(y + "." + sql.id(k));
        }
        match.add("x." + u + " = " + y + "." + u);
        String keyList = String.join(", ", cols);
        List<String> headers = new ArrayList<>(keys);
        headers.addAll(List.of("updated_at", "valid_from", "valid_to"));
        List<String> redatedHeaders = new ArrayList<>(keys);
        redatedHeaders.addAll(List.of("updated_at", "valid_from_was", "valid_to_was", "valid_from", "valid_to"));
        String on = String.join(" AND ", match);
        return List.of(
                change(sql, "removed", "versions the table had that the rebuild does not",
                        "SELECT " + keyList + ", " + y + "." + u + ", " + y + "." + vf + ", " + y + "." + vt + " FROM "
                                + before + " " + y + " WHERE NOT EXISTS (SELECT 1 FROM " + after + " x WHERE " + on + ")", headers),
                change(sql, "added", "versions the rebuild has that the table did not",
                        "SELECT " + keyList + ", " + y + "." + u + ", " + y + "." + vf + ", " + y + "." + vt + " FROM "
                                + after + " " + y + " WHERE NOT EXISTS (SELECT 1 FROM " + before + " x WHERE " + on + ")", headers),
                change(sql, "redated", "versions kept with another validity",
                        "SELECT " + keyList + ", " + y + "." + u + ", x." + vf + " AS vf_was, x." + vt + " AS vt_was, "
                                + y + "." + vf + " AS vf_now, " + y + "." + vt + " AS vt_now FROM " + after + " " + y
                                + " JOIN " + before + " x ON " + on + " WHERE x." + vf + " <> " + y + "." + vf + " OR x."
                                + vt + " IS DISTINCT FROM " + y + "." + vt, redatedHeaders));
    }
}
