package dev.itersnap.conformance;

import dev.itersnap.conformance.TestDatabase.ColumnType;
import dev.itersnap.core.BatchResult;
import dev.itersnap.core.ColumnNames;
import dev.itersnap.core.HardDeletes;
import dev.itersnap.core.RunResult;
import dev.itersnap.core.SnapshotEvent;

import java.math.BigDecimal;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * Compares what the engine left in the database ({@link DatabaseState}) and what a run returned and reported with
 * the {@link ReferenceModel}: every column of the history (data columns, tracked or not, the sequence column,
 * {@code updated_at}, every meta column, {@code dbt_scd_id} recomputed from its formula and unique), the exact
 * column set, the ledger, the error log's records, the archive, the column registry, the pending table, the run log,
 * the run's result and its events. Each difference is one block of text: a multiset diff, {@code -} expected only,
 * {@code +} actual only.
 */
public final class StateComparison {
    private final Scenario scenario;
    private final TestDatabase database;
    private final ColumnNames meta;

    public StateComparison(Scenario scenario, TestDatabase database) {
        this.scenario = scenario;
        this.database = database;
        this.meta = scenario.metaColumns();
    }

    // ------------------------------------------------------------------ the database

    /** Every difference between the database and the model, one block each (empty when they agree). */
    public List<String> compare(ReferenceModel model, DatabaseState db) {
        List<String> problems = new ArrayList<>();
        compareHistory(model, db, problems);
        diff("ledger", ledgerLines(model), ledgerLines(db), problems);
        diff("error log", errorLines(model), errorLines(db), problems);
        compareArchive(model, db, problems);
        diff("column registry", registryLines(model), registryLines(db), problems);
        if (db.pendingRows() != null && db.pendingRows() != 0) {
            problems.add("pending table holds " + db.pendingRows() + " rows after a successful run (expected none)");
        }
        diff("run log", runLines(model), runLines(model, db), problems);
        return problems;
    }

    private void compareHistory(ReferenceModel model, DatabaseState db, List<String> problems) {
        List<String> expectedColumns = expectedHistoryColumns(model);
        if (expectedColumns == null) {
            if (db.history() != null) {
                problems.add("history table exists before any batch was applied: " + db.historyColumns());
            }
            return;
        }
        if (db.history() == null) {
            problems.add("history table " + scenario.target() + " does not exist");
            return;
        }
        Set<String> actualColumns = new TreeSet<>();
        db.historyColumns().forEach(c -> actualColumns.add(c.toLowerCase(Locale.ROOT)));
        if (!actualColumns.equals(new TreeSet<>(expectedColumns))) {
            Set<String> missing = new TreeSet<>(expectedColumns);
            missing.removeAll(actualColumns);
            Set<String> extra = new TreeSet<>(actualColumns);
            extra.removeAll(expectedColumns);
            problems.add("history columns differ: missing " + missing + ", unexpected " + extra);
        }
        Map<String, String> spelling = new HashMap<>();
        db.historyColumns().forEach(c -> spelling.put(c.toLowerCase(Locale.ROOT), c));
        List<String> expected = new ArrayList<>();
        for (ReferenceModel.Version v : model.versions()) {
            expected.add(versionLine(model, v, spelling));
        }
        List<String> actual = new ArrayList<>();
        Set<Object> ids = new HashSet<>();
        List<String> repeated = new ArrayList<>();
        for (Map<String, Object> row : db.history()) {
            actual.add(rowLine(model, row));
            Object id = row.get(lower(meta.scdId()));
            if (id == null || !ids.add(id)) {
                repeated.add(String.valueOf(id));
            }
        }
        diff("history (key | data columns | " + lower(meta.scdId()) + " | " + lower(meta.updatedAt()) + " | validity "
                + "| change type | changed attributes | is_deleted | opened/closed sequence)", expected, actual,
                problems);
        if (!repeated.isEmpty()) {
            problems.add(lower(meta.scdId()) + " missing or not unique: " + repeated);
        }
    }

