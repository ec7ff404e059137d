package dev.itersnap.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.zaxxer.hikari.HikariDataSource;
import dev.itersnap.core.Inspection;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.core.Inspection.Batch;
import dev.itersnap.core.Inspection.Lock;
import dev.itersnap.core.Inspection.LockStatus;
import dev.itersnap.core.Inspection.Repair;
import dev.itersnap.core.Inspection.Run;
import dev.itersnap.core.Inspection.SetAsideCount;
import dev.itersnap.core.ModelSettings;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/** {@code itersnap status}: what the metadata tables say about one model ({@link Inspection}); reads only. */
@Command(name = "status", mixinStandardHelpOptions = true,
        description = {"Shows one model's state from its metadata tables (--config), or that of each model of a project "
                + "folder (--project: one table for them all, or a JSON array); writes nothing.",
                "Applied batches (ledger), the "
                + "last runs (run log), the last repairs with what each superseded, rows set aside (error log) by "
                + "reason and by batch, and the model lock: held "
                + "only while a live run holds it (H2, PostgreSQL, DuckDB and Databricks ask the database), free when a "
                + "run that did not finish left it."})
public final class StatusCommand implements Callable<Integer> {
    @Spec
    private CommandSpec spec;

    @Mixin
    private ConnectionOptions connection;

    @Mixin
    private ProjectOptions model;

    @Option(names = "--runs", paramLabel = "N", defaultValue = "10", description = "how many recent runs, and "
            + "repairs, to show (default: ${DEFAULT-VALUE})")
    private int runs;

    @Option(names = "--json", description = "print the status as one JSON object on stdout (with --project: a JSON "
            + "array of one such object per model, with its status and exit_code)")
    private boolean json;

    /** What status shows; {@code repairsError} says why the repairs could not be read (else null). */
    record Status(String model, String metadataSchema, boolean metadataExists, List<Batch> ledger, List<Run> runs,
                  List<SetAsideCount> errorsByReason, List<SetAsideCount> errorsBySequence, Lock lock,
                  List<Repair> repairs, String repairsError) {
    }

