package dev.itersnap.conformance;

import dev.itersnap.IterativeSnapshot;
import dev.itersnap.conformance.Scenario.Column;
import dev.itersnap.conformance.Scenario.ColumnChange;
import dev.itersnap.conformance.Scenario.Step;
import dev.itersnap.conformance.TestDatabase.ColumnType;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.RunResult;
import dev.itersnap.core.SnapshotEvent;

import javax.sql.DataSource;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.UUID;
import java.util.stream.Collectors;

/**
 * Plays a {@link Scenario} against a real database and the {@link ReferenceModel} in lockstep: creates the raw
 * table, follows the delivery plan (retention, column changes, loading, runs, full refreshes and replays through
 * {@link IterativeSnapshot}), and after <b>every</b> run compares the run's result and events and everything the
 * database holds (history, ledger, error log, archive, column registry, pending table, run log) with the model of
 * the runs so far ({@link StateComparison}). The first run that differs ends the case.
 */
public final class ScenarioRunner {
    private final TestDatabase database;

    public ScenarioRunner(TestDatabase database) {
        this.database = database;
    }

    /**
     * What happened: the runs played, the comparisons made, and the differences of the first run that differed
     * (empty when the engine agreed with the model after every run).
     */
    public record Result(int runs, int comparisons, String where, List<String> problems, List<String> events) {
        public boolean passed() {
            return problems.isEmpty();
        }
    }

    /** Plays the whole plan on a fresh database. */
    public Result play(Scenario scenario) throws SQLException {
        return play(scenario, null);
    }

    /**
     * Plays the whole plan on a fresh database and, when every run agreed with the model, hands the database (its
     * history as the engine wrote it) to {@code atEnd}, whose problems fail the case (null: no check).
     */
    public Result play(Scenario scenario, java.util.function.Function<DataSource, List<String>> atEnd)
            throws SQLException {
        return play(scenario, atEnd, null);
    }

    /** What a check does after every run that agreed with the model: with the database and the run's result. */
    public interface AfterRun {
        void accept(DataSource ds, RunResult result) throws SQLException;
    }

    /**
     * {@link #play(Scenario, java.util.function.Function)}, handing the database to {@code afterRun} (null: none) after
     * every run that agreed with the model, before the next step changes the source.
     */
    public Result play(Scenario scenario, java.util.function.Function<DataSource, List<String>> atEnd,
                       AfterRun afterRun) throws SQLException {
        DataSource ds = database.newDatabase("s" + Long.toUnsignedString(scenario.seed(), 36));
        List<SnapshotEvent> events = Collections.synchronizedList(new ArrayList<>());
        List<String> eventLog = Collections.synchronizedList(new ArrayList<>());
        try {
            createRawTable(ds, scenario);
            IterativeSnapshot.Builder builder = IterativeSnapshot.builder().dataSource(ds).listener(e -> {
                events.add(e);
                eventLog.add(describe(e));
            });
            if (database.dialect() != null) {
                builder.dialect(database.dialect());
            }
            IterativeSnapshot snapshots = builder.build();
            ModelSettings settings = scenario.settings();
            RawTableMirror mirror = new RawTableMirror(scenario);
            ReferenceModel model = new ReferenceModel(scenario.modelConfig());
            StateComparison comparison = new StateComparison(scenario, database);
            TreeSet<Integer> applied = new TreeSet<>();
            java.util.Set<Object> restatedUnseen = java.util.Set.of();
            boolean restatementMissed = false;
            int runs = 0;
            int comparisons = 0;
            for (int i = 0; i < scenario.plan().size(); i++) {
                Step step = scenario.plan().get(i);
                dropBatches(ds, scenario, mirror, step.drop());
                for (ColumnChange change : step.changes()) {
                    changeColumn(ds, change);
                    mirror.change(change);
                    if (change.kind() == ColumnChange.Kind.WIDEN) {
                        model.widened(change.column().name());
                    }
                }
                for (Scenario.Restatement r : step.restate()) {
                    dropBatches(ds, scenario, mirror, List.of(r.batch()));
                    insert(ds, mirror, mirror.restate(r));
                }
                deliver(ds, mirror, step.deliver());
                applied.addAll(step.deliver());
                for (int r = 0; r < step.runs(); r++) {
                    ReferenceModel.Operation op = r == 0 ? step.operation() : ReferenceModel.Operation.RUN;
                    String where = "step " + (i + 1) + " (" + scenario.describe(step) + "), run " + (r + 1) + " ("
                            + op.label() + ")";
                    events.clear();
                    RunResult result;
                    runs++;
                    // the plan, made just before, must name what the run then does
                    dev.itersnap.core.RunPlan plan;
                    try {
                        plan = switch (op) {
                            case RUN -> snapshots.plan(settings);
                            case FULL_REFRESH -> snapshots.planFullRefresh(settings);
                            case REPLAY -> snapshots.planReplayFrom(settings,
                                    scenario.shownSequence(step.replayFrom()));
                        };
                    } catch (RuntimeException e) {
                        return new Result(runs, comparisons, where, List.of("the plan failed: " + stackTrace(e)),
                                List.copyOf(eventLog));
                    }
                    try {
                        result = switch (op) {
                            case RUN -> snapshots.run(settings);
                            case FULL_REFRESH -> snapshots.fullRefresh(settings);
                            case REPLAY -> snapshots.replayFrom(settings, scenario.shownSequence(step.replayFrom()));
                        };
                    } catch (RuntimeException e) {
                        return new Result(runs, comparisons, where, List.of("the run failed: " + stackTrace(e)),
                                List.copyOf(eventLog));
                    }
                    ReferenceModel.RunOutcome expected = model.run(op, step.replayFrom(), mirror.columnNames(),
                            mirror.sourceRows(), result.runId());
                    List<String> problems = new ArrayList<>(comparison.compareRun(result, expected,
                            List.copyOf(events)));
                    problems.addAll(comparison.comparePlan(plan, result));
                    problems.addAll(comparison.compare(model, DatabaseState.read(ds, scenario.target(),
                            scenario.metadataSchema(), Scenario.MODEL_NAME)));
                    // a restatement that the bounded detection has not reached yet leaves the history as the batch
                    // was applied: compared with a clean run once it is found; one whose batch left the source first
                    // is never found, and the clean run no longer describes the history
                    java.util.Set<Object> notFound = model.restatementsNotFoundYet(mirror.columnNames(),
                            mirror.sourceRows());
                    java.util.Set<Object> held = model.batchesIn(mirror.columnNames(), mirror.sourceRows());
                    for (Object s : restatedUnseen) {
                        if (!notFound.contains(s) && !held.contains(s)) {
                            restatementMissed = true;
                        }
                    }
                    restatedUnseen = notFound;
                    if (!mirror.reshaped() && notFound.isEmpty() && !restatementMissed) {
                        problems.addAll(StateComparison.compareWithCleanRun(model, cleanRun(scenario, mirror,
                                applied)));
                    }
                    comparisons++;
                    if (!problems.isEmpty()) {
                        return new Result(runs, comparisons, where, problems, List.copyOf(eventLog));
                    }
                    if (afterRun != null) {
                        afterRun.accept(ds, result);
                    }
                }
            }
            List<String> last = atEnd == null ? List.of() : atEnd.apply(ds);
            return new Result(runs, comparisons, last.isEmpty() ? null : "the end of the plan", List.copyOf(last),
                    List.copyOf(eventLog));
        } finally {
            database.discard(ds);
        }
    }