    /** The history's columns, lower case: the data columns ever seen, then the meta columns. */
    private List<String> expectedHistoryColumns(ReferenceModel model) {
        if (model.historyColumns() == null) {
            return null;
        }
        List<String> out = new ArrayList<>(model.historyColumns());
        if (scenario.options().sequenceList() != 0) {
            out.add(SEQUENCE_KEY); // the engine's column holding the sequence_by list's key
        }
        meta.asMap().forEach((key, name) -> {
            if (!key.equals("dbt_is_deleted") || scenario.hardDeletes() == HardDeletes.NEW_RECORD) {
                out.add(name.toLowerCase(Locale.ROOT));
            }
        });
        return out;
    }

    private String versionLine(ReferenceModel model, ReferenceModel.Version v, Map<String, String> spelling) {
        StringBuilder s = new StringBuilder();
        s.append(v.key().stream().map(ReferenceModel::valueText).toList()).append(" |");
        for (String c : model.historyColumns()) {
            s.append(' ').append(c).append('=').append(ReferenceModel.valueText(v.values().get(c)));
        }
        String changed = v.changedAttributes() == null ? "null" : v.changedAttributes().stream()
                .map(c -> spelling.getOrDefault(c, c)).collect(Collectors.joining(",", "[", "]"));
        s.append(" | ").append(scdId(v.key(), v.updatedAt(), v.openedSeq(), v.deletionRecord()))
                .append(" | ").append(ReferenceModel.valueText(v.updatedAt()))
                .append(" | ").append(ReferenceModel.valueText(v.validFrom())).append(" .. ")
                .append(ReferenceModel.valueText(v.validTo() == null ? scenario.options().openValidTo() : v.validTo()))
                .append(" | ").append(v.changeType())
                .append(" | ").append(changed)
                .append(" | ").append(scenario.hardDeletes() == HardDeletes.NEW_RECORD ? v.deletionRecord() : "-")
                .append(" | ").append(ReferenceModel.valueText(v.openedSeq())).append(" / ")
                .append(ReferenceModel.valueText(v.closedSeq()));
        return s.toString();
    }

    private String rowLine(ReferenceModel model, Map<String, Object> row) {
        StringBuilder s = new StringBuilder();
        s.append(scenario.keyColumns().stream().map(k -> ReferenceModel.valueText(row.get(k))).toList()).append(" |");
        for (String c : model.historyColumns()) {
            s.append(' ').append(c).append('=').append(ReferenceModel.valueText(row.get(c)));
        }
        s.append(" | ").append(row.get(lower(meta.scdId())))
                .append(" | ").append(ReferenceModel.valueText(row.get(lower(meta.updatedAt()))))
                .append(" | ").append(ReferenceModel.valueText(row.get(lower(meta.validFrom())))).append(" .. ")
                .append(ReferenceModel.valueText(row.get(lower(meta.validTo()))))
                .append(" | ").append(row.get(lower(meta.changeType())))
                .append(" | ").append(changedAttributes(row.get(lower(meta.changedAttributes()))))
                .append(" | ").append(scenario.hardDeletes() == HardDeletes.NEW_RECORD
                        ? booleanText(row.get(lower(meta.isDeleted()))) : "-")
                .append(" | ").append(ReferenceModel.valueText(fromKey(row.get(lower(meta.openedSeq())))))
                .append(" / ").append(ReferenceModel.valueText(fromKey(row.get(lower(meta.closedSeq())))));
        return s.toString();
    }

    /** changed_attributes as read: strict JSON, an array of strings, or a description of what it is instead. */
    static String changedAttributes(Object value) {
        if (value == null) {
            return "null";
        }
        Object parsed;
        try {
            parsed = StrictJson.parse(value.toString());
        } catch (IllegalArgumentException e) {
            return "<" + e.getMessage() + ">";
        }
        if (!(parsed instanceof List<?> list) || list.stream().anyMatch(x -> !(x instanceof String))) {
            return "<not a JSON array of strings: " + value + ">";
        }
        return list.stream().map(Object::toString).collect(Collectors.joining(",", "[", "]"));
    }

