package dev.itersnap.conformance;

import dev.itersnap.conformance.TestDatabase.ColumnType;
import dev.itersnap.core.HardDeletes;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.Strategy;

import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * One generated case: the raw table's shape, the model's settings, the batches in business order, the NULL-sequence
 * rows that come with some deliveries, and the delivery plan (which batches arrive before which run, which ones
 * retention drops). Immutable; {@link #describe()} prints everything needed to reproduce it by hand.
 */
public record Scenario(long seed, List<Column> columns, List<String> keyColumns, Strategy strategy,
                       List<String> checkCols, HardDeletes hardDeletes, boolean deleteWhen, boolean dateSequence,
                       List<ReferenceModel.Batch> batches, Map<Integer, List<Map<String, Object>>> nullSequenceRows,
                       List<Step> plan) {

    public static final String RAW_TABLE = "raw_customers";
    public static final String HISTORY_TABLE = "customers_history";
    public static final String MODEL_NAME = "customers";
    public static final String UPDATED_AT = "updated_at";
    public static final String SEQUENCE = "batch_seq";
    public static final String OP = "op";
    public static final String DELETE_WHEN = "op = 'D'";

    /** A column of the raw table. */
    public record Column(String name, ColumnType type) {
    }

    /**
     * One step of delivery: retention drops the batches {@code drop} (indexes into {@link #batches()}, all applied
     * by an earlier run), then the batches {@code deliver} are loaded (with their NULL-sequence rows), then the model
     * is run {@code runs} times (a second run must be a no-op).
     */
    public record Step(List<Integer> drop, List<Integer> deliver, int runs) {
        public Step {
            drop = List.copyOf(drop);
            deliver = List.copyOf(deliver);
        }
    }

    public Scenario {
        columns = List.copyOf(columns);
        keyColumns = List.copyOf(keyColumns);
        checkCols = checkCols == null ? null : List.copyOf(checkCols);
        batches = List.copyOf(batches);
        nullSequenceRows = Map.copyOf(nullSequenceRows);
        plan = List.copyOf(plan);
    }

    public List<String> columnNames() {
        return columns.stream().map(Column::name).toList();
    }

    /** The settings the engine runs with. */
    public ModelSettings settings() {
        ModelSettings.Builder b = ModelSettings.builder(MODEL_NAME)
                .target(HISTORY_TABLE)
                .source("SELECT * FROM " + RAW_TABLE)
                .uniqueKey(keyColumns)
                .updatedAt(UPDATED_AT)
                .sequenceBy(SEQUENCE)
                .strategy(strategy)
                .checkCols(checkCols)
                .hardDeletes(hardDeletes);
        if (deleteWhen) {
            b.deleteWhen(DELETE_WHEN);
        }
        return b.build();
    }

    /** The same settings, as the reference model reads them. */
    public ReferenceModel.Config modelConfig() {
        return new ReferenceModel.Config(columnNames(), keyColumns, UPDATED_AT, SEQUENCE, strategy, checkCols,
                hardDeletes, deleteWhen ? row -> "D".equals(row.get(OP)) : null, dateSequence);
    }

    /** The expected history: every batch applied once, in business order. */
    public ReferenceModel expected() {
        List<Map<String, Object>> nullSeq = new ArrayList<>();
        nullSequenceRows.values().forEach(nullSeq::addAll);
        return ReferenceModel.ofBatches(modelConfig(), batches, nullSeq);
    }

    /** Every row delivered, for sorting failing seeds by size (smaller is easier to read). */
    public int size() {
        int rows = batches.stream().mapToInt(b -> b.rows().size()).sum();
        return rows + nullSequenceRows.values().stream().mapToInt(List::size).sum();
    }

    /** A one-line summary: the settings and the shape. */
    public String title() {
        return "seed " + seed + ": " + lower(strategy) + (checkCols == null ? "" : " check_cols=" + checkCols)
                + ", hard_deletes=" + lower(hardDeletes) + (deleteWhen ? ", delete_when" : "")
                + ", key=" + keyColumns + ", " + (dateSequence ? "DATE" : "integer") + " sequence, "
                + batches.size() + " batches, " + plan.size() + " steps";
    }

    /** Everything needed to reproduce the case: settings, batches, NULL-sequence rows and the delivery plan. */
    public String describe() {
        StringBuilder s = new StringBuilder();
        s.append(title()).append('\n');
        s.append("  rerun: -Ditersnap.seed=").append(seed).append('\n');
        s.append("  raw table ").append(RAW_TABLE).append(": ")
                .append(columns.stream().map(c -> c.name() + " " + c.type()).collect(Collectors.joining(", ")))
                .append('\n');
        s.append("  batches in business order:\n");
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
            Step step = plan.get(i);
            s.append("    step ").append(i + 1).append(": ");
            if (!step.drop().isEmpty()) {
                s.append("retention drops ").append(sequencesOf(step.drop())).append("; ");
            }
            s.append("deliver ").append(sequencesOf(step.deliver())).append("; run x").append(step.runs()).append('\n');
        }
        return s.toString();
    }

    /** The sequence values of batch indexes, for messages. */
    public List<Object> sequencesOf(List<Integer> indexes) {
        return indexes.stream().map(i -> (Object) batches.get(i).sequence()).toList();
    }

    /** The sequence as the ledger and the error log write it: ISO-8601 for dates, plain digits for numbers. */
    public static String canonical(Object sequence) {
        if (sequence == null) {
            return null;
        }
        if (sequence instanceof LocalDate d) {
            return d.toString();
        }
        return sequence.toString();
    }

    private static String formatRow(Map<String, Object> row) {
        return row.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).collect(Collectors.joining(" "));
    }

    private static String lower(Enum<?> e) {
        return e.name().toLowerCase(Locale.ROOT);
    }
}
