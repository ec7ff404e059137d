package dev.itersnap.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.zaxxer.hikari.HikariDataSource;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.internal.MetadataStore;
import dev.itersnap.internal.MetadataStore.ErrorCount;
import dev.itersnap.internal.MetadataStore.LedgerRow;
import dev.itersnap.internal.MetadataStore.RunRow;
import dev.itersnap.spi.Dialect;
import dev.itersnap.spi.LockState;
import dev.itersnap.spi.MetadataSchema;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.function.UnaryOperator;

/** {@code itersnap status}: what the metadata tables say about one model; reads only. */
@Command(name = "status", mixinStandardHelpOptions = true,
        description = {"Shows one model's state from its metadata tables; writes nothing.",
                "Applied batches (ledger), the "
                + "last runs (run log), rows set aside (error log) by reason and by batch, and the model lock: held "
                + "only while a live run holds it (H2, PostgreSQL, DuckDB and Databricks ask the database), free when a "
                + "run that did not finish left it."})
public final class StatusCommand implements Callable<Integer> {
    @Spec
    private CommandSpec spec;

    @Mixin
    private ConnectionOptions connection;

    @Mixin
    private ModelOption model;

    @Option(names = "--runs", paramLabel = "N", defaultValue = "10", description = "how many recent runs to show "
            + "(default: ${DEFAULT-VALUE})")
    private int runs;

    @Option(names = "--json", description = "print the status as one JSON object on stdout")
    private boolean json;

    /**
     * @param running the run the lock is held by (the newest run the log shows running), when held
     * @param leftBy  the newest run, when the log shows it running but the database says the lock is free: it died
     */
    record Status(String model, String metadataSchema, boolean metadataExists, List<LedgerRow> ledger,
                  List<RunRow> runs, List<ErrorCount> errorsByReason, List<ErrorCount> errorsBySequence,
                  RunRow running, LockState lock, RunRow leftBy) {
    }