    /** A boolean as read; anything but TRUE or FALSE is shown as such. */
    static String booleanText(Object value) {
        if (value instanceof Boolean b) {
            return b.toString();
        }
        return value == null ? "<NULL where a boolean is due>" : "<not a boolean: " + value + ">";
    }

    /** dbt_scd_id by its documented formula ({@link ReferenceModel#scdId}), over the database's texts of the values. */
    String scdId(List<Object> key, LocalDateTime updatedAt, Object openedSeq, boolean deletionRecord) {
        List<String> keyTexts = new java.util.ArrayList<>();
        for (Object k : key) {
            keyTexts.add(k == null ? null : database.castToText(k));
        }
        return ReferenceModel.scdId(keyTexts, updatedAt == null ? null : database.castToText(updatedAt),
                scenario.sequenceText(openedSeq), deletionRecord);
    }

    // ------------------------------------------------------------------ metadata

    private static List<String> ledgerLines(ReferenceModel model) {
        return model.ledger().stream().map(e -> ledgerLine(e.sequenceText(), e.runId(), e.sourceRows(),
                e.duplicateRows(), e.inserted(), e.updated(), e.deleted(), e.rejected(), e.deletionTime(),
                String.valueOf(e.reproduced()))).toList();
    }

    private List<String> ledgerLines(DatabaseState db) {
        if (db.ledger() == null) {
            return List.of();
        }
        return db.ledger().stream().map(r -> ledgerLine(fromText((String) r.get("sequence_value")),
                (String) r.get("run_id"),
                r.get("source_rows"), r.get("duplicate_rows"), r.get("inserted_rows"), r.get("updated_rows"),
                r.get("deleted_rows"), r.get("rejected_rows"), (String) r.get("deletion_time"),
                booleanText(r.get("reproduced")))).toList();
    }

    private static String ledgerLine(String seq, String runId, Object rows, Object copies, Object inserted,
                                     Object updated, Object deleted, Object rejected, String deletionTime,
                                     String reproduced) {
        return seq + " | run " + runId + " | rows=" + rows + " copies=" + copies + " inserted=" + inserted
                + " updated=" + updated + " deleted=" + deleted + " rejected=" + rejected + " | deletion_time="
                + deletionTime + " | reproduced=" + reproduced;
    }

    private List<String> errorLines(ReferenceModel model) {
        return model.errors().stream().map(e -> e.sequenceText() + " | " + e.reason() + " | run " + e.runId() + " | "
                + e.record().entrySet().stream().map(x -> x.getKey() + "=" + ReferenceModel.valueText(x.getValue()))
                .collect(Collectors.joining(", ", "{", "}"))).toList();
    }

    private List<String> errorLines(DatabaseState db) {
        if (db.errors() == null) {
            return List.of();
        }
        return db.errors().stream().map(r -> fromText((String) r.get("sequence_value")) + " | " + r.get("reason")
                + " | run "
                + r.get("run_id") + " | " + record(r.get("record"))).toList();
    }

    /** An error-log record as read: a strict JSON object, members in order, values read as their column's type. */
    private String record(Object text) {
        Object parsed;
        try {
            parsed = StrictJson.parse(String.valueOf(text));
        } catch (IllegalArgumentException e) {
            return "<" + e.getMessage() + ">";
        }
        if (!(parsed instanceof Map<?, ?> map)) {
            return "<not a JSON object: " + text + ">";
        }
        List<String> members = new ArrayList<>();
        map.forEach((k, v) -> {
            String column = k.toString().toLowerCase(Locale.ROOT);
            members.add(column + "=" + jsonValue(scenario.typeOf(column), v));
        });
        return members.stream().collect(Collectors.joining(", ", "{", "}"));
    }

