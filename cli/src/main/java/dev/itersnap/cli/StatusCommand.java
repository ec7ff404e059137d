package dev.itersnap.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.zaxxer.hikari.HikariDataSource;
import dev.itersnap.core.ModelSettings;
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

/** {@code itersnap status}: what the metadata tables say about one model; reads only. */
@Command(name = "status", mixinStandardHelpOptions = true,
        description = {"Shows one model's state from its metadata tables; writes nothing.",
                "Applied batches (ledger), the "
                + "last runs (run log), rows set aside (error log) by reason and by batch, and the run holding the "
                + "lock according to the run log."})
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

    record Status(String model, String metadataSchema, boolean metadataExists, List<List<Object>> ledger,
                  List<List<Object>> runs, List<List<Object>> errorsByReason, List<List<Object>> errorsBySequence,
                  List<Object> running) {
    }

    @Override
    public Integer call() throws SQLException {
        ModelSettings settings = model.load();
        Status s;
        try (HikariDataSource dataSource = connection.open(); Connection c = dataSource.getConnection()) {
            c.setReadOnly(true);
            s = read(settings, new Sql(c));
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

    private Status read(ModelSettings settings, Sql sql) throws SQLException {
        String schema = sql.fold(settings.metadataSchema());
        String name = settings.name();
        if (!sql.tableExists(schema, sql.fold("itersnap_runs"))) {
            return new Status(name, schema, false, List.of(), List.of(), List.of(), List.of(), null);
        }
        String ledgerT = sql.quote(schema) + "." + sql.id("itersnap_ledger");
        String runsT = sql.quote(schema) + "." + sql.id("itersnap_runs");
        String errorsT = sql.quote(schema) + "." + sql.id("itersnap_errors");
        List<List<Object>> ledger = sql.rows("SELECT " + cols(sql, "sequence_value", "run_id", "applied_at",
                "source_rows", "duplicate_rows", "inserted_rows", "updated_rows", "deleted_rows", "rejected_rows",
                "reproduced") + " FROM " + ledgerT + " WHERE " + sql.id("model") + " = ?", name);
        sortBySequence(settings, sql, ledger);
        List<List<Object>> recent = sql.rows("SELECT " + cols(sql, "run_id", "operation", "status", "started_at",
                "finished_at", "batches_applied", "late_batch", "replay_point", "error_message", "holder") + " FROM "
                + runsT + " WHERE " + sql.id("model") + " = ? ORDER BY " + sql.id("started_at") + " DESC", name);
        List<Object> running = recent.stream().filter(r -> "running".equals(r.get(2))).findFirst().orElse(null);
        recent = recent.subList(0, Math.min(Math.max(runs, 0), recent.size()));
        List<List<Object>> byReason = sql.rows("SELECT " + sql.id("reason") + ", COUNT(*) FROM " + errorsT + " WHERE "
                + sql.id("model") + " = ? GROUP BY " + sql.id("reason") + " ORDER BY 2 DESC, 1", name);
        List<List<Object>> bySequence = sql.rows("SELECT " + sql.id("sequence_value") + ", " + sql.id("reason")
                + ", COUNT(*) FROM " + errorsT + " WHERE " + sql.id("model") + " = ? GROUP BY "
                + sql.id("sequence_value") + ", " + sql.id("reason") + " ORDER BY 1, 2", name);
        return new Status(name, schema, true, ledger, recent, byReason, bySequence, running);
    }

    private static String cols(Sql sql, String... names) {
        return String.join(", ", java.util.Arrays.stream(names).map(sql::id).toList());
    }

    /** Ledger rows in business order when the source can be described, else in the order they were applied. */
    private static void sortBySequence(ModelSettings settings, Sql sql, List<List<Object>> ledger) {
        try {
            ModelInspection m = ModelInspection.of(settings, sql);
            ledger.sort((a, b) -> m.sequenceType.compare(m.typed((String) a.get(0)), m.typed((String) b.get(0))));
        } catch (RuntimeException e) {
            ledger.sort(Comparator.comparing(r -> String.valueOf(r.get(2))));
        }
    }

    private static Long durationMs(List<Object> run) {
        LocalDateTime start = time(run.get(3));
        LocalDateTime end = time(run.get(4));
        return start == null || end == null ? null : Duration.between(start, end).toMillis();
    }

    private static LocalDateTime time(Object v) {
        return v instanceof Timestamp t ? t.toLocalDateTime() : v instanceof LocalDateTime l ? l : null;
    }

    private static long num(Object v) {
        return v == null ? 0 : ((Number) v).longValue();
    }

    private static void print(PrintWriter out, Status s) {
        out.println("model " + s.model() + " (metadata schema " + s.metadataSchema() + ")");
        if (!s.metadataExists()) {
            out.println("no metadata tables yet: the model has never run against this database");
            return;
        }
        out.println();
        if (s.running() == null) {
            out.println("lock: free according to the run log (no run has status 'running')");
        } else {
            out.println("lock: held according to the run log by run " + s.running().get(0) + " (" + s.running().get(1)
                    + ") of " + s.running().get(9) + " since " + Sql.text(s.running().get(3))
                    + "; a run that died without finishing also shows as running until the next run recovers it");
        }
        out.println();
        out.println("applied batches (ledger):");
        List<List<String>> rows = new ArrayList<>();
        for (List<Object> r : s.ledger()) {
            rows.add(java.util.Arrays.asList(Sql.text(r.get(0)), Sql.text(r.get(3)), Sql.text(r.get(4)),
                    Sql.text(r.get(5)), Sql.text(r.get(6)), Sql.text(r.get(7)), Sql.text(r.get(8)),
                    Boolean.TRUE.equals(r.get(9)) ? "yes" : "", Sql.text(r.get(1)), Sql.text(r.get(2))));
        }
        TablePrinter.print(out, List.of("sequence", "source", "duplicates", "inserted", "updated", "deleted",
                        "rejected", "reproduced", "run_id", "applied_at"), rows,
                false, true, true, true, true, true, true, false, false, false);
        out.println();
        out.println("recent runs (newest first):");
        rows = new ArrayList<>();
        for (List<Object> r : s.runs()) {
            Long ms = durationMs(r);
            rows.add(java.util.Arrays.asList(Sql.text(r.get(0)), Sql.text(r.get(1)), Sql.text(r.get(2)),
                    Sql.text(r.get(3)), ms == null ? null : ms + " ms", Sql.text(r.get(5)),
                    Boolean.TRUE.equals(r.get(6)) ? "yes" : "", Sql.text(r.get(7)), Sql.text(r.get(8))));
        }
        TablePrinter.print(out, List.of("run_id", "operation", "status", "started_at", "duration", "batches", "late",
                "replay_point", "error"), rows, false, false, false, false, true, true, false, false, false);
        out.println();
        out.println("rows set aside (error log) by reason:");
        rows = new ArrayList<>();
        for (List<Object> r : s.errorsByReason()) {
            rows.add(List.of(Sql.text(r.get(0)), Sql.text(r.get(1))));
        }
        TablePrinter.print(out, List.of("reason", "rows"), rows, false, true);
        if (!s.errorsBySequence().isEmpty()) {
            out.println();
            out.println("rows set aside by batch:");
            rows = new ArrayList<>();
            for (List<Object> r : s.errorsBySequence()) {
                rows.add(java.util.Arrays.asList(Sql.text(r.get(0)), Sql.text(r.get(1)), Sql.text(r.get(2))));
            }
            TablePrinter.print(out, List.of("sequence", "reason", "rows"), rows, false, false, true);
        }
    }

    private static String json(Status s) {
        ObjectMapper mapper = new ObjectMapper();
        ObjectNode o = mapper.createObjectNode().put("model", s.model()).put("metadata_schema", s.metadataSchema())
                .put("metadata_exists", s.metadataExists());
        ObjectNode lock = o.putObject("lock");
        lock.put("held", s.running() != null).put("according_to", "run log");
        if (s.running() != null) {
            lock.put("run_id", Sql.text(s.running().get(0))).put("operation", Sql.text(s.running().get(1)))
                    .put("holder", Sql.text(s.running().get(9))).put("since", Sql.text(s.running().get(3)));
        }
        ArrayNode ledger = o.putArray("ledger");
        for (List<Object> r : s.ledger()) {
            ledger.addObject().put("sequence", Sql.text(r.get(0))).put("run_id", Sql.text(r.get(1)))
                    .put("applied_at", Sql.text(r.get(2))).put("source_rows", num(r.get(3)))
                    .put("duplicate_rows", num(r.get(4))).put("inserted", num(r.get(5))).put("updated", num(r.get(6)))
                    .put("deleted", num(r.get(7))).put("rejected", num(r.get(8)))
                    .put("reproduced", Boolean.TRUE.equals(r.get(9)));
        }
        ArrayNode runs = o.putArray("runs");
        for (List<Object> r : s.runs()) {
            ObjectNode run = runs.addObject().put("run_id", Sql.text(r.get(0))).put("operation", Sql.text(r.get(1)))
                    .put("status", Sql.text(r.get(2))).put("started_at", Sql.text(r.get(3)))
                    .put("finished_at", Sql.text(r.get(4))).put("duration_ms", durationMs(r));
            run.put("batches_applied", r.get(5) == null ? null : num(r.get(5)));
            run.put("late_batch", r.get(6) == null ? null : Boolean.TRUE.equals(r.get(6)));
            run.put("replay_point", Sql.text(r.get(7))).put("error", Sql.text(r.get(8)))
                    .put("holder", Sql.text(r.get(9)));
        }
        ArrayNode byReason = o.putArray("errors_by_reason");
        for (List<Object> r : s.errorsByReason()) {
            byReason.addObject().put("reason", Sql.text(r.get(0))).put("rows", num(r.get(1)));
        }
        ArrayNode bySeq = o.putArray("errors_by_sequence");
        for (List<Object> r : s.errorsBySequence()) {
            bySeq.addObject().put("sequence", Sql.text(r.get(0))).put("reason", Sql.text(r.get(1)))
                    .put("rows", num(r.get(2)));
        }
        try {
            return mapper.writeValueAsString(o);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