    @Override
    public Integer call() throws SQLException {
        if (runs < 0) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "option '--runs' expected a number "
                    + "of runs of zero or more, got " + runs);
        }
        ModelSettings settings = model.load();
        Status s;
        try (HikariDataSource dataSource = connection.open(); Connection c = dataSource.getConnection()) {
            Sql.readOnly(c);
            Dialect dialect = connection.dialect(dataSource);
            s = read(settings, c, dialect, MetadataStore.reading(c, dialect, settings));
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

    private Status read(ModelSettings settings, Connection c, Dialect dialect, MetadataStore store)
            throws SQLException {
        String name = settings.name();
        if (!store.exists()) {
            return new Status(name, store.schemaName(), false, List.of(), List.of(), List.of(), List.of(), null,
                    LockState.unknown(), null);
        }
        Sql sql = new Sql(c);
        List<LedgerRow> ledger = new ArrayList<>(store.ledgerRows());
        sortBySequence(settings, sql, ledger);
        List<RunRow> recent = store.runs(0);
        RunRow running = recent.stream().filter(r -> "running".equals(r.status())).findFirst().orElse(null);
        UnaryOperator<String> fold = dialect.identifierFolding() != null ? dialect.identifierFolding() : sql::fold;
        LockState lock = dialect.lockState(c, new MetadataSchema(store.schemaName(), fold), name);
        RunRow leftBy = null;
        if (lock.held() == LockState.Held.FREE) {
            // a run the log shows running while nobody holds the lock died; only the newest run is worth naming
            // (a later run took the lock after an older one and recovered what it left)
            leftBy = !recent.isEmpty() && "running".equals(recent.get(0).status()) ? recent.get(0) : null;
            running = null;
        }
        recent = recent.subList(0, Math.min(Math.max(runs, 0), recent.size()));
        return new Status(name, store.schemaName(), true, ledger, recent, store.errorCounts(false),
                store.errorCounts(true), running, lock, leftBy);
    }

    /** Ledger rows in business order when the source can be described, else in the order they were applied. */
    private static void sortBySequence(ModelSettings settings, Sql sql, List<LedgerRow> ledger) {
        try {
            ModelInspection m = ModelInspection.of(settings, sql);
            ledger.sort((a, b) -> m.sequenceType.compare(m.typed(a.sequence()), m.typed(b.sequence())));
        } catch (RuntimeException e) {
            ledger.sort(Comparator.comparing(r -> String.valueOf(r.appliedAt())));
        }
    }

    private static Long durationMs(RunRow run) {
        LocalDateTime start = time(run.startedAt());
        LocalDateTime end = time(run.finishedAt());
        return start == null || end == null ? null : Duration.between(start, end).toMillis();
    }

    private static LocalDateTime time(Object v) {
        return v instanceof Timestamp t ? t.toLocalDateTime() : v instanceof LocalDateTime l ? l : null;
    }

    /** The lock as the database tells it (when the dialect can), else as the run log does. */
    static String lockLine(Status s) {
        RunRow r = s.running();
        String db = s.lock().holder() == null ? "" : "; the database says: " + s.lock().holder();
        switch (s.lock().held()) {
            case HELD:
                return "held by " + (r == null ? "a run not in the run log yet" : "run " + r.runId() + " ("
                        + r.operation() + ") of " + r.holder() + " since " + Sql.text(r.startedAt())) + db;
            case FREE:
                if (s.leftBy() != null) {
                    RunRow d = s.leftBy();
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
        for (LedgerRow r : s.ledger()) {
            rows.add(java.util.Arrays.asList(r.sequence(), "" + r.sourceRows(), "" + r.duplicateRows(),
                    "" + r.inserted(), "" + r.updated(), "" + r.deleted(), "" + r.rejected(),
                    r.reproduced() ? "yes" : "", r.runId(), Sql.text(r.appliedAt())));
        }
        TablePrinter.print(out, List.of("sequence", "source", "duplicates", "inserted", "updated", "deleted",
                        "rejected", "reproduced", "run_id", "applied_at"), rows,
                false, true, true, true, true, true, true, false, false, false);
        out.println();
        out.println("recent runs (newest first):");
        rows = new ArrayList<>();
        for (RunRow r : s.runs()) {
            Long ms = durationMs(r);
            rows.add(java.util.Arrays.asList(r.runId(), r.operation(), r.status(), Sql.text(r.startedAt()),
                    ms == null ? null : ms + " ms", Sql.text(r.batchesApplied()),
                    Boolean.TRUE.equals(r.lateBatch()) ? "yes" : "", r.replayPoint(), r.errorMessage()));
        }
        TablePrinter.print(out, List.of("run_id", "operation", "status", "started_at", "duration", "batches", "late",
                "replay_point", "error"), rows, false, false, false, false, true, true, false, false, false);
        out.println();
        out.println("rows set aside (error log) by reason:");
        rows = new ArrayList<>();
        for (ErrorCount r : s.errorsByReason()) {
            rows.add(List.of(r.reason(), "" + r.rows()));
        }
        TablePrinter.print(out, List.of("reason", "rows"), rows, false, true);
        if (!s.errorsBySequence().isEmpty()) {
            out.println();
            out.println("rows set aside by batch:");
            rows = new ArrayList<>();
            for (ErrorCount r : s.errorsBySequence()) {
                rows.add(java.util.Arrays.asList(r.sequence(), r.reason(), "" + r.rows()));
            }
            TablePrinter.print(out, List.of("sequence", "reason", "rows"), rows, false, false, true);
        }
    }

    private static String json(Status s) {
        ObjectMapper mapper = new ObjectMapper();
        ObjectNode o = mapper.createObjectNode().put("model", s.model()).put("metadata_schema", s.metadataSchema())
                .put("metadata_exists", s.metadataExists());
        ObjectNode lock = o.putObject("lock");
        boolean observed = s.lock().held() != LockState.Held.UNKNOWN;
        lock.put("held", observed ? s.lock().held() == LockState.Held.HELD : s.running() != null)
                .put("according_to", observed ? "database" : "run log");
        if (s.running() != null) {
            lock.put("run_id", s.running().runId()).put("operation", s.running().operation())
                    .put("holder", s.running().holder()).put("since", Sql.text(s.running().startedAt()));
        }
        if (s.lock().holder() != null) {
            lock.put("database_says", s.lock().holder());
        }
        if (s.leftBy() != null) {
            lock.putObject("left_by").put("run_id", s.leftBy().runId()).put("operation", s.leftBy().operation())
                    .put("holder", s.leftBy().holder()).put("since", Sql.text(s.leftBy().startedAt()))
                    .put("finished", false);
        }
        ArrayNode ledger = o.putArray("ledger");
        for (LedgerRow r : s.ledger()) {
            ledger.addObject().put("sequence", r.sequence()).put("run_id", r.runId())
                    .put("applied_at", Sql.text(r.appliedAt())).put("source_rows", r.sourceRows())
                    .put("duplicate_rows", r.duplicateRows()).put("inserted", r.inserted())
                    .put("updated", r.updated()).put("deleted", r.deleted()).put("rejected", r.rejected())
                    .put("reproduced", r.reproduced());
        }
        ArrayNode runs = o.putArray("runs");
        for (RunRow r : s.runs()) {
            ObjectNode run = runs.addObject().put("run_id", r.runId()).put("operation", r.operation())
                    .put("status", r.status()).put("started_at", Sql.text(r.startedAt()))
                    .put("finished_at", Sql.text(r.finishedAt())).put("duration_ms", durationMs(r));
            run.put("batches_applied", r.batchesApplied());
            run.put("late_batch", r.lateBatch());
            run.put("replay_point", r.replayPoint()).put("error", r.errorMessage()).put("holder", r.holder());
        }
        ArrayNode byReason = o.putArray("errors_by_reason");
        for (ErrorCount r : s.errorsByReason()) {
            byReason.addObject().put("reason", r.reason()).put("rows", r.rows());
        }
        ArrayNode bySeq = o.putArray("errors_by_sequence");
        for (ErrorCount r : s.errorsBySequence()) {
            bySeq.addObject().put("sequence", r.sequence()).put("reason", r.reason()).put("rows", r.rows());
        }
        try {
            return mapper.writeValueAsString(o);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