    /** A JSON value read as a value of the column's type, as text ({@code <...>} when it is not one). */
    static String jsonValue(ColumnType type, Object v) {
        if (v == null) {
            return "null";
        }
        if (type == null) {
            return "<value of an unknown column: " + v + ">";
        }
        switch (type) {
            case INTEGER, BIGINT, DECIMAL -> {
                return v instanceof BigDecimal b ? ReferenceModel.canonical(b) : "<not a number: " + v + ">";
            }
            case VARCHAR -> {
                return v instanceof String s ? s : "<not a string: " + v + ">";
            }
            case DATE -> {
                try {
                    return LocalDate.parse((String) v).toString();
                } catch (RuntimeException e) {
                    return "<not a date: " + v + ">";
                }
            }
            case TIMESTAMP -> {
                try {
                    String s = ((String) v).replace(' ', 'T');
                    if (s.endsWith("Z")) {
                        s = s.substring(0, s.length() - 1);
                    } else if (s.endsWith("+00:00")) {
                        s = s.substring(0, s.length() - 6);
                    }
                    return LocalDateTime.parse(s).toString();
                } catch (RuntimeException e) {
                    return "<not a timestamp: " + v + ">";
                }
            }
            default -> {
                return "<" + v + ">";
            }
        }
    }

    private void compareArchive(ReferenceModel model, DatabaseState db, List<String> problems) {
        if (model.historyColumns() == null) {
            return;
        }
        if (db.archive() == null) {
            problems.add("archive table " + scenario.metadataSchema() + ".itersnap_archive_" + Scenario.MODEL_NAME
                    + " does not exist");
            return;
        }
        Set<String> expectedColumns = new TreeSet<>(model.historyColumns());
        if (scenario.options().sequenceList() != 0) {
            expectedColumns.add(SEQUENCE_KEY);
        }
        expectedColumns.add("itersnap_del");
        expectedColumns.add("itersnap_reject");
        if (!expectedColumns.equals(new TreeSet<>(db.archiveColumns()))) {
            problems.add("archive columns differ: expected " + expectedColumns + ", actual "
                    + new TreeSet<>(db.archiveColumns()));
        }
        List<String> expected = new ArrayList<>();
        for (ReferenceModel.ArchivedRow a : model.archive()) {
            expected.add(archiveLine(model, ReferenceModel.canonical(a.sequence()), a.values(),
                    String.valueOf(a.delete()), a.reason()));
        }
        List<String> actual = new ArrayList<>();
        for (Map<String, Object> row : db.archive()) {
            actual.add(archiveLine(model, ReferenceModel.valueText(row.get(Scenario.SEQUENCE)), row,
                    booleanText(row.get("itersnap_del")), (String) row.get("itersnap_reject")));
        }
        diff("archive (sequence | delete | reason | row)", expected, actual, problems);
    }

    private static String archiveLine(ReferenceModel model, String seq, Map<String, Object> values, String delete,
                                      String reason) {
        StringBuilder s = new StringBuilder(seq).append(" | del=").append(delete).append(" | ").append(reason)
                .append(" |");
        for (String c : model.historyColumns()) {
            s.append(' ').append(c).append('=').append(ReferenceModel.valueText(values.get(c)));
        }
        return s.toString();
    }

    private static List<String> registryLines(ReferenceModel model) {
        return model.registry().stream().map(r -> r.column() + " | introduced "
                + ReferenceModel.canonical(r.introducedAt()) + " | in_source=" + r.inSource() + " | dropped_after "
                + ReferenceModel.canonical(r.droppedAfter())).toList();
    }

    private List<String> registryLines(DatabaseState db) {
        if (db.registry() == null) {
            return List.of();
        }
        return db.registry().stream().filter(r -> !SEQUENCE_KEY.equalsIgnoreCase(String.valueOf(r.get("column_name"))))
                .map(r -> String.valueOf(r.get("column_name")).toLowerCase(Locale.ROOT)
                + " | introduced " + fromText((String) r.get("introduced_seq")) + " | in_source=" + booleanText(r.get("in_source"))
                + " | dropped_after " + fromText((String) r.get("dropped_after")))
                .toList();
    }

