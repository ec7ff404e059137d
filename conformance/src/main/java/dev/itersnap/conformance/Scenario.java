package dev.itersnap.conformance;

import dev.itersnap.conformance.TestDatabase.ColumnType;
import dev.itersnap.core.ColumnNames;
import dev.itersnap.core.HardDeletes;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.Strategy;
import dev.itersnap.core.UntrackedColumns;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/**
 * One generated case: the raw table's shape, the model's settings, the batches in business order, the NULL-sequence
 * rows that come with some deliveries, and the delivery plan (which batches arrive before which run, which ones
 * retention drops, when the raw table's columns change, which runs are full refreshes or replays). Immutable;
 * {@link #describe()} prints everything needed to reproduce it by hand.
 *
 * @param profile        the case's size: small (2-8 batches), medium (8-20) or long (20-40, long-tail arrival)
 * @param columns        the raw table's columns when it is created
 * @param laterColumns   columns a schema change adds later (with their values in every generated row)
 * @param sequenceType   the type of {@code sequence_by}
 * @param source         how the model's source query reads the raw table
 * @param metaOverrides  overrides of meta column names (the column_names setting) (keyed by default name; empty: dbt's names)
 * @param metadataSchema the model's metadata schema
 * @param target         the history table, optionally schema-qualified
 * @param subSecond      true when {@code updated_at} values carry fractions of a second
 * @param batches        the batches in business order; rows hold every column a row can ever have, junk rows the
 *                       source query filters out included
 * @param options        the settings of CDC feeds and dbt 1.9 (drawn from a stream of their own, so that a seed's
 *                       batches and plan do not depend on them)
 */