    /**
     * Plays the plan through the model alone (no database), for statistics over many cases: the model after each
     * run, with the run's outcome.
     */
    public static List<ReferenceModel.RunOutcome> simulate(Scenario scenario) {
        RawTableMirror mirror = new RawTableMirror(scenario);
        ReferenceModel model = new ReferenceModel(scenario.modelConfig());
        List<ReferenceModel.RunOutcome> out = new ArrayList<>();
        for (Step step : scenario.plan()) {
            step.drop().forEach(mirror::drop);
            step.changes().forEach(mirror::change);
            step.restate().forEach(mirror::restate);
            step.deliver().forEach(mirror::deliver);
            for (int r = 0; r < step.runs(); r++) {
                ReferenceModel.Operation op = r == 0 ? step.operation() : ReferenceModel.Operation.RUN;
                out.add(model.run(op, step.replayFrom(), mirror.columnNames(), mirror.sourceRows(),
                        UUID.randomUUID().toString()));
            }
        }
        return out;
    }

    /** One clean run over the applied batches as they were delivered (what every run sequence must amount to). */
    private static ReferenceModel cleanRun(Scenario scenario, RawTableMirror mirror, TreeSet<Integer> applied) {
        ReferenceModel clean = new ReferenceModel(scenario.modelConfig());
        List<Map<String, Object>> rows = new ArrayList<>();
        applied.forEach(b -> rows.addAll(mirror.deliveredRows(b)));
        clean.run(ReferenceModel.Operation.RUN, null, mirror.columnNames(), rows, "clean");
        return clean;
    }