    private static List<String> runLines(ReferenceModel model) {
        return model.runLog().stream().map(r -> r.runId() + " | " + r.operation() + " | success | batches="
                + r.batches() + " | late=" + r.late() + " | replay_point=" + r.replayPoint()).toList();
    }

    private List<String> runLines(ReferenceModel model, DatabaseState db) {
        if (db.runs() == null) {
            return List.of();
        }
        Set<String> ours = new HashSet<>();
        model.runLog().forEach(r -> ours.add(r.runId()));
        return db.runs().stream().filter(r -> ours.contains((String) r.get("run_id")))
                .map(r -> r.get("run_id") + " | " + r.get("operation") + " | " + r.get("status") + " | batches="
                        + r.get("batches_applied") + " | late=" + booleanText(r.get("late_batch"))
                        + " | replay_point=" + fromText((String) r.get("replay_point"))).toList();
    }

    // ------------------------------------------------------------------ one run

    /** The run's result and its events against the model's prediction. */
    public List<String> compareRun(RunResult result, ReferenceModel.RunOutcome expected,
                                   List<SnapshotEvent> events) {
        List<String> problems = new ArrayList<>();
        diff("batches the run applied (sequence, rows, inserted, updated, deleted, rejected, reproduced, copies)",
                expected.batches().stream().map(StateComparison::batchLine).toList(),
                result.batches().stream().map(b -> batchLine(unlisted(b))).toList(), problems);
        if (result.lateBatchFound() != expected.lateBatchFound()) {
            problems.add("lateBatchFound=" + result.lateBatchFound() + ", expected " + expected.lateBatchFound());
        }
        Object replayPoint = unlisted(result.replayPoint());
        if (!Objects.equals(ReferenceModel.canonical(replayPoint), ReferenceModel.canonical(expected.replayPoint()))) {
            problems.add("replayPoint=" + result.replayPoint() + ", expected " + expected.replayPoint());
        }
        if (replayPoint != null && expected.replayPoint() != null
                && replayPoint.getClass() != ReferenceModel.normalise(expected.replayPoint()).getClass()) {
            problems.add("replayPoint is a " + replayPoint.getClass().getSimpleName() + ", expected a "
                    + expected.replayPoint().getClass().getSimpleName());
        }
        if (result.timelineViolations() != 0) {
            problems.add(result.timelineViolations() + " timeline violations");
        }
        for (Class<?> type : List.of(SnapshotEvent.OutOfOrder.class, SnapshotEvent.SchemaChange.class,
                SnapshotEvent.RowsRejected.class, SnapshotEvent.DuplicateRecords.class,
                SnapshotEvent.BatchApplied.class, SnapshotEvent.BatchRestated.class,
                SnapshotEvent.UncomparableBatches.class)) {
            diff(type.getSimpleName() + " events", eventLines(expected.events(), type),
                    eventLines(events.stream().map(this::unlisted).toList(), type), problems);
        }
        return problems;
    }

    /**
     * What a plan made right before a run said against what the run did: the replay point, the late batch, and the
     * batches applied in order, each read from the source or reproduced from the history as planned.
     */
    List<String> comparePlan(dev.itersnap.core.RunPlan plan, RunResult result) {
        List<String> problems = new ArrayList<>();
        if (!Objects.equals(typed(unlisted(plan.replayPoint())), typed(unlisted(result.replayPoint())))) {
            problems.add("the plan's replay point " + typed(unlisted(plan.replayPoint())) + " is not the run's "
                    + typed(unlisted(result.replayPoint())));
        }
        if (plan.lateBatchFound() != result.lateBatchFound()) {
            problems.add("the plan says late batch found " + plan.lateBatchFound() + ", the run "
                    + result.lateBatchFound());
        }
        List<String> planned = plan.batches().stream().map(b -> typed(unlisted(b.sequence())) + (b.readFrom()
                == dev.itersnap.core.RunPlan.ReadFrom.SOURCE ? "" : " reproduced")).toList();
        List<String> done = result.batches().stream().map(b -> typed(unlisted(b.sequence())) + (b.reproduced()
                ? " reproduced" : "")).toList();
        if (!planned.equals(done)) {
            problems.add("the plan's batches " + planned + " are not the run's " + done);
        }
        return problems;
    }