    @Override
    public Integer call() {
        if (runs < 0) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "option '--runs' expected a number "
                    + "of runs of zero or more, got " + runs);
        }
        if (model.isProject()) {
            return statusProject();
        }
        ModelSettings settings = model.load();
        Status s;
        try (HikariDataSource dataSource = connection.openReadOnly(settings)) {
            s = read(connection.snapshots(dataSource, e -> { }).inspect(settings));
        }
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            out.println(json(s));
        } else {
            print(out, s);
        }
        out.flush();
        return ExitCodes.OK;
    }

    /**
     * {@code status --project}: every selected model's status, one table (a row per model: its newest batch, last
     * run, lock and rows set aside) or one JSON array of today's objects; the exit code is the most severe of the
     * models' (a model's state is data, not a failure: only a model whose metadata cannot be read fails).
     */
    private int statusProject() {
        List<ProjectRun.Outcome<Status>> outcomes = ProjectRun.execute(spec, connection, model, true,
                (snapshots, progress, settings) -> read(snapshots.inspect(settings)));
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            out.println(ProjectRun.json(outcomes, StatusCommand::node));
        } else {
            List<List<String>> rows = new ArrayList<>();
            for (ProjectRun.Outcome<Status> o : outcomes) {
                Status s = o.result();
                if (s == null) {
                    rows.add(java.util.Arrays.asList(o.name(), o.status().replace('_', ' '),
                            String.valueOf(o.exitCode()), null, null, null, null, null, null,
                            RunCommand.shorten(o.error())));
                    continue;
                }
                Batch newest = s.ledger().isEmpty() ? null : s.ledger().get(s.ledger().size() - 1);
                Run last = s.runs().isEmpty() ? null : s.runs().get(0);
                long setAside = s.errorsByReason().stream().mapToLong(SetAsideCount::rows).sum();
                boolean never = newest == null && last == null;
                rows.add(java.util.Arrays.asList(o.name(), never ? "never run" : "read", String.valueOf(o.exitCode()),
                        never ? null : String.valueOf(s.ledger().size()), newest == null ? null : newest.sequence(),
                        newest == null ? null : seconds(newest.appliedAt()),
                        last == null ? null : status(last) + " " + seconds(last.finishedAt() != null
                                ? last.finishedAt() : last.startedAt()) + (last.operation().equals("run") ? ""
                                : " (" + last.operation() + ")"),
                        s.metadataExists() ? lockWord(s.lock()) : null,
                        never ? null : String.valueOf(setAside), null));
            }
            TablePrinter.print(out, List.of("model", "result", "exit", "batches", "newest batch", "applied at",
                    "last run", "lock", "set aside", "error"), rows, false, false, true, true, false, false, false,
                    false, true, false);
            out.println(ProjectRun.totals(outcomes, "read"));
        }
        out.flush();
        return ProjectRun.exitCode(outcomes);
    }

    /** A time of the metadata to the second, for a table cell. */
    private static String seconds(java.time.LocalDateTime t) {
        String text = Sql.text(t);
        return text == null || text.length() <= 19 ? text : text.substring(0, 19);
    }

    /** The lock in a word or three: held, free, free (left by a dead run), or the run log's view. */
    private static String lockWord(Lock lock) {
        return switch (lock.state()) {
            case HELD -> "held";
            case FREE -> lock.leftBy() == null ? "free" : "free (a run died)";
            default -> lock.holder() == null ? "free (run log)" : "held (run log)";
        };
    }

    private Status read(Inspection inspection) {
        String schema = inspection.metadataSchema();
        if (!inspection.metadataExists()) {
            return new Status(inspection.model(), schema, false, List.of(), List.of(), List.of(), List.of(),
                    new Lock(LockStatus.UNKNOWN, null, null, null), List.of(), null);
        }
        List<SetAsideCount> bySequence = inspection.setAsideCounts();
        List<Repair> repairs = List.of();
        String repairsError = null;
        if (runs > 0) {
            try {
                repairs = inspection.repairs(runs);
            } catch (ItersnapException e) {
                repairsError = e.getMessage();
            }
        }
        return new Status(inspection.model(), schema, true, inspection.ledger(),
                runs == 0 ? List.of() : inspection.runs(runs),
                byReason(bySequence), bySequence, inspection.lock(), repairs, repairsError);
    }

    /** Rows set aside by reason, most first. */
    private static List<SetAsideCount> byReason(List<SetAsideCount> bySequence) {
        Map<String, Long> sums = new LinkedHashMap<>();
        bySequence.forEach(c -> sums.merge(c.reason(), c.rows(), Long::sum));
        return sums.entrySet().stream().map(e -> new SetAsideCount(null, e.getKey(), e.getValue()))
                .sorted(Comparator.comparingLong(SetAsideCount::rows).reversed()
                        .thenComparing(SetAsideCount::reason)).toList();
    }

    private static Long durationMs(Run run) {
        Duration d = run.duration();
        return d == null ? null : d.toMillis();
    }

    /** The lock as the database tells it (when the dialect can), else as the run log does. */
    static String lockLine(Status s) {
        Lock lock = s.lock();
        Run r = lock.holder();
        String db = lock.databaseSays() == null ? "" : "; the database says: " + lock.databaseSays();
        switch (lock.state()) {
            case HELD:
                return "held by " + (r == null ? "a run not in the run log yet" : "run " + r.runId() + " ("
                        + r.operation() + ") of " + r.holder() + " since " + Sql.text(r.startedAt())) + db;
            case FREE:
                if (lock.leftBy() != null) {
                    Run d = lock.leftBy();
                    return "free (left by run " + d.runId() + " (" + d.operation() + ") of " + d.holder()
                            + ", started " + Sql.text(d.startedAt()) + ", which did not finish: the process ended "
                            + "without releasing it; the next run recovers what it left)" + db;
                }
                return "free" + db;
            default:
                return r == null ? "free according to the run log (no run has status 'running')"
                        : "held according to the run log by run " + r.runId() + " (" + r.operation() + ") of "
                                + r.holder() + " since " + Sql.text(r.startedAt()) + "; this database cannot tell "
                                + "whether that run still runs (a run that died without finishing stays 'running' in "
                                + "the run log)";
        }
    }

    private static String status(Run r) {
        return r.status().name().toLowerCase(java.util.Locale.ROOT);
    }

    private static void print(PrintWriter out, Status s) {
        out.println("model " + s.model() + " (metadata schema " + s.metadataSchema() + ")");
        if (!s.metadataExists()) {
            out.println("no metadata tables yet: the model has never run against this database");
            return;
        }
        out.println();
        out.println("lock: " + lockLine(s));
        out.println();
        out.println("applied batches (ledger):");
        List<List<String>> rows = new ArrayList<>();
        for (Batch r : s.ledger()) {
            rows.add(java.util.Arrays.asList(r.sequence(), "" + r.sourceRows(), "" + r.duplicateCopies(),
                    "" + r.inserted(), "" + r.updated(), "" + r.deleted(), "" + r.rejected(),
                    r.reproduced() ? "yes" : "", r.runId(), Sql.text(r.appliedAt())));
        }
        TablePrinter.print(out, List.of("sequence", "source", "duplicates", "inserted", "updated", "deleted",
                        "rejected", "reproduced", "run_id", "applied_at"), rows,
                false, true, true, true, true, true, true, false, false, false);
        out.println();
        out.println("recent runs (newest first):");
        rows = new ArrayList<>();
        for (Run r : s.runs()) {
            Long ms = durationMs(r);
            rows.add(java.util.Arrays.asList(r.runId(), r.operation(), status(r), Sql.text(r.startedAt()),
                    ms == null ? null : ms + " ms", Sql.text(r.batchesApplied()),
                    Boolean.TRUE.equals(r.lateBatch()) ? "yes" : "", r.replayPoint(), r.error()));
        }
        TablePrinter.print(out, List.of("run_id", "operation", "status", "started_at", "duration", "batches", "late",
                "replay_point", "error"), rows, false, false, false, false, true, true, false, false, false);
        if (!s.repairs().isEmpty() || s.repairsError() != null) {
            out.println();
            out.println("repairs (versions superseded, kept as they were; newest first):");
            if (s.repairsError() != null) {
                out.println("  cannot be read: " + s.repairsError());
            }
            rows = new ArrayList<>();
            for (Repair r : s.repairs()) {
                String recomputed = r.everyKey() ? "every key"
                        : r.keysRecomputed() + (r.keysRecomputed() == 1 ? " key" : " keys");
                rows.add(java.util.Arrays.asList(r.runId(), Sql.text(r.supersededAt()), recomputed, "" + r.keys(),
                        "" + r.versions(), "" + r.ledgerEntries(), String.join("; ", r.exampleKeys())));
            }
            if (!rows.isEmpty()) {
                TablePrinter.print(out, List.of("run_id", "superseded_at", "recomputed", "keys", "versions",
                        "ledger_entries", "example keys"), rows, false, false, false, true, true, true, false);
            }
        }
        out.println();
        out.println("rows set aside (error log) by reason:");
        rows = new ArrayList<>();
        for (SetAsideCount r : s.errorsByReason()) {
            rows.add(List.of(r.reason(), "" + r.rows()));
        }
        TablePrinter.print(out, List.of("reason", "rows"), rows, false, true);
        if (!s.errorsBySequence().isEmpty()) {
            out.println();
            out.println("rows set aside by batch:");
            rows = new ArrayList<>();
            for (SetAsideCount r : s.errorsBySequence()) {
                rows.add(java.util.Arrays.asList(r.sequence(), r.reason(), "" + r.rows()));
            }
            TablePrinter.print(out, List.of("sequence", "reason", "rows"), rows, false, false, true);
        }
    }

    private static String json(Status s) {
        try {
            return new ObjectMapper().writeValueAsString(node(s));
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The object of {@code status --json} (with {@code --project}, an element of the array). */
    static ObjectNode node(Status s) {
        ObjectMapper mapper = new ObjectMapper();
        ObjectNode o = mapper.createObjectNode().put("model", s.model()).put("metadata_schema", s.metadataSchema())
                .put("metadata_exists", s.metadataExists());
        ObjectNode lock = o.putObject("lock");
        Lock l = s.lock();
        boolean observed = l.state() != LockStatus.UNKNOWN;
        lock.put("held", observed ? l.state() == LockStatus.HELD : l.holder() != null)
                .put("according_to", observed ? "database" : "run log");
        if (l.holder() != null) {
            lock.put("run_id", l.holder().runId()).put("operation", l.holder().operation())
                    .put("holder", l.holder().holder()).put("since", Sql.text(l.since()));
        }
        if (l.databaseSays() != null) {
            lock.put("database_says", l.databaseSays());
        }
        if (l.leftBy() != null) {
            lock.putObject("left_by").put("run_id", l.leftBy().runId()).put("operation", l.leftBy().operation())
                    .put("holder", l.leftBy().holder()).put("since", Sql.text(l.leftBy().startedAt()))
                    .put("finished", false);
        }
        ArrayNode ledger = o.putArray("ledger");
        for (Batch r : s.ledger()) {
            ledger.addObject().put("sequence", r.sequence()).put("run_id", r.runId())
                    .put("applied_at", Sql.text(r.appliedAt())).put("source_rows", r.sourceRows())
                    .put("duplicate_rows", r.duplicateCopies()).put("inserted", r.inserted())
                    .put("updated", r.updated()).put("deleted", r.deleted()).put("rejected", r.rejected())
                    .put("reproduced", r.reproduced())
                    .put("fingerprint", r.fingerprint().name().toLowerCase(java.util.Locale.ROOT));
        }
        ArrayNode runs = o.putArray("runs");
        for (Run r : s.runs()) {
            ObjectNode run = runs.addObject().put("run_id", r.runId()).put("operation", r.operation())
                    .put("status", status(r)).put("started_at", Sql.text(r.startedAt()))
                    .put("finished_at", Sql.text(r.finishedAt())).put("duration_ms", durationMs(r));
            run.put("batches_applied", r.batchesApplied());
            run.put("late_batch", r.lateBatch());
            run.put("replay_point", r.replayPoint()).put("error", r.error()).put("holder", r.holder());
        }
        ArrayNode repairs = o.putArray("repairs");
        for (Repair r : s.repairs()) {
            ObjectNode repair = repairs.addObject().put("run_id", r.runId())
                    .put("superseded_at", Sql.text(r.supersededAt())).put("every_key", r.everyKey());
            repair.put("keys_recomputed", r.keysRecomputed());
            repair.put("keys", r.keys()).put("versions", r.versions()).put("ledger_entries", r.ledgerEntries());
            ArrayNode examples = repair.putArray("example_keys");
            r.exampleKeys().forEach(examples::add);
        }
        o.put("repairs_error", s.repairsError());
        ArrayNode byReason = o.putArray("errors_by_reason");
        for (SetAsideCount r : s.errorsByReason()) {
            byReason.addObject().put("reason", r.reason()).put("rows", r.rows());
        }
        ArrayNode bySeq = o.putArray("errors_by_sequence");
        for (SetAsideCount r : s.errorsBySequence()) {
            bySeq.addObject().put("sequence", r.sequence()).put("reason", r.reason()).put("rows", r.rows());
        }
        return o;
    }
}
