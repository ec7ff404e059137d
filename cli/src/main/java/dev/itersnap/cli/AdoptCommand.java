package dev.itersnap.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.zaxxer.hikari.HikariDataSource;
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

    @Option(names = "--through", required = true, paramLabel = "SEQ", description = "the last batch the table "
            + "holds, as text: 2024-03-01, 2024-03-01 06:00:00, 42")
    private String through;

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
        if (!yes && !dryRun) {
            throw new ConfigException("adopt adds bookkeeping columns to " + target + " and declares the batches of "
                    + "model '" + settings.name() + "' up to " + through + " applied; add --yes to confirm (or "
                    + "--dry-run to see the audit and the plan)");
        }
        ColumnNames n = settings.columnNames();
        AuditCommand audit = AuditCommand.of(target, settings.uniqueKey(), n.updatedAt(), n.validFrom(),
                n.validTo(), settings.validToCurrent());
        PrintWriter out = spec.commandLine().getOut();
        try (HikariDataSource dataSource = connection.open()) {
            List<AuditCommand.Finding> findings;
            List<String> declared = new ArrayList<>();
            try (Connection c = dataSource.getConnection()) {
                c.setReadOnly(true);
                Sql sql = new Sql(c);
                ModelInspection inspection = ModelInspection.of(settings, sql);
                Comparable<?> point = inspection.typed(through);
                findings = audit.findings(sql);
                for (Comparable<?> s : inspection.sourceSequences()) {
                    if (inspection.sequenceType.compare(s, point) <= 0) {
                        declared.add(inspection.text(s));
                    }
                }
                String pointText = inspection.text(point);
                if (!declared.contains(pointText)) {
                    declared.add(pointText);
                }
            }
            long problems = findings.stream().mapToLong(AuditCommand.Finding::count).sum();
            boolean refused = problems > 0 && !acceptProblems;
            ObjectNode o = JSON.createObjectNode().put("model", settings.name()).put("target", target)
                    .put("through", through).put("dry_run", dryRun);
            o.set("audit", audit.jsonNode(JSON, findings, problems));
            if (!json) {
                audit.print(out, findings, problems, false);
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
                            + declared.size() + " batches applied (" + String.join(", ", declared) + ")"
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
                        + settings.name() + "': " + versions + " versions kept, " + r.batches().size()
                        + " batches declared applied" + (problems > 0 ? ", with the " + problems + " problems "
                        + "above" : "") + ". run applies the batches after " + through + " from now on");
            }
            out.flush();
            return ExitCodes.OK;
        }
    }
}