    /** The engine's column holding a sequence_by list's key. */
    static final String SEQUENCE_KEY = "itersnap_sequence";

    /**
     * With a {@code sequence_by} list ({@link Scenario.Options#sequenceList()}) the engine shows each batch as the list
     * of its values, where the model has the batch's {@code batch_seq} alone (the list orders batches as it does):
     * these turn what the engine shows back into the model's form. Without a list they return what they are given.
     */
    private int sequenceIndex() {
        return scenario.options().sequenceList() == 1 ? 1 : 0;
    }

    /** A sequence as the engine's results and events carry it (a list of values) as the model's: batch_seq. */
    Object unlisted(Object v) {
        return scenario.options().sequenceList() != 0 && v instanceof List<?> l ? l.get(sequenceIndex()) : v;
    }

    private BatchResult unlisted(BatchResult b) {
        return new BatchResult(unlisted(b.sequence()), b.sourceRows(), b.inserted(), b.updated(), b.deleted(),
                b.rejected(), b.reproduced(), b.duplicateCopies());
    }

    private SnapshotEvent unlisted(SnapshotEvent e) {
        if (scenario.options().sequenceList() == 0) {
            return e;
        }
        if (e instanceof SnapshotEvent.OutOfOrder o) {
            return new SnapshotEvent.OutOfOrder(o.model(), o.runId(), o.incoming().stream().map(this::unlisted)
                    .toList(), unlisted(o.greatestApplied()), unlisted(o.replayPoint()));
        }
        if (e instanceof SnapshotEvent.RowsRejected r) {
            return new SnapshotEvent.RowsRejected(r.model(), r.runId(), unlisted(r.sequence()), r.reasons());
        }
        if (e instanceof SnapshotEvent.DuplicateRecords d) {
            return new SnapshotEvent.DuplicateRecords(d.model(), d.runId(), unlisted(d.sequence()), d.rows(),
                    d.copies());
        }
        if (e instanceof SnapshotEvent.BatchApplied b) {
            return new SnapshotEvent.BatchApplied(b.model(), b.runId(), unlisted(b.batch()));
        }
        if (e instanceof SnapshotEvent.BatchRestated r) {
            return new SnapshotEvent.BatchRestated(r.model(), r.runId(), unlisted(r.sequence()), r.oldRows(),
                    r.newRows());
        }
        if (e instanceof SnapshotEvent.UncomparableBatches u) {
            return new SnapshotEvent.UncomparableBatches(u.model(), u.runId(), u.columns(), u.batches(),
                    unlisted(u.from()));
        }
        return e;
    }

    /** A sequence's text as the engine's metadata writes it ({@code (0, 2024-01-05)}) as the model's: batch_seq's. */
    String fromText(String text) {
        if (text == null || scenario.options().sequenceList() == 0) {
            return text;
        }
        if (!text.startsWith("(") || !text.endsWith(")")) {
            return "<not a list: " + text + ">";
        }
        String inner = text.substring(1, text.length() - 1);
        // batch_part is a number: the list splits at the comma after it, or at the last one
        int cut = sequenceIndex() == 1 ? inner.indexOf(", ") : inner.lastIndexOf(", ");
        if (cut < 0) {
            return "<not a list of two: " + text + ">";
        }
        String part = sequenceIndex() == 1 ? inner.substring(cut + 2) : inner.substring(0, cut);
        return part.startsWith("'") && part.endsWith("'") && part.length() > 1
                ? part.substring(1, part.length() - 1).replace("''", "'") : part;
    }

    /** The key of the scenario's sequence_by list, made on first use. */
    private dev.itersnap.internal.SequenceKey sequenceKey;