public record Scenario(long seed, Profile profile, List<Column> columns, List<Column> laterColumns,
                       List<String> keyColumns, Strategy strategy, List<String> checkCols, HardDeletes hardDeletes,
                       boolean deleteWhen, ColumnType sequenceType, Source source, Map<String, String> metaOverrides,
                       String metadataSchema, String target, boolean subSecond, List<ReferenceModel.Batch> batches,
                       Map<Integer, List<Map<String, Object>>> nullSequenceRows, List<Step> plan,
                       Options options) {

    public static final String RAW_TABLE = "raw_customers";
    public static final String HISTORY_TABLE = "customers_history";
    public static final String MODEL_NAME = "customers";
    public static final String UPDATED_AT = "updated_at";
    public static final String SEQUENCE = "batch_seq";
    /** The second column of a {@code sequence_by} list ({@link Options#sequenceList()}). */
    public static final String SEQUENCE_PART = "batch_part";
    public static final String OP = "op";
    public static final String DELETE_WHEN = "op = 'D'";
    /** The status of rows a filtering source leaves out. */
    public static final String JUNK = "junk";
    /** Added to {@code score} in rows delivered after the column was widened to BIGINT. */
    public static final long WIDE_OFFSET = 3_000_000_000L;

    /**
     * Settings of CDC feeds and dbt 1.9.
     *
     * @param sequenceIsUpdatedAt {@code sequence_by} names the {@code updated_at} column (the raw table has no
     *                            separate updated_at: every event carries one sequence, a TIMESTAMP)
     * @param validToCurrent      {@code valid_to_current}: the date open versions carry in valid_to, or null
     * @param ignoreNullUpdates   {@code ignore_null_updates}: a NULL in a row's non-key column means "not supplied"
     * @param overwriteUntracked  {@code untracked_columns: overwrite}: a row that changes no tracked column writes the
     *                            untracked ones into the current version in place (needs a {@code check_cols} list)
     * @param sequenceList        {@code sequence_by} as a list: 0 no, 1 {@code [batch_part, batch_seq]}, 2
     *                            {@code [batch_seq, batch_part]}; {@code batch_part} is a number that grows with the
     *                            batches (every third batch), so the list orders the batches as {@code batch_seq}
     *                            alone does, with ties on {@code batch_part} broken by {@code batch_seq}
     */
    public record Options(boolean sequenceIsUpdatedAt, String validToCurrent, boolean ignoreNullUpdates,
                          boolean overwriteUntracked, int sequenceList, int restatementLookback,
                          int restatementSweep) {
        public static final Options NONE = new Options(false, null, false, false, 0);

        /** As above, with every applied batch compared on every run (the lookback covers them all, no sweep). */
        public Options(boolean sequenceIsUpdatedAt, String validToCurrent, boolean ignoreNullUpdates,
                       boolean overwriteUntracked, int sequenceList) {
            this(sequenceIsUpdatedAt, validToCurrent, ignoreNullUpdates, overwriteUntracked, sequenceList,
                    ModelSettings.MAX_RESTATEMENT_BATCHES, 0);
        }

        /** What an open version's valid_to holds: NULL, or valid_to_current at midnight (updated_at is a TIMESTAMP). */
        public java.time.LocalDateTime openValidTo() {
            return validToCurrent == null ? null : java.time.LocalDate.parse(validToCurrent).atStartOfDay();
        }

        @Override
        public String toString() {
            List<String> on = new ArrayList<>();
            if (sequenceIsUpdatedAt) {
                on.add("updated_at=sequence_by");
            }
            if (validToCurrent != null) {
                on.add("valid_to_current=" + validToCurrent);
            }
            if (ignoreNullUpdates) {
                on.add("ignore_null_updates");
            }
            if (overwriteUntracked) {
                on.add("untracked_columns=overwrite");
            }
            if (sequenceList != 0) {
                on.add("sequence_by=" + (sequenceList == 1 ? "[batch_part, batch_seq]" : "[batch_seq, batch_part]"));
            }
            if (restatementLookback != ModelSettings.MAX_RESTATEMENT_BATCHES || restatementSweep != 0) {
                on.add("restatement_lookback=" + restatementLookback + ", restatement_sweep=" + restatementSweep);
            }
            return String.join(", ", on);
        }
    }

    /** The column the model's {@code updated_at} names. */
    public String updatedAtColumn() {
        return options.sequenceIsUpdatedAt() ? SEQUENCE : UPDATED_AT;
    }

    /** Size classes of generated cases. */
    public enum Profile { SMALL, MEDIUM, LONG }

    /** How the source query reads the raw table. */
    public enum Source {
        PLAIN("SELECT * FROM " + RAW_TABLE),
        SUBQUERY("SELECT * FROM (SELECT * FROM " + RAW_TABLE + ") src"),
        WHERE("SELECT * FROM " + RAW_TABLE + " WHERE status IS NULL OR status <> '" + JUNK + "'"),
        SUBQUERY_WHERE("SELECT * FROM (SELECT * FROM " + RAW_TABLE + " WHERE status IS NULL OR status <> '" + JUNK
                + "') src");

        private final String sql;

        Source(String sql) {
            this.sql = sql;
        }

        public String sql() {
            return sql;
        }

        /** True when the query leaves out junk rows. */
        public boolean filters() {
            return this == WHERE || this == SUBQUERY_WHERE;
        }

        /** The query's filter, as the model applies it to the raw table's rows. */
        public Predicate<Map<String, Object>> predicate() {
            return filters() ? row -> !JUNK.equals(row.get("status")) : row -> true;
        }
    }

    /** A column of the raw table. */
    public record Column(String name, ColumnType type) {
    }

    /** A change of the raw table's columns before a step's deliveries. */
    public record ColumnChange(Kind kind, Column column) {
        public enum Kind { ADD, DROP, WIDEN }

        @Override
        public String toString() {
            return switch (kind) {
                case ADD -> "add column " + column.name() + " " + column.type();
                case DROP -> "drop column " + column.name();
                case WIDEN -> "widen column " + column.name() + " to " + column.type();
            };
        }
    }

    /**
     * A restatement of an applied batch the source still holds (a corrected file re-sent under the same sequence):
     * the rows of batch {@code batch} (an index into {@link #batches()}) are replaced by {@code rows}.
     */
    public record Restatement(int batch, Kind kind, List<Map<String, Object>> rows) {
        /** How the batch changed. */
        public enum Kind { ROWS_CORRECTED, ROWS_APPENDED, ROWS_REMOVED, BATCH_REPLACED }

        public Restatement {
            rows = List.copyOf(rows);
        }
    }

    /**
     * One step of delivery: retention drops the batches {@code drop} (indexes into {@link #batches()}, all applied
     * by an earlier run), the raw table's columns change, the batches of {@code restate} are restated, the batches
     * {@code deliver} are loaded (with their NULL-sequence rows), then the model is run {@code runs} times: the first
     * time as {@code operation} (a replay from {@code replayFrom}, a full refresh, or a run), then as plain runs (each
     * must be a no-op).
     */
    public record Step(List<Integer> drop, List<ColumnChange> changes, List<Integer> deliver,
                       ReferenceModel.Operation operation, Object replayFrom, int runs, List<Restatement> restate) {
        public Step {
            drop = List.copyOf(drop);
            changes = List.copyOf(changes);
            deliver = List.copyOf(deliver);
            restate = List.copyOf(restate);
        }

        public Step(List<Integer> drop, List<ColumnChange> changes, List<Integer> deliver,
                    ReferenceModel.Operation operation, Object replayFrom, int runs) {
            this(drop, changes, deliver, operation, replayFrom, runs, List.of());
        }

        public Step(List<Integer> drop, List<Integer> deliver, int runs) {
            this(drop, List.of(), deliver, ReferenceModel.Operation.RUN, null, runs);
        }
    }

    public Scenario {
        columns = List.copyOf(columns);
        laterColumns = List.copyOf(laterColumns);
        keyColumns = List.copyOf(keyColumns);
        checkCols = checkCols == null ? null : List.copyOf(checkCols);
        metaOverrides = Map.copyOf(metaOverrides);
        batches = List.copyOf(batches);
        nullSequenceRows = Map.copyOf(nullSequenceRows);
        plan = List.copyOf(plan);
        options = options == null ? Options.NONE : options;
    }

    public List<String> columnNames() {
        return columns.stream().map(Column::name).toList();
    }

    /** The type of a column (initial or added later), or null. */
    public ColumnType typeOf(String column) {
        for (List<Column> list : List.of(columns, laterColumns)) {
            for (Column c : list) {
                if (c.name().equalsIgnoreCase(column)) {
                    return c.type();
                }
            }
        }
        for (Step s : plan) {
            for (ColumnChange ch : s.changes()) {
                if (ch.column().name().equalsIgnoreCase(column)) {
                    return ch.column().type();
                }
            }
        }
        return null;
    }

    /** The meta column names the history uses (defaults with this case's overrides). */
    public ColumnNames metaColumns() {
        return ColumnNames.withOverrides(metaOverrides);
    }

    /** The settings the engine runs with. */
    public ModelSettings settings() {
        ModelSettings.Builder b = ModelSettings.builder(MODEL_NAME)
                .target(target)
                .source(source.sql())
                .uniqueKey(keyColumns)
                .updatedAt(updatedAtColumn())
                .sequenceBy(options.sequenceList() == 0 ? List.of(SEQUENCE) : options.sequenceList() == 1
                        ? List.of(SEQUENCE_PART, SEQUENCE) : List.of(SEQUENCE, SEQUENCE_PART))
                .strategy(strategy)
                .checkCols(checkCols)
                .hardDeletes(hardDeletes)
                .metadataSchema(metadataSchema);
        if (!metaOverrides.isEmpty()) {
            b.columnNames(metaOverrides);
        }
        if (deleteWhen) {
            b.deleteWhen(DELETE_WHEN);
        }
        b.validToCurrent(options.validToCurrent());
        b.ignoreNullUpdates(options.ignoreNullUpdates());
        b.untrackedColumns(options.overwriteUntracked() ? UntrackedColumns.OVERWRITE : UntrackedColumns.IGNORE);
        b.restatementLookback(options.restatementLookback()).restatementSweep(options.restatementSweep());
        return b.build();
    }

    /** The same settings, as the reference model reads them. */
    public ReferenceModel.Config modelConfig() {
        // a sequence_by list is no time (deletions by absence are dated as under a number or string sequence)
        boolean temporal = (sequenceType == ColumnType.DATE || sequenceType == ColumnType.TIMESTAMP)
                && options.sequenceList() == 0;
        return new ReferenceModel.Config(columnNames(), keyColumns, updatedAtColumn(), SEQUENCE, strategy, checkCols,
                hardDeletes, deleteWhen ? row -> "D".equals(row.get(OP)) : null, temporal,
                options.ignoreNullUpdates(), options.overwriteUntracked(), options.sequenceList() == 0 ? Map.of()
                        : Map.of(SEQUENCE_PART, this::sequencePart), options.restatementLookback(),
                options.restatementSweep());
    }

    /**
     * The {@code batch_part} of the batch whose sequence is {@code sequence}: its position in business order / 3. A
     * point between batches (a replay's) takes the part of the next batch, so the list orders it where its
     * {@code batch_seq} does.
     */
    public Object sequencePart(Object sequence) {
        for (int i = 0; i < batches.size(); i++) {
            if (ReferenceModel.compareValues(batches.get(i).sequence(), sequence) >= 0) {
                return (long) (i / 3);
            }
        }
        return (long) (Math.max(0, batches.size() - 1) / 3);
    }

    /**
     * A batch's sequence as the engine shows it: the value, or with a {@code sequence_by} list the list of values
     * ({@code [batch_part, batch_seq]} or the other way round).
     */
    public Object shownSequence(Object sequence) {
        if (sequence == null || options.sequenceList() == 0) {
            return sequence;
        }
        Object part = sequencePart(sequence);
        Object seq = ReferenceModel.normalise(sequence);
        return options.sequenceList() == 1 ? List.of(part, seq) : List.of(seq, part);
    }

    /** A batch's sequence as the ledger writes it: canonical text, or the tuple {@code (0, 2024-01-05)}. */
    public String sequenceText(Object sequence) {
        Object shown = shownSequence(sequence);
        return shown instanceof List<?> ? dev.itersnap.spi.ValueType.text(shown) : ReferenceModel.canonical(sequence);
    }

    /** True when the plan changes the raw table's columns. */
    public boolean changesSchema() {
        return plan.stream().anyMatch(s -> !s.changes().isEmpty());
    }

    /** How many engine runs the plan makes. */
    public int engineRuns() {
        return plan.stream().mapToInt(Step::runs).sum();
    }

    /** Every row delivered, for sorting failing seeds by size (smaller is easier to read). */
    public int size() {
        int rows = batches.stream().mapToInt(b -> b.rows().size()).sum();
        return rows + nullSequenceRows.values().stream().mapToInt(List::size).sum();
    }

    /** A one-line summary: the settings and the shape. */
    public String title() {
        return "seed " + seed + ": " + lower(profile) + ", " + lower(strategy)
                + (checkCols == null ? "" : " check_cols=" + checkCols) + ", hard_deletes=" + lower(hardDeletes)
                + (deleteWhen ? ", delete_when" : "") + ", key=" + keyColumns + ", " + sequenceType + " sequence, "
                + batches.size() + " batches, " + plan.size() + " steps, " + engineRuns() + " runs"
                + (source == Source.PLAIN ? "" : ", source " + lower(source))
                + (changesSchema() ? ", schema changes" : "")
                + (metaOverrides.isEmpty() ? "" : ", column_names")
                + (metadataSchema.equals(ModelSettings.DEFAULT_METADATA_SCHEMA) ? "" : ", metadata_schema")
                + (target.contains(".") ? ", target " + target : "")
                + (options.toString().isEmpty() ? "" : ", " + options);
    }

    /** Everything needed to reproduce the case: settings, batches, NULL-sequence rows and the delivery plan. */
    public String describe() {
        StringBuilder s = new StringBuilder();
        s.append(title()).append('\n');
        s.append("  rerun: -Ditersnap.seed=").append(seed).append('\n');
        s.append("  settings: ").append(settings()).append(", source: ").append(source.sql())
                .append(", metadata_schema: ").append(metadataSchema).append(", column_names: ")
                .append(metaOverrides).append('\n');
        s.append("  raw table ").append(RAW_TABLE).append(": ")
                .append(columns.stream().map(c -> c.name() + " " + c.type()).collect(Collectors.joining(", ")))
                .append(laterColumns.isEmpty() ? "" : "; added later: " + laterColumns.stream()
                        .map(c -> c.name() + " " + c.type()).collect(Collectors.joining(", ")))
                .append('\n');
        s.append("  batches in business order (rows carry every column they can ever have):\n");
        for (int i = 0; i < batches.size(); i++) {
            ReferenceModel.Batch b = batches.get(i);
            s.append("    #").append(i).append(" ").append(SEQUENCE).append('=').append(b.sequence()).append('\n');
            for (Map<String, Object> row : b.rows()) {
                s.append("        ").append(formatRow(row)).append('\n');
            }
            for (Map<String, Object> row : nullSequenceRows.getOrDefault(i, List.of())) {
                s.append("        ").append(formatRow(row)).append("   (NULL sequence, delivered with #").append(i)
                        .append(")\n");
            }
        }
        s.append("  delivery plan:\n");
        for (int i = 0; i < plan.size(); i++) {
            s.append("    step ").append(i + 1).append(": ").append(describe(plan.get(i))).append('\n');
        }
        return s.toString();
    }

    /** One step in words. */
    public String describe(Step step) {
        StringBuilder s = new StringBuilder();
        if (!step.drop().isEmpty()) {
            s.append("retention drops ").append(sequencesOf(step.drop())).append("; ");
        }
        for (ColumnChange c : step.changes()) {
            s.append(c).append("; ");
        }
        for (Restatement r : step.restate()) {
            s.append("restate ").append(batches.get(r.batch()).sequence()).append(" (")
                    .append(r.kind().name().toLowerCase(Locale.ROOT)).append(", ").append(r.rows().size())
                    .append(" rows); ");
        }
        s.append("deliver ").append(sequencesOf(step.deliver())).append("; ");
        switch (step.operation()) {
            case FULL_REFRESH -> s.append("fullRefresh");
            case REPLAY -> s.append("replayFrom(").append(step.replayFrom()).append(')');
            default -> s.append("run");
        }
        if (step.runs() > 1) {
            s.append(", then run x").append(step.runs() - 1);
        }
        return s.toString();
    }

    /** The sequence values of batch indexes, for messages. */
    public List<Object> sequencesOf(List<Integer> indexes) {
        return indexes.stream().map(i -> (Object) batches.get(i).sequence()).toList();
    }

    /** The sequence as the ledger and the error log write it: ISO-8601 for dates, plain digits for numbers. */
    public static String canonical(Object sequence) {
        return ReferenceModel.canonical(sequence);
    }

    private static String formatRow(Map<String, Object> row) {
        Map<String, Object> m = new LinkedHashMap<>(row);
        return m.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).collect(Collectors.joining(" "));
    }

    private static String lower(Enum<?> e) {
        return e.name().toLowerCase(Locale.ROOT);
    }

    /** The indexes 0..n-1, for tests. */
    static List<Integer> range(int n) {
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(i);
        }
        return out;
    }
}