    private void createRawTable(DataSource ds, Scenario scenario) throws SQLException {
        String columns = scenario.columns().stream().map(c -> c.name() + " " + database.sqlType(c.type()))
                .collect(Collectors.joining(", "));
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE " + Scenario.RAW_TABLE + " (" + columns + ")");
            if ((scenario.seed() & 1) == 0 && database.indexes()) {
                // half the cases index the sequence, so discovery is checked both through an index (a loose index
                // scan on PostgreSQL) and without one; half of those the sequence and the key, so a key-scoped
                // replay stages its keys both by index probes (PostgreSQL) and by a join
                String indexed = (scenario.seed() & 2) == 0 ? Scenario.SEQUENCE
                        : Scenario.SEQUENCE + ", " + String.join(", ", scenario.keyColumns());
                s.execute("CREATE INDEX " + Scenario.RAW_TABLE + "_seq ON " + Scenario.RAW_TABLE + " (" + indexed
                        + ")");
            }
        }
    }

    private void changeColumn(DataSource ds, ColumnChange change) throws SQLException {
        Column col = change.column();
        String sql = switch (change.kind()) {
            case ADD -> "ALTER TABLE " + Scenario.RAW_TABLE + " ADD COLUMN " + col.name() + " "
                    + database.sqlType(col.type());
            case DROP -> "ALTER TABLE " + Scenario.RAW_TABLE + " DROP COLUMN " + col.name();
            case WIDEN -> database.widenColumn(Scenario.RAW_TABLE, col.name(), col.type());
        };
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    private void dropBatches(DataSource ds, Scenario scenario, RawTableMirror mirror, List<Integer> batches)
            throws SQLException {
        if (batches.isEmpty()) {
            return;
        }
        ColumnType type = scenario.sequenceType();
        try (Connection c = ds.getConnection();
             PreparedStatement ps = c.prepareStatement(
                     "DELETE FROM " + Scenario.RAW_TABLE + " WHERE " + Scenario.SEQUENCE + " = ?")) {
            for (int b : batches) {
                bind(ps, 1, type, scenario.batches().get(b).sequence());
                ps.executeUpdate();
                mirror.drop(b);
            }
        }
    }

    private void deliver(DataSource ds, RawTableMirror mirror, List<Integer> batches) throws SQLException {
        List<Map<String, Object>> rows = new ArrayList<>();
        for (int b : batches) {
            rows.addAll(mirror.deliver(b));
        }
        insert(ds, mirror, rows);
    }

    /** Inserts rows (the mirror's current columns) into the raw table. */
    private void insert(DataSource ds, RawTableMirror mirror, List<Map<String, Object>> rows) throws SQLException {
        if (rows.isEmpty()) {
            return;
        }
        List<Column> columns = mirror.columns();
        String tuple = columns.stream().map(c -> "?").collect(Collectors.joining(", ", "(", ")"));
        // several rows a statement: on Delta Lake every statement is a commit (one per row made deliveries cost more
        // than the runs they feed)
        int perStatement = RawTable.rowsPerInsert(columns.size());
        try (Connection c = ds.getConnection()) {
            for (int from = 0; from < rows.size(); from += perStatement) {
                List<Map<String, Object>> chunk = rows.subList(from, Math.min(rows.size(), from + perStatement));
                String sql = "INSERT INTO " + Scenario.RAW_TABLE + " ("
                        + columns.stream().map(Column::name).collect(Collectors.joining(", ")) + ") VALUES "
                        + String.join(", ", java.util.Collections.nCopies(chunk.size(), tuple));
                try (PreparedStatement ps = c.prepareStatement(sql)) {
                    int index = 1;
                    for (Map<String, Object> row : chunk) {
                        for (Column column : columns) {
                            bind(ps, index++, column.type(), row.get(column.name()));
                        }
                    }
                    ps.executeUpdate();
                }
            }
        }
    }

    static void bind(PreparedStatement ps, int index, ColumnType type, Object value) throws SQLException {
        if (value == null) {
            ps.setNull(index, switch (type) {
                case INTEGER -> Types.INTEGER;
                case BIGINT -> Types.BIGINT;
                case DECIMAL -> Types.DECIMAL;
                case VARCHAR -> Types.VARCHAR;
                case DATE -> Types.DATE;
                case TIMESTAMP -> Types.TIMESTAMP;
            });
        } else if (value instanceof Long l && type == ColumnType.INTEGER) {
            ps.setInt(index, Math.toIntExact(l));
        } else if (value instanceof Long l) {
            ps.setLong(index, l);
        } else if (value instanceof Integer n) {
            ps.setInt(index, n);
        } else {
            ps.setObject(index, value);
        }
    }

    static String stackTrace(Throwable t) {
        StringWriter w = new StringWriter();
        t.printStackTrace(new PrintWriter(w));
        return w.toString();
    }

    private static String describe(SnapshotEvent e) {
        if (e instanceof SnapshotEvent.BatchApplied b) {
            return "batch applied " + StateComparison.eventLine(b);
        }
        if (e instanceof SnapshotEvent.RunFinished f) {
            return "run finished: " + f.result().batchesApplied() + " batches, late=" + f.result().lateBatchFound()
                    + ", replay point=" + f.result().replayPoint() + ", timeline violations="
                    + f.result().timelineViolations();
        }
        return e.toString();
    }
}