    /** A sequence key of the history (dbt_opened_seq, dbt_closed_seq) as the model's sequence: batch_seq's value. */
    Object fromKey(Object key) {
        if (key == null || scenario.options().sequenceList() == 0) {
            return key;
        }
        if (sequenceKey == null) {
            dev.itersnap.spi.SourceColumn part = new dev.itersnap.spi.SourceColumn(Scenario.SEQUENCE_PART,
                    java.sql.Types.INTEGER, "INTEGER", 10, 0);
            dev.itersnap.spi.SourceColumn seq = switch (scenario.sequenceType()) {
                case INTEGER, BIGINT -> new dev.itersnap.spi.SourceColumn(Scenario.SEQUENCE, java.sql.Types.BIGINT,
                        "BIGINT", 19, 0);
                case DECIMAL -> new dev.itersnap.spi.SourceColumn(Scenario.SEQUENCE, java.sql.Types.DECIMAL,
                        "DECIMAL", 10, 3);
                case VARCHAR -> new dev.itersnap.spi.SourceColumn(Scenario.SEQUENCE, java.sql.Types.VARCHAR,
                        "VARCHAR", 40, 0);
                case DATE -> new dev.itersnap.spi.SourceColumn(Scenario.SEQUENCE, java.sql.Types.DATE, "DATE", 10, 0);
                case TIMESTAMP -> new dev.itersnap.spi.SourceColumn(Scenario.SEQUENCE, java.sql.Types.TIMESTAMP,
                        "TIMESTAMP", 26, 6);
            };
            sequenceKey = dev.itersnap.internal.SequenceKey.of(sequenceIndex() == 1 ? List.of(part, seq)
                    : List.of(seq, part));
        }
        try {
            return sequenceKey.decode(key.toString()).get(sequenceIndex());
        } catch (IllegalArgumentException e) {
            return "<not a sequence key: " + dev.itersnap.internal.SequenceKey.printable(key.toString()) + ">";
        }
    }

    private static String batchLine(BatchResult b) {
        return ReferenceModel.canonical(b.sequence()) + " (" + b.sequence().getClass().getSimpleName() + ") rows="
                + b.sourceRows() + " inserted=" + b.inserted() + " updated=" + b.updated() + " deleted=" + b.deleted()
                + " rejected=" + b.rejected() + " reproduced=" + b.reproduced() + " copies=" + b.duplicateCopies();
    }

    private static List<String> eventLines(List<SnapshotEvent> events, Class<?> type) {
        return events.stream().filter(type::isInstance).map(StateComparison::eventLine).toList();
    }

    /** An event without its model name and run id; values as canonical text with their Java type. */
    static String eventLine(SnapshotEvent e) {
        if (e instanceof SnapshotEvent.OutOfOrder o) {
            return "OutOfOrder incoming=" + o.incoming().stream().map(StateComparison::typed).toList() + " greatest="
                    + typed(o.greatestApplied()) + " replayPoint=" + typed(o.replayPoint());
        }
        if (e instanceof SnapshotEvent.SchemaChange c) {
            return "SchemaChange added=" + sortedLower(c.added()) + " missing=" + sortedLower(c.missing());
        }
        if (e instanceof SnapshotEvent.RowsRejected r) {
            Map<String, Long> reasons = new java.util.TreeMap<>(r.reasons());
            return "RowsRejected " + typed(r.sequence()) + " " + reasons;
        }
        if (e instanceof SnapshotEvent.DuplicateRecords d) {
            return "DuplicateRecords " + typed(d.sequence()) + " rows=" + d.rows() + " copies=" + d.copies();
        }
        if (e instanceof SnapshotEvent.BatchApplied b) {
            return "BatchApplied " + batchLine(b.batch());
        }
        if (e instanceof SnapshotEvent.BatchRestated r) {
            return "BatchRestated " + typed(r.sequence()) + " rows " + r.oldRows() + " -> " + r.newRows();
        }
        if (e instanceof SnapshotEvent.UncomparableBatches u) {
            return "UncomparableBatches columns=" + sortedLower(u.columns()) + " batches=" + u.batches() + " from="
                    + typed(u.from());
        }
        return e.toString();
    }

    private static String typed(Object v) {
        return v == null ? "null" : ReferenceModel.canonical(v) + "(" + v.getClass().getSimpleName() + ")";
    }

    private static List<String> sortedLower(Collection<String> names) {
        return names.stream().map(n -> n.toLowerCase(Locale.ROOT)).sorted().toList();
    }

    // ------------------------------------------------------------------ the model against a clean run

    /**
     * The model's own history against the history of one clean run over {@code batches} in business order (the
     * order-independence guarantee, for cases whose raw table kept its columns): key, data, validity, change type,
     * changed attributes, deletion flag, opened and closed sequence.
     */
    public static List<String> compareWithCleanRun(ReferenceModel model, ReferenceModel clean) {
        List<String> problems = new ArrayList<>();
        diff("the model's history after its runs vs one clean in-order run (a flaw of the documented semantics "
                + "or of the model)", cleanLines(clean), cleanLines(model), problems);
        return problems;
    }

    private static List<String> cleanLines(ReferenceModel model) {
        return model.versions().stream().map(v -> v.key() + " " + v.values().entrySet().stream()
                .map(e -> e.getKey() + "=" + ReferenceModel.valueText(e.getValue())).collect(Collectors.joining(" "))
                + " | " + v.updatedAt() + " | " + v.validFrom() + " .. " + v.validTo() + " | " + v.changeType()
                + " | " + v.changedAttributes() + " | " + v.deletionRecord() + " | " + v.openedSeq() + " / "
                + v.closedSeq()).toList();
    }

    // ------------------------------------------------------------------ diff

    /**
     * Adds a multiset diff of the two line lists to {@code problems} when they differ (order ignored). Lines both
     * sides hold are shown only when they share their first field (up to " | ": the key of a version, the sequence
     * of a ledger entry) with a differing line.
     */
    static void diff(String what, List<String> expected, List<String> actual, List<String> problems) {
        List<String> e = new ArrayList<>(expected);
        List<String> a = new ArrayList<>(actual);
        e.sort(null);
        a.sort(null);
        if (e.equals(a)) {
            return;
        }
        Map<String, Integer> remaining = new LinkedHashMap<>();
        a.forEach(x -> remaining.merge(x, 1, Integer::sum));
        List<String[]> lines = new ArrayList<>();
        for (String x : e) {
            Integer n = remaining.get(x);
            if (n != null && n > 0) {
                remaining.put(x, n - 1);
                lines.add(new String[] {"    ", x});
            } else {
                lines.add(new String[] {"  - ", x});
            }
        }
        remaining.forEach((x, n) -> {
            for (int i = 0; i < n; i++) {
                lines.add(new String[] {"  + ", x});
            }
        });
        Set<String> differing = new HashSet<>();
        lines.stream().filter(l -> !l[0].isBlank()).forEach(l -> differing.add(firstField(l[1])));
        lines.sort((x, y) -> x[1].compareTo(y[1]));
        StringBuilder s = new StringBuilder(what).append(" differs from the model (- expected only, + actual only; ")
                .append(e.size()).append(" expected, ").append(a.size()).append(" actual):\n");
        int hidden = 0;
        for (String[] l : lines) {
            if (l[0].isBlank() && !differing.contains(firstField(l[1]))) {
                hidden++;
            } else {
                s.append(l[0]).append(l[1]).append('\n');
            }
        }
        if (hidden > 0) {
            s.append("    (").append(hidden).append(" more lines agree)\n");
        }
        problems.add(s.toString());
    }

    private static String firstField(String line) {
        int i = line.indexOf(" | ");
        return i < 0 ? line : line.substring(0, i);
    }

    private static String lower(String s) {
        return s.toLowerCase(Locale.ROOT);
    }
}
