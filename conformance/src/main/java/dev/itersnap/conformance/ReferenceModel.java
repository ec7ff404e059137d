package dev.itersnap.conformance;

import dev.itersnap.core.BatchResult;
import dev.itersnap.core.HardDeletes;
import dev.itersnap.core.SnapshotEvent;
import dev.itersnap.core.Strategy;

import java.math.BigDecimal;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Predicate;

/**
 * The oracle of the conformance suite: the rules of docs/semantics.md implemented in memory, run by run.
 * Clarity beats speed here; every rule is a few lines that can be read against the documents.
 *
 * <p>The model holds everything a run leaves behind: the history, the ledger (one entry per applied batch with its
 * counts, deletion time, reproduced flag and run id), the error log (sequence, reason, record, run id), the archive
 * (rows of applied batches the history cannot show), the column registry and the run log. {@link #run} plays one
 * engine run over the source as it is now (its current columns and rows): discovery, late detection, schema
 * evolution, NULL-sequence rows, reproduction of batches that aged out of the source (from the model's own history
 * and archive), roll back, and the batches in business order; it returns the run's result and events.
 *
 * <p>A source row is a map from column name (lower case, as the scenario names them) to value: integers as Long,
 * decimals as BigDecimal without trailing zeros, LocalDate, LocalDateTime, String. {@code updated_at} is a
 * LocalDateTime; the sequence a Long, BigDecimal, String, LocalDate or LocalDateTime (strings compare by code point).
 *
 * <p>Not thread-safe; one instance models one model (one history table and its metadata).
 */
public final class ReferenceModel {
    /** Rejection reasons, as written to the error log, in priority order. */
    public static final String NULL_SEQUENCE = "null_sequence";
    public static final String NULL_KEY = "null_key";
    public static final String DUPLICATE_KEY = "duplicate_key";
    public static final String NULL_UPDATED_AT = "null_updated_at";
    public static final String UPDATED_AT_REGRESSION = "updated_at_regression";
    /** Stage-only reason of an exact copy of another row of the batch: applied once, never logged. */
    static final String DUPLICATE_COPY = "duplicate_copy";

    public static final String INSERT = "insert";
    public static final String UPDATE = "update";
    public static final String DELETE = "delete";

    /** Sequences in business order: numbers and times by value, strings by code point. */
    public static final Comparator<Object> SEQUENCE_ORDER = ReferenceModel::compareValues;

    /** The operations of {@code IterativeSnapshot}, as the run log names them. */
    public enum Operation {
        RUN("run"), FULL_REFRESH("full_refresh"), REPLAY("replay");

        private final String label;

        Operation(String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }
    }

    /**
     * What the model needs of the settings.
     *
     * @param columns          the source's columns (for {@link #ofBatches}); {@link #run} takes the current ones
     * @param checkCols        tracked columns under {@code check}; null means {@code all}
     * @param deleteWhen       the {@code delete_when} predicate over a source row, or null
     * @param temporalSequence true when {@code sequence_by} and {@code updated_at} are both temporal: the deletion
     *                         time of a full batch is then the sequence itself (a DATE at midnight)
     * @param ignoreNullUpdates {@code ignore_null_updates}: a NULL in a non-key column of an accepted row takes the
     *                         value of the key's current version (none when the key has no current version)
     * @param overwriteUntracked {@code untracked_columns: overwrite}: a row that changes no tracked column writes the
     *                         untracked ones into the current version
     */
    public record Config(List<String> columns, List<String> keyColumns, String updatedAtColumn, String sequenceColumn,
                         Strategy strategy, List<String> checkCols, HardDeletes hardDeletes,
                         Predicate<Map<String, Object>> deleteWhen, boolean temporalSequence,
                         boolean ignoreNullUpdates, boolean overwriteUntracked,
                         Map<String, java.util.function.Function<Object, Object>> sequenceParts,
                         int restatementLookback, int restatementSweep) {
        /** As above, every applied batch the source holds compared on every run. */
        public Config(List<String> columns, List<String> keyColumns, String updatedAtColumn, String sequenceColumn,
                      Strategy strategy, List<String> checkCols, HardDeletes hardDeletes,
                      Predicate<Map<String, Object>> deleteWhen, boolean temporalSequence, boolean ignoreNullUpdates,
                      boolean overwriteUntracked, Map<String, java.util.function.Function<Object, Object>> sequenceParts) {
            this(columns, keyColumns, updatedAtColumn, sequenceColumn, strategy, checkCols, hardDeletes, deleteWhen,
                    temporalSequence, ignoreNullUpdates, overwriteUntracked, sequenceParts,
                    dev.itersnap.core.ModelSettings.MAX_RESTATEMENT_BATCHES, 0);
        }

        /** As above, with no other column in {@code sequence_by}. */
        public Config(List<String> columns, List<String> keyColumns, String updatedAtColumn, String sequenceColumn,
                      Strategy strategy, List<String> checkCols, HardDeletes hardDeletes,
                      Predicate<Map<String, Object>> deleteWhen, boolean temporalSequence, boolean ignoreNullUpdates,
                      boolean overwriteUntracked) {
            this(columns, keyColumns, updatedAtColumn, sequenceColumn, strategy, checkCols, hardDeletes, deleteWhen,
                    temporalSequence, ignoreNullUpdates, overwriteUntracked, Map.of());
        }

        public Config {
            sequenceParts = Map.copyOf(sequenceParts);
            columns = List.copyOf(columns);
            keyColumns = List.copyOf(keyColumns);
            checkCols = checkCols == null ? null : List.copyOf(checkCols);
        }

        /** Tracked columns of {@link #columns()}. */
        public List<String> trackedColumns() {
            return trackedColumns(columns);
        }

        /**
         * Tracked columns among {@code sourceColumns}, in source order: {@code check_cols} under check ({@code all} =
         * every column but the key, updated_at and sequence_by), every column but those under timestamp.
         */
        public List<String> trackedColumns(List<String> sourceColumns) {
            List<String> tracked = new ArrayList<>();
            for (String c : sourceColumns) {
                boolean listed = strategy == Strategy.TIMESTAMP || checkCols == null || checkCols.contains(c);
                if (!isMeta(c) && listed) {
                    tracked.add(c);
                }
            }
            return tracked;
        }

        boolean isMeta(String c) {
            return keyColumns.contains(c) || c.equals(updatedAtColumn) || c.equals(sequenceColumn)
                    || sequenceParts.containsKey(c);
        }

        /**
         * The columns among {@code sourceColumns} a row that changes no tracked column overwrites in place under
         * {@code untracked_columns: overwrite} (none otherwise): every one but the key, updated_at, sequence_by and
         * the tracked ones.
         */
        List<String> overwrittenColumns(List<String> sourceColumns) {
            if (!overwriteUntracked) {
                return List.of();
            }
            List<String> tracked = trackedColumns(sourceColumns);
            return sourceColumns.stream().filter(c -> !isMeta(c) && !tracked.contains(c)).toList();
        }
    }

    /** One batch: its sequence value and its rows (every row carries that value in the sequence column). */
    public record Batch(Comparable<?> sequence, List<Map<String, Object>> rows) {
        public Batch {
            rows = List.copyOf(rows);
        }
    }

    /** A row set aside: the batch's sequence (null for {@code null_sequence}), the reason, the row. */
    public record Rejection(Object sequence, String reason, Map<String, Object> row) {
    }

    /**
     * One row of the error log: the batch's sequence value (null for {@code null_sequence}), the reason, the record
     * (the row's source columns at the time it was logged, in source order) and the run that logged it.
     */
    public record LoggedError(Object sequence, String reason, Map<String, Object> record, String runId) {
        /** The sequence as the error log writes it. */
        public String sequenceText() {
            return canonical(sequence);
        }
    }

    /** One ledger entry, as the engine records it. {@code deletionTime} is the canonical text or null. */
    public record LedgerEntry(Object sequence, String runId, long sourceRows, long duplicateRows, long inserted,
                              long updated, long deleted, long rejected, String deletionTime, boolean reproduced) {
        public String sequenceText() {
            return canonical(sequence);
        }
    }

    /**
     * One row of the archive: the batch's sequence, the row's source columns when it was archived, whether it is an
     * explicit delete, and the reason it was set aside (null for rows that were not, and for
     * {@code updated_at_regression}, which a replay detects again).
     */
    public record ArchivedRow(Object sequence, Map<String, Object> values, boolean delete, String reason) {
    }

    /** One column registry entry: the batch that introduced the column (null: there from the start). */
    public record RegisteredColumn(String column, Object introducedAt, boolean inSource, Object droppedAfter) {
    }

    /** One row of the run log (successful runs). */
    public record LoggedRun(String runId, String operation, int batches, boolean late, String replayPoint) {
    }

    /** What a run returns and reports (the events this model predicts: OutOfOrder, SchemaChange, RowsRejected,
     * DuplicateRecords, BatchApplied). */
    public record RunOutcome(List<BatchResult> batches, boolean lateBatchFound, Object replayPoint,
                             List<SnapshotEvent> events) {
    }

    /** One row of the history table. Mutable only by the model. */
    public static final class Version {
        private final List<Object> key;
        private final Map<String, Object> values;
        private final LocalDateTime updatedAt;
        private final LocalDateTime validFrom;
        private final boolean deletionRecord;
        private final Object openedSeq;
        private LocalDateTime validTo;
        private String changeType = INSERT;
        private List<String> changedAttributes;
        private Object closedSeq;

        Version(List<Object> key, Map<String, Object> values, LocalDateTime updatedAt, LocalDateTime validFrom,
                boolean deletionRecord, Object openedSeq) {
            this.key = List.copyOf(key);
            this.values = new LinkedHashMap<>(values);
            this.updatedAt = updatedAt;
            this.validFrom = validFrom;
            this.deletionRecord = deletionRecord;
            this.openedSeq = openedSeq;
        }

        public List<Object> key() { return key; }
        /** The data columns of the version (a column the map lacks is NULL). */
        public Map<String, Object> values() { return values; }
        /** {@code dbt_updated_at}: the row's updated_at, or the deletion time on a deletion record. */
        public LocalDateTime updatedAt() { return updatedAt; }
        public LocalDateTime validFrom() { return validFrom; }
        public LocalDateTime validTo() { return validTo; }
        public String changeType() { return changeType; }
        /** Tracked columns that differ in the successor, for a version closed by an update; else null. */
        public List<String> changedAttributes() { return changedAttributes; }
        /** True on a deletion record ({@code hard_deletes: new_record}). */
        public boolean deletionRecord() { return deletionRecord; }
        public Object openedSeq() { return openedSeq; }
        public Object closedSeq() { return closedSeq; }
        public boolean current() { return validTo == null; }

        @Override
        public String toString() {
            return "Version[key=" + key + ", values=" + values + ", updatedAt=" + updatedAt + ", from=" + validFrom
                    + ", to=" + validTo + ", " + changeType + ", changed=" + changedAttributes
                    + (deletionRecord ? ", DELETION RECORD" : "") + ", opened=" + openedSeq + ", closed=" + closedSeq
                    + "]";
        }
    }

    private final Config config;
    private final List<Version> versions = new ArrayList<>();
    private final TreeMap<Object, LedgerEntry> ledger = new TreeMap<>(SEQUENCE_ORDER);
    private final List<LoggedError> errors = new ArrayList<>();
    private final List<ArchivedRow> archive = new ArrayList<>();
    private final LinkedHashMap<String, RegisteredColumn> registry = new LinkedHashMap<>();
    private final List<LoggedRun> runLog = new ArrayList<>();
    /** The fingerprint recorded with each ledger entry applied from the source (none for a reproduced batch). */
    private final TreeMap<Object, Fingerprint> fingerprints = new TreeMap<>(SEQUENCE_ORDER);
    /** The batch the last run's restatement sweep stopped at, or null. */
    private Object sweptThrough;

    /**
     * A batch's fingerprint: the source's columns (in name order), the distinct texts of its rows over them (sorted, so
     * independent of row order and of exact copies; NULL distinct from any value) and its row count (reported, not
     * compared). Two fingerprints compare only over the same columns.
     */
    private record Fingerprint(List<String> columns, List<String> rows, int count) {
        boolean comparable(Fingerprint other) {
            return other != null && columns.equals(other.columns);
        }

        boolean sameContent(Fingerprint other) {
            return rows.equals(other.rows);
        }
    }
    /**
     * How often each source column was widened: a fingerprint covers the columns with their types, so one recorded
     * before a widening is not compared with one after it (docs/semantics.md "Restated batches", columns).
     */
    private final Map<String, Integer> widenings = new HashMap<>();

    /** The source column {@code column} was widened (its values' text may change): fingerprints before it do not compare. */
    public void widened(String column) {
        widenings.merge(column, 1, Integer::sum);
    }

    /** The data columns of the history table, in the order they were added; null until it exists. */
    private List<String> historyColumns;

    public ReferenceModel(Config config) {
        this.config = Objects.requireNonNull(config);
    }

    /**
     * The state after one run over every batch and the NULL-sequence rows (every batch applied once, in business
     * order, with the columns of {@link Config#columns()}).
     */
    public static ReferenceModel ofBatches(Config config, Collection<Batch> batches,
                                           List<Map<String, Object>> nullSequenceRows) {
        ReferenceModel model = new ReferenceModel(config);
        List<Map<String, Object>> rows = new ArrayList<>();
        batches.forEach(b -> rows.addAll(b.rows()));
        rows.addAll(nullSequenceRows);
        model.run(Operation.RUN, null, config.columns(), rows, "clean");
        return model;
    }

    public Config config() {
        return config;
    }

    /** Every version, in the order the model created them. */
    public List<Version> versions() {
        return List.copyOf(versions);
    }

    /** Every row of the error log, in the order the model logged them. */
    public List<LoggedError> errors() {
        return List.copyOf(errors);
    }

    /** The error log as rejections (sequence, reason, record). */
    public List<Rejection> rejections() {
        return errors.stream().map(e -> new Rejection(e.sequence(), e.reason(), e.record())).toList();
    }

    /** The ledger in business order. */
    public List<LedgerEntry> ledger() {
        return List.copyOf(ledger.values());
    }

    /** The archive, in the order rows were archived. */
    public List<ArchivedRow> archive() {
        return List.copyOf(archive);
    }

    /** The column registry. */
    public List<RegisteredColumn> registry() {
        return List.copyOf(registry.values());
    }

    /** The run log (one entry per run played). */
    public List<LoggedRun> runLog() {
        return List.copyOf(runLog);
    }

    /** The data columns of the history table in the order they were added, or null before it exists. */
    public List<String> historyColumns() {
        return historyColumns == null ? null : List.copyOf(historyColumns);
    }

    // ------------------------------------------------------------------ one run

    /**
     * Plays one run of the engine over the source as it is now.
     *
     * @param operation     run, full refresh or replay
     * @param replayFrom    for {@link Operation#REPLAY}: the sequence to replay from (a value of the sequence's type)
     * @param sourceColumns the source query's columns now, in order
     * @param sourceRows    the rows the source query returns now (every retained batch and NULL-sequence row)
     * @param runId         the run's id, stamped on its ledger entries and error-log rows
     */
    public RunOutcome run(Operation operation, Object replayFrom, List<String> sourceColumns,
                          List<Map<String, Object>> sourceRows, String runId) {
        List<SnapshotEvent> events = new ArrayList<>();
        List<Map<String, Object>> rows = sourceRows.stream().map(r -> project(r, sourceColumns)).toList();
        TreeMap<Object, LedgerEntry> appliedBefore = new TreeMap<>(ledger);
        TreeSet<Object> applied = new TreeSet<>(SEQUENCE_ORDER);
        applied.addAll(ledger.keySet());
        TreeSet<Object> inSource = new TreeSet<>(SEQUENCE_ORDER);
        boolean nullSequence = false;
        for (Map<String, Object> row : rows) {
            Object s = row.get(config.sequenceColumn());
            if (s == null) {
                nullSequence = true;
            } else {
                inSource.add(s);
            }
        }
        // Step 3b: the batches' fingerprints in the source now; the applied batches this run compares (docs/semantics.md
        // "Restated batches": the lookback, a late batch's replayed ones, the sweep's share) whose content changed are
        // restated
        Map<Object, Fingerprint> all = fingerprints(rows, sourceColumns);
        // the source's columns changed since a batch's fingerprint: every batch is fingerprinted again, in a pass
        // that leaves the sweep where it was
        boolean columnsChanged = applied.stream().anyMatch(s -> fingerprints.get(s) != null && all.get(s) != null
                && !fingerprints.get(s).comparable(all.get(s)));
        TreeSet<Object> compared;
        if (columnsChanged || operation != Operation.RUN) { // a deliberate rebuild compares every batch too
            compared = new TreeSet<>(SEQUENCE_ORDER);
            compared.addAll(applied);
            compared.retainAll(inSource);
        } else {
            compared = compared(applied, inSource);
        }
        Map<Object, Fingerprint> now = new TreeMap<>(SEQUENCE_ORDER);
        compared.forEach(s -> now.put(s, all.get(s)));
        TreeSet<Object> restated = new TreeSet<>(SEQUENCE_ORDER);
        // fingerprinted before the columns changed: compared over the columns they cover where the source still has
        // them as they were; else uncomparable, and replayed as restated ones are
        TreeSet<Object> uncomparable = new TreeSet<>(SEQUENCE_ORDER);
        Set<String> changedColumns = new java.util.TreeSet<>();
        for (Object s : compared) {
            Fingerprint recorded = fingerprints.get(s);
            if (recorded == null || now.get(s) == null) {
                continue;
            }
            if (recorded.comparable(now.get(s))) {
                if (!recorded.sameContent(now.get(s))) {
                    restated.add(s);
                }
            } else if (now.get(s).columns().containsAll(recorded.columns())) {
                List<String> names = recorded.columns().stream().map(c -> c.contains("#") ? c.substring(0,
                        c.indexOf('#')) : c).toList();
                if (!recorded.sameContent(fingerprints(rows, names).get(s))) {
                    restated.add(s);
                }
            } else {
                uncomparable.add(s);
                recorded.columns().stream().filter(c -> !now.get(s).columns().contains(c))
                        .map(c -> c.contains("#") ? c.substring(0, c.indexOf('#')) : c).forEach(changedColumns::add);
            }
        }
        // Step 4: the replay point
        TreeSet<Object> fresh = new TreeSet<>(inSource);
        fresh.removeAll(applied);
        Object point = operation == Operation.REPLAY ? normalise(replayFrom) : null;
        if (operation == Operation.FULL_REFRESH && !applied.isEmpty() && !inSource.isEmpty()) {
            point = inSource.first();
        }
        boolean late = false;
        if (!fresh.isEmpty() && !applied.isEmpty() && compareValues(fresh.first(), applied.last()) < 0) {
            late = true;
            Object lateFrom = fresh.first();
            point = point == null || compareValues(lateFrom, point) < 0 ? lateFrom : point;
            events.add(new SnapshotEvent.OutOfOrder("", runId, List.copyOf(fresh.headSet(applied.last(), false)),
                    applied.last(), point));
        }
        if (!restated.isEmpty()) {
            // a restated batch is replayed like a late one, with everything applied after it
            point = point == null || compareValues(restated.first(), point) < 0 ? restated.first() : point;
            for (Object s : restated) {
                events.add(new SnapshotEvent.BatchRestated("", runId, s, fingerprints.get(s).count(),
                        now.get(s).count()));
            }
        }
        if (!uncomparable.isEmpty()) {
            point = point == null || compareValues(uncomparable.first(), point) < 0 ? uncomparable.first() : point;
            events.add(new SnapshotEvent.UncomparableBatches("", runId, List.copyOf(changedColumns),
                    uncomparable.size(), uncomparable.first()));
        }
        if (point != null && (applied.isEmpty() || compareValues(point, applied.last()) > 0)) {
            point = null; // nothing applied at or after it: nothing to roll back
        }
        TreeSet<Object> batches = new TreeSet<>(fresh);
        if (point != null) {
            batches.addAll(applied.tailSet(point, true));
        }
        if (batches.isEmpty()) {
            if (!applied.isEmpty()) {
                // columns the source no longer has are recorded as gone even when nothing is applied
                List<String> missing = new ArrayList<>();
                for (RegisteredColumn known : List.copyOf(registry.values())) {
                    if (known.inSource() && !sourceColumns.contains(known.column())) {
                        registry.put(known.column(), new RegisteredColumn(known.column(), known.introducedAt(), false,
                                ledger.lastKey()));
                        missing.add(known.column());
                    }
                }
                if (!missing.isEmpty()) {
                    events.add(new SnapshotEvent.SchemaChange("", runId, List.of(), missing));
                }
            }
            recordFingerprints(withApplied(now, all, batches), batches, Set.of());
            runLog.add(new LoggedRun(runId, operation.label(), 0, false, null));
            return new RunOutcome(List.of(), false, null, events);
        }
        // Step 5a: schema evolution, before the first batch
        Object first = batches.first();
        Map<String, Object> introduced = prepare(first, sourceColumns, runId, events);
        // columns the source no longer has that this replay stages again (docs/semantics.md "Schema evolution")
        List<Carried> carried = carried(first, sourceColumns);
        carried.forEach(c -> {
            if (c.from() != null) {
                introduced.put(c.column(), c.from());
            }
        });
        List<String> carrying = withCarried(sourceColumns, carried, null);
        // Step 5b: NULL-sequence rows are set aside once; batches that aged out are reproduced (before the roll back)
        if (nullSequence) {
            logNullSequences(rows, sourceColumns, runId, events);
        }
        Map<Object, List<StagedRow>> reproduced = new HashMap<>();
        for (Object s : batches) {
            if (!inSource.contains(s)) {
                reproduced.put(s, reproduce(s, appliedBefore.get(s), introduced, carrying));
            }
        }
        // the carried columns' values, from the history before the roll back
        Map<Object, List<Map<String, Object>>> stagedRows = new HashMap<>();
        for (Object s : batches) {
            if (reproduced.containsKey(s)) {
                continue;
            }
            List<Map<String, Object>> list = new ArrayList<>();
            for (Map<String, Object> row : rows) {
                if (row.get(config.sequenceColumn()) != null
                        && compareValues(row.get(config.sequenceColumn()), s) == 0) {
                    list.add(withCarriedValues(row, s, carried));
                }
            }
            stagedRows.put(s, list);
        }
        if (point != null) {
            rollBack(point, introduced, carrying);
        }
        // Step 6: every batch in business order
        List<BatchResult> results = new ArrayList<>();
        for (Object s : batches) {
            boolean isReproduced = reproduced.containsKey(s);
            List<StagedRow> staged;
            if (isReproduced) {
                staged = reproduced.get(s);
            } else {
                staged = new ArrayList<>();
                for (Map<String, Object> row : stagedRows.get(s)) {
                    staged.add(new StagedRow(row, null, null));
                }
            }
            LedgerEntry before = appliedBefore.get(s);
            String recorded = isReproduced && before != null ? before.deletionTime() : null;
            results.add(applyBatch(s, staged, withCarried(sourceColumns, carried, s), isReproduced, introduced,
                    recorded, runId, events));
        }
        recordFingerprints(withApplied(now, all, batches), batches, reproduced.keySet());
        runLog.add(new LoggedRun(runId, operation.label(), results.size(), late, canonical(point)));
        return new RunOutcome(results, late, point, events);
    }

    /**
     * A column the source no longer has that a replay stages again: from {@code from} (its introduction; null: the
     * first batch) through {@code through} (the last batch applied while the source had it).
     */
    private record Carried(String column, Object from, Object through) {
        boolean covers(Object s) {
            return (from == null || compareValues(from, s) <= 0) && compareValues(s, through) <= 0;
        }
    }

    /** The columns a run whose first batch is {@code first} carries: gone, last applied with at or after it. */
    private List<Carried> carried(Object first, List<String> sourceColumns) {
        List<Carried> out = new ArrayList<>();
        for (String c : historyColumns) {
            RegisteredColumn known = registry.get(c);
            if (sourceColumns.contains(c) || known == null || known.droppedAfter() == null
                    || compareValues(known.droppedAfter(), first) < 0 || (known.introducedAt() != null
                    && compareValues(known.introducedAt(), known.droppedAfter()) > 0)) {
                continue;
            }
            out.add(new Carried(c, known.introducedAt(), known.droppedAfter()));
        }
        return out;
    }

    /**
     * The source's columns with those of {@code carried} that batch {@code s} stages (all of them when {@code s} is
     * null: the run's view), each placed after the column the history has before it.
     */
    private List<String> withCarried(List<String> sourceColumns, List<Carried> carried, Object s) {
        List<String> out = new ArrayList<>(sourceColumns);
        for (Carried c : carried) {
            if (s != null && compareValues(c.through(), s) < 0) {
                continue;
            }
            int at = 0;
            for (int j = historyColumns.indexOf(c.column()) - 1; j >= 0 && at == 0; j--) {
                int k = out.indexOf(historyColumns.get(j));
                if (k >= 0) {
                    at = k + 1;
                }
            }
            out.add(at, c.column());
        }
        return out;
    }

    /**
     * A source row of batch {@code s} with each carried column's value in its range: that of the key's latest version
     * opened at or before {@code s} (the version the key had right after it), else NULL.
     */
    private Map<String, Object> withCarriedValues(Map<String, Object> row, Object s, List<Carried> carried) {
        if (carried.isEmpty()) {
            return row;
        }
        Map<String, Object> out = new LinkedHashMap<>(row);
        List<Object> key = keyOf(row);
        Version latest = null;
        if (!key.contains(null)) {
            for (Version v : versions) {
                if (v.key().equals(key) && compareValues(v.openedSeq(), s) <= 0 && (latest == null
                        || compareValues(v.openedSeq(), latest.openedSeq()) > 0
                        || (compareValues(v.openedSeq(), latest.openedSeq()) == 0
                        && v.validFrom().isAfter(latest.validFrom())))) {
                    latest = v;
                }
            }
        }
        for (Carried c : carried) {
            out.put(c.column(), c.covers(s) && latest != null ? latest.values().get(c.column()) : null);
        }
        return out;
    }

    /** The fingerprint of each batch in the source rows (projected on the source's columns). */
    private Map<Object, Fingerprint> fingerprints(List<Map<String, Object>> rows, List<String> sourceColumns) {
        List<String> columns = new ArrayList<>(sourceColumns);
        columns.sort(Comparator.naturalOrder());
        TreeMap<Object, List<String>> texts = new TreeMap<>(SEQUENCE_ORDER);
        for (Map<String, Object> row : rows) {
            Object s = row.get(config.sequenceColumn());
            if (s != null) {
                StringBuilder text = new StringBuilder();
                for (String c : columns) {
                    Object v = row.get(c);
                    String t = v == null ? null : canonical(v);
                    text.append(t == null ? "N" : "V" + t.length() + ":" + t);
                }
                texts.computeIfAbsent(s, x -> new ArrayList<>()).add(text.toString());
            }
        }
        Map<Object, Fingerprint> out = new TreeMap<>(SEQUENCE_ORDER);
        List<String> signature = columns.stream().map(c -> widenings.containsKey(c) ? c + "#" + widenings.get(c) : c)
                .toList();
        texts.forEach((s, list) -> out.put(s, new Fingerprint(signature,
                List.copyOf(new TreeSet<>(list)), list.size())));
        return out;
    }

    /**
     * The ledger's fingerprints after a run: a batch applied from the source gets its fingerprint now, a reproduced
     * one none; an entry not applied again without one, or with one over other columns, gets the source's now.
     */
    /**
     * The applied batches whose rows in the source now differ from those they were applied with and that no run has
     * compared since (restatements the lookback and the sweep have not reached yet): until a run finds them, the
     * history is that of the batches as they were applied, not a clean run over the source as it is.
     */
    public Set<Object> restatementsNotFoundYet(List<String> sourceColumns, List<Map<String, Object>> sourceRows) {
        List<Map<String, Object>> rows = sourceRows.stream().map(r -> project(r, sourceColumns)).toList();
        Map<Object, Fingerprint> all = fingerprints(rows, sourceColumns);
        Set<Object> out = new TreeSet<>(SEQUENCE_ORDER);
        for (Object s : ledger.keySet()) {
            Fingerprint recorded = fingerprints.get(s);
            // over other columns: the next run fingerprints it again; until then whether it changed is not known
            if (recorded != null && all.get(s) != null && (!recorded.comparable(all.get(s))
                    || !recorded.sameContent(all.get(s)))) {
                out.add(s);
            }
        }
        return out;
    }

    /** The batches (sequences, as the ledger keys them) the source holds. */
    public Set<Object> batchesIn(List<String> sourceColumns, List<Map<String, Object>> sourceRows) {
        List<Map<String, Object>> rows = sourceRows.stream().map(r -> project(r, sourceColumns)).toList();
        Set<Object> out = new TreeSet<>(SEQUENCE_ORDER);
        out.addAll(fingerprints(rows, sourceColumns).keySet());
        return out;
    }

    /** The fingerprints compared, and those of the batches a run applies (taken from the rows it applies). */
    private static Map<Object, Fingerprint> withApplied(Map<Object, Fingerprint> compared,
                                                        Map<Object, Fingerprint> all, Collection<Object> batches) {
        Map<Object, Fingerprint> out = new TreeMap<>(SEQUENCE_ORDER);
        out.putAll(compared);
        for (Object b : batches) {
            if (all.get(b) != null) {
                out.put(b, all.get(b));
            }
        }
        return out;
    }

    /**
     * The applied batches a run compares with the source: the {@code restatement_lookback} newest the source holds,
     * those after the first late batch (a replay's), and {@code restatement_sweep} older ones after the batch the last
     * sweep stopped at, starting over at the oldest. Moves the sweep on.
     */
    private TreeSet<Object> compared(TreeSet<Object> applied, TreeSet<Object> inSource) {
        List<Object> held = new ArrayList<>();
        for (Object s : applied) {
            if (inSource.contains(s)) {
                held.add(s);
            }
        }
        TreeSet<Object> out = new TreeSet<>(SEQUENCE_ORDER);
        int newest = Math.max(0, held.size() - config.restatementLookback());
        out.addAll(held.subList(newest, held.size()));
        TreeSet<Object> fresh = new TreeSet<>(inSource);
        fresh.removeAll(applied);
        if (!fresh.isEmpty() && !applied.isEmpty() && compareValues(fresh.first(), applied.last()) < 0) {
            for (Object s : held) {
                if (compareValues(s, fresh.first()) > 0) {
                    out.add(s);
                }
            }
        }
        List<Object> older = new ArrayList<>(held.subList(0, newest));
        older.removeAll(out);
        int sweep = Math.min(config.restatementSweep(), older.size());
        if (sweep > 0) {
            List<Object> order = new ArrayList<>();
            for (Object s : older) {
                if (sweptThrough == null || compareValues(s, sweptThrough) > 0) {
                    order.add(s);
                }
            }
            for (Object s : older) {
                if (sweptThrough != null && compareValues(s, sweptThrough) <= 0) {
                    order.add(s);
                }
            }
            out.addAll(order.subList(0, sweep));
            sweptThrough = order.get(sweep - 1);
        }
        return out;
    }

    private void recordFingerprints(Map<Object, Fingerprint> now, Collection<Object> batches,
                                    Collection<Object> reproduced) {
        for (Object s : batches) {
            if (reproduced.contains(s) || now.get(s) == null) {
                fingerprints.remove(s);
            } else {
                fingerprints.put(s, now.get(s));
            }
        }
        for (LedgerEntry e : ledger.values()) {
            Object s = e.sequence();
            if (!batches.contains(s) && !e.reproduced() && now.get(s) != null
                    && !now.get(s).comparable(fingerprints.get(s))) {
                fingerprints.put(s, now.get(s));
            }
        }
        fingerprints.keySet().retainAll(ledger.keySet());
    }

    /**
     * Creates or evolves the history's columns and the column registry (docs/semantics.md "Schema evolution");
     * returns the introduction batch of each source column added after the history was created.
     */
    private Map<String, Object> prepare(Object first, List<String> sourceColumns, String runId,
                                        List<SnapshotEvent> events) {
        List<String> added = new ArrayList<>();
        List<String> missing = new ArrayList<>();
        boolean created = historyColumns == null;
        if (created) {
            historyColumns = new ArrayList<>(sourceColumns);
        } else {
            for (String c : sourceColumns) {
                if (!historyColumns.contains(c)) {
                    historyColumns.add(c);
                    added.add(c);
                }
            }
        }
        Map<String, Object> introduced = new LinkedHashMap<>();
        for (String c : sourceColumns) {
            RegisteredColumn known = registry.get(c);
            if (known == null) {
                registry.put(c, new RegisteredColumn(c, created ? null : first, true, null));
                if (!created) {
                    introduced.put(c, first);
                    if (!added.contains(c)) {
                        added.add(c);
                    }
                }
            } else {
                if (!known.inSource()) {
                    // a column that comes back is compared again from the batch it returns with, not filled
                    registry.put(c, new RegisteredColumn(c, known.introducedAt(), true, null));
                    added.add(c);
                }
                if (known.introducedAt() != null) {
                    introduced.put(c, known.introducedAt());
                }
            }
        }
        for (RegisteredColumn known : List.copyOf(registry.values())) {
            if (known.inSource() && !sourceColumns.contains(known.column())) {
                registry.put(known.column(), new RegisteredColumn(known.column(), known.introducedAt(), false,
                        ledger.isEmpty() ? null : ledger.lastKey()));
                missing.add(known.column());
            }
        }
        if (!added.isEmpty() || !missing.isEmpty()) {
            events.add(new SnapshotEvent.SchemaChange("", runId, added, missing));
        }
        return introduced;
    }

    /** Rows without a sequence: each record is logged as often as the source holds it, never again. */
    private void logNullSequences(List<Map<String, Object>> rows, List<String> sourceColumns, String runId,
                                  List<SnapshotEvent> events) {
        Map<String, Integer> inSource = new LinkedHashMap<>();
        Map<String, Map<String, Object>> records = new HashMap<>();
        for (Map<String, Object> row : rows) {
            if (row.get(config.sequenceColumn()) == null) {
                String id = recordIdentity(row, sourceColumns);
                inSource.merge(id, 1, Integer::sum);
                records.put(id, row);
            }
        }
        Map<String, Integer> logged = new HashMap<>();
        for (LoggedError e : errors) {
            if (e.reason().equals(NULL_SEQUENCE)) {
                logged.merge(recordIdentity(e.record(), new ArrayList<>(e.record().keySet())), 1, Integer::sum);
            }
        }
        long n = 0;
        for (Map.Entry<String, Integer> e : inSource.entrySet()) {
            for (int i = logged.getOrDefault(e.getKey(), 0); i < e.getValue(); i++) {
                errors.add(new LoggedError(null, NULL_SEQUENCE, project(records.get(e.getKey()), sourceColumns),
                        runId));
                n++;
            }
        }
        if (n > 0) {
            events.add(new SnapshotEvent.RowsRejected("", runId, null, Map.of(NULL_SEQUENCE, n)));
        }
    }

    /** A record's identity as the error log compares records: its columns in order with their values. */
    private static String recordIdentity(Map<String, Object> row, List<String> columns) {
        StringBuilder s = new StringBuilder();
        for (String c : columns) {
            s.append(c).append('=').append(valueText(row.get(c))).append('\u0001');
        }
        return s.toString();
    }

    /** A row of a batch as the engine stages it; a reproduced row carries its archived reason and delete flag. */
    private record StagedRow(Map<String, Object> values, String presetReason, Boolean presetDelete) {
    }

    /**
     * A batch that aged out of the source, reproduced from the history (the versions it left live, for a full batch
     * with a recorded deletion time; else the versions it opened) and the archive (whose rows replace the key's
     * version). Columns introduced after the batch are NULL.
     */
    private List<StagedRow> reproduce(Object s, LedgerEntry entry, Map<String, Object> introduced,
                                      List<String> sourceColumns) {
        boolean fullPicture = config.hardDeletes().fullBatches() && entry != null && entry.deletionTime() != null;
        Set<String> notYet = new HashSet<>();
        introduced.forEach((c, at) -> {
            if (compareValues(at, s) > 0) {
                notYet.add(c);
            }
        });
        List<ArchivedRow> archived = archive.stream().filter(a -> compareValues(a.sequence(), s) == 0).toList();
        Set<List<Object>> archivedKeys = new HashSet<>();
        archived.forEach(a -> archivedKeys.add(keyOf(a.values())));
        List<StagedRow> out = new ArrayList<>();
        for (Version v : versions) {
            boolean live = fullPicture
                    ? compareValues(v.openedSeq(), s) <= 0
                            && (v.closedSeq() == null || compareValues(v.closedSeq(), s) > 0)
                    : compareValues(v.openedSeq(), s) == 0;
            if (!live || v.deletionRecord() || archivedKeys.contains(v.key())) {
                continue;
            }
            Map<String, Object> row = new LinkedHashMap<>();
            for (String c : sourceColumns) {
                row.put(c, c.equals(config.sequenceColumn()) ? s : config.sequenceParts().containsKey(c)
                        ? config.sequenceParts().get(c).apply(s) : notYet.contains(c) ? null : v.values().get(c));
            }
            out.add(new StagedRow(row, null, false));
        }
        for (ArchivedRow a : archived) {
            Map<String, Object> row = new LinkedHashMap<>();
            for (String c : sourceColumns) {
                row.put(c, notYet.contains(c) ? null : a.values().get(c));
            }
            out.add(new StagedRow(row, a.reason(), a.delete()));
        }
        return out;
    }

    /**
     * Rolls back to {@code point} (docs/semantics.md "Rollback"): versions opened at or after it go, versions closed
     * at or after it reopen, columns introduced at or after it are NULL again, and the ledger entries, error-log
     * rows and archive rows of the undone batches go.
     */
    private void rollBack(Object point, Map<String, Object> introduced, List<String> sourceColumns) {
        versions.removeIf(v -> compareValues(v.openedSeq(), point) >= 0);
        for (Version v : versions) {
            if (v.closedSeq() != null && compareValues(v.closedSeq(), point) >= 0) {
                v.validTo = null;
                v.changeType = INSERT;
                v.changedAttributes = null;
                v.closedSeq = null;
            }
        }
        introduced.forEach((c, at) -> {
            if (compareValues(at, point) >= 0) {
                versions.forEach(v -> v.values.put(c, null));
            }
        });
        archive.removeIf(a -> compareValues(a.sequence(), point) >= 0);
        restoreOverwritten(sourceColumns);
        Set<Object> undone = new TreeSet<>(SEQUENCE_ORDER);
        undone.addAll(ledger.tailMap(point, true).keySet());
        ledger.keySet().removeAll(undone);
        errors.removeIf(e -> e.sequence() != null && undone.contains(e.sequence()));
    }

    /**
     * {@code untracked_columns: overwrite}, after a roll back: each live current version takes, in its overwritten
     * columns, the values of its last archived row from its opening on (the row that opened it or a later one that
     * changed no tracked column; not a row set aside, a delete or a regression, which changes a tracked column).
     */
    private void restoreOverwritten(List<String> sourceColumns) {
        List<String> overwritten = config.overwrittenColumns(sourceColumns);
        if (overwritten.isEmpty()) {
            return;
        }
        for (Version v : versions) {
            if (!v.current() || v.deletionRecord()) {
                continue;
            }
            ArchivedRow last = null;
            for (ArchivedRow a : archive) {
                if (keyOf(a.values()).equals(v.key()) && compareValues(a.sequence(), v.openedSeq()) >= 0
                        && a.reason() == null && !a.delete()
                        && config.checkCols().stream().allMatch(c -> Objects.equals(a.values().get(c),
                        v.values().get(c)))
                        && (last == null || compareValues(a.sequence(), last.sequence()) > 0)) {
                    last = a;
                }
            }
            if (last != null) {
                ArchivedRow from = last;
                overwritten.forEach(c -> v.values.put(c, from.values().get(c)));
            }
        }
    }

    // ------------------------------------------------------------------ one batch

    /** What the classification decides for one row that is not set aside in the stage. */
    private enum Action { INSERT, CHANGE, RETURN, DELETE, NOOP }

    /** A row of the batch with everything the engine's classification derives for it. */
    private static final class Classified {
        final Map<String, Object> row;
        final List<Object> key;
        String reason;
        boolean delete;
        Action action;
        boolean archived;
        LocalDateTime validFrom;
        List<String> changed;
        /** The row as applied: with ignore_null_updates its NULLs filled from the current version; else the row. */
        Map<String, Object> applied;

        Classified(Map<String, Object> row, List<Object> key) {
            this.row = row;
            this.key = key;
            this.applied = row;
        }
    }

    /** Applies batch {@code s} (docs/semantics.md "Applying a batch") and records it. */
    private BatchResult applyBatch(Object s, List<StagedRow> staged, List<String> sourceColumns, boolean reproduced,
                                   Map<String, Object> introduced, String recordedDeletionTime, String runId,
                                   List<SnapshotEvent> events) {
        Set<String> untracked = new HashSet<>();
        List<String> introducedNow = new ArrayList<>();
        introduced.forEach((c, at) -> {
            if (compareValues(at, s) >= 0) {
                untracked.add(c);
            }
            if (compareValues(at, s) == 0) {
                introducedNow.add(c);
            }
        });
        List<String> tracked = config.trackedColumns(sourceColumns).stream().filter(c -> !untracked.contains(c))
                .toList();
        // the stage: rejection reasons in priority order; exact copies applied once
        List<Classified> rows = new ArrayList<>();
        if (reproduced) {
            for (StagedRow r : staged) {
                Classified c = new Classified(r.values(), keyOf(r.values()));
                c.reason = r.presetReason();
                c.delete = Boolean.TRUE.equals(r.presetDelete());
                rows.add(c);
            }
        } else {
            Map<List<Object>, List<Classified>> byKey = new LinkedHashMap<>();
            for (StagedRow r : staged) {
                Classified c = new Classified(r.values(), keyOf(r.values()));
                c.delete = config.deleteWhen() != null && config.deleteWhen().test(r.values());
                rows.add(c);
                if (c.key.contains(null)) {
                    c.reason = NULL_KEY;
                } else {
                    byKey.computeIfAbsent(c.key, k -> new ArrayList<>()).add(c);
                }
            }
            for (List<Classified> group : byKey.values()) {
                Set<String> distinct = new HashSet<>();
                group.forEach(c -> distinct.add(recordIdentity(c.row, sourceColumns)));
                if (distinct.size() > 1) {
                    group.forEach(c -> c.reason = DUPLICATE_KEY);
                } else {
                    for (int i = 1; i < group.size(); i++) {
                        group.get(i).reason = DUPLICATE_COPY;
                    }
                    if (updatedAt(group.get(0).row) == null) {
                        group.get(0).reason = NULL_UPDATED_AT;
                    }
                }
            }
        }
        Set<List<Object>> keysInBatch = new HashSet<>();
        rows.forEach(c -> {
            if (!c.key.contains(null)) {
                keysInBatch.add(c.key);
            }
        });
        boolean full = config.hardDeletes().fullBatches();
        LocalDateTime deletionTime = null;
        if (full) {
            if (recordedDeletionTime != null) {
                deletionTime = LocalDateTime.parse(recordedDeletionTime);
            } else if (config.temporalSequence()) {
                deletionTime = s instanceof LocalDate d ? d.atStartOfDay() : (LocalDateTime) s;
            } else {
                for (Classified c : rows) {
                    LocalDateTime u = updatedAt(c.row);
                    if (u != null && (deletionTime == null || u.isAfter(deletionTime))) {
                        deletionTime = u;
                    }
                }
            }
        }

        // the classification, against the history as it is before the batch
        for (Classified c : rows) {
            if (c.reason != null) {
                c.archived = !c.reason.equals(DUPLICATE_COPY);
                continue;
            }
            Version cur = currentVersion(c.key);
            boolean has = cur != null;
            boolean curDeleted = has && cur.deletionRecord();
            if (config.ignoreNullUpdates() && has && !curDeleted && !c.delete) {
                // a NULL is "not supplied": the row stands for the current version's value (the archive and the
                // error log keep the row as it came)
                Map<String, Object> filled = new LinkedHashMap<>(c.row);
                for (String col : sourceColumns) {
                    if (!config.isMeta(col) && !untracked.contains(col) && filled.get(col) == null) {
                        filled.put(col, cur.values().get(col));
                    }
                }
                c.applied = filled;
            }
            LocalDateTime u = updatedAt(c.row);
            boolean changed = has && (config.strategy() == Strategy.TIMESTAMP ? u.isAfter(cur.updatedAt())
                    : !differing(tracked, cur.values(), c.applied).isEmpty());
            boolean regression = has && !curDeleted && (changed || c.delete) && u.isBefore(cur.validFrom());
            if (regression) {
                c.reason = UPDATED_AT_REGRESSION;
                c.archived = true;
                continue;
            }
            if (c.delete) {
                c.action = has && !curDeleted ? Action.DELETE : Action.NOOP;
            } else if (!has) {
                c.action = Action.INSERT;
            } else if (curDeleted) {
                c.action = Action.RETURN;
            } else if (changed) {
                c.action = Action.CHANGE;
            } else {
                c.action = Action.NOOP;
            }
            if (c.delete) {
                c.archived = true;
            } else if (c.action == Action.NOOP) {
                c.archived = !full || !same(cur.values(), c.row, sourceColumns, untracked);
            } else if (c.action == Action.CHANGE && !c.applied.equals(c.row)) {
                // ignore_null_updates: the version holds the values its NULLs stood for then; a late batch before
                // it may change them, so a reproduction needs the row as it came
                c.archived = true;
            }
            if (config.overwriteUntracked()) {
                c.archived = true; // a version's values are those of its last row: a roll back restores them from here
            }
            if (!has) {
                LocalDateTime end = lastEnd(c.key);
                c.validFrom = end != null && end.isAfter(u) ? end : u;
            } else if (curDeleted) {
                c.validFrom = cur.validFrom().isAfter(u) ? cur.validFrom() : u;
            } else {
                c.validFrom = u;
            }
            c.changed = has ? differing(tracked, cur.values(), c.applied) : null;
        }

        // a column introduced by this batch: the current versions of the keys in it take its value in place
        for (String column : introducedNow) {
            for (Classified c : rows) {
                if (c.reason == null) {
                    Version cur = currentVersion(c.key);
                    if (cur != null) {
                        cur.values.put(column, c.row.get(column));
                    }
                }
            }
        }

        // set aside, archive
        Map<String, Long> reasons = new TreeMap<>();
        long copies = 0;
        for (Classified c : rows) {
            if (DUPLICATE_COPY.equals(c.reason)) {
                copies++;
            } else if (c.reason != null) {
                reasons.merge(c.reason, 1L, Long::sum);
                errors.add(new LoggedError(s, c.reason, project(c.row, sourceColumns), runId));
            }
            if (c.archived) {
                archive.add(new ArchivedRow(s, project(c.row, sourceColumns), c.delete,
                        UPDATED_AT_REGRESSION.equals(c.reason) ? null : c.reason));
            }
        }
        long rejected = reasons.values().stream().mapToLong(Long::longValue).sum();

        long inserted = 0;
        long updated = 0;
        long deleted = 0;
        // keys absent from a full batch are deleted at the deletion time, never before they opened
        if (full && deletionTime != null) {
            for (Version v : List.copyOf(versions)) {
                if (v.current() && !v.deletionRecord() && !keysInBatch.contains(v.key())) {
                    close(v, later(deletionTime, v.validFrom()), DELETE, null, s);
                    deleted++;
                }
            }
        }
        // the merge: close what changes, returns or is deleted; open new versions; under untracked_columns:
        // overwrite a noop writes the untracked columns into the current version
        List<String> overwritten = config.overwrittenColumns(sourceColumns).stream()
                .filter(c -> !untracked.contains(c)).toList();
        for (Classified c : rows) {
            if (c.action == Action.NOOP && !c.delete && !overwritten.isEmpty()) {
                Version cur = currentVersion(c.key);
                overwritten.forEach(col -> cur.values.put(col, c.row.get(col)));
            }
            if (c.action == null || c.action == Action.NOOP) {
                continue;
            }
            Version cur = currentVersion(c.key);
            switch (c.action) {
                case DELETE -> {
                    close(cur, updatedAt(c.row), DELETE, null, s);
                    deleted++;
                }
                case CHANGE, RETURN -> {
                    close(cur, c.validFrom, UPDATE, c.changed, s);
                    updated++;
                }
                default -> { }
            }
            if (c.action != Action.DELETE) {
                versions.add(new Version(c.key, project(c.applied, sourceColumns), updatedAt(c.row), c.validFrom,
                        false, s));
                inserted++;
            }
        }
        // hard_deletes new_record: a deletion record for every version this batch deleted
        if (config.hardDeletes() == HardDeletes.NEW_RECORD) {
            for (Version v : List.copyOf(versions)) {
                if (v.closedSeq() != null && compareValues(v.closedSeq(), s) == 0 && DELETE.equals(v.changeType())
                        && !v.deletionRecord()) {
                    versions.add(new Version(v.key(), v.values(), v.validTo(), v.validTo(), true, s));
                    inserted++;
                }
            }
        }
        BatchResult result = new BatchResult(s, staged.size(), inserted, updated, deleted, rejected, reproduced,
                copies);
        ledger.put(s, new LedgerEntry(s, runId, staged.size(), copies, inserted, updated, deleted, rejected,
                full && deletionTime != null ? deletionTime.toString() : null, reproduced));
        long conflicting = reasons.getOrDefault(DUPLICATE_KEY, 0L);
        if (conflicting > 0 || copies > 0) {
            events.add(new SnapshotEvent.DuplicateRecords("", runId, s, conflicting, copies));
        }
        if (rejected > 0) {
            events.add(new SnapshotEvent.RowsRejected("", runId, s, reasons));
        }
        events.add(new SnapshotEvent.BatchApplied("", runId, result));
        return result;
    }

    private static void close(Version v, LocalDateTime at, String changeType, List<String> changed, Object s) {
        v.validTo = at;
        v.changeType = changeType;
        v.changedAttributes = changed;
        v.closedSeq = s;
    }

    /** Tracked columns whose values differ (IS DISTINCT FROM), in source order. */
    private static List<String> differing(List<String> tracked, Map<String, Object> before, Map<String, Object> after) {
        List<String> changed = new ArrayList<>();
        for (String c : tracked) {
            if (!Objects.equals(before.get(c), after.get(c))) {
                changed.add(c);
            }
        }
        return changed;
    }

    /** The row repeats the version in every source column but the key, the sequence and untracked new columns. */
    private boolean same(Map<String, Object> version, Map<String, Object> row, List<String> sourceColumns,
                         Set<String> untracked) {
        for (String c : sourceColumns) {
            if (c.equals(config.sequenceColumn()) || config.sequenceParts().containsKey(c)
                    || config.keyColumns().contains(c) || untracked.contains(c)) {
                continue;
            }
            if (!Objects.equals(version.get(c), row.get(c))) {
                return false;
            }
        }
        return true;
    }

    private Version currentVersion(List<Object> key) {
        Version found = null;
        for (Version v : versions) {
            if (v.current() && v.key().equals(key)) {
                if (found != null) {
                    throw new IllegalStateException("model bug: two current versions of " + key);
                }
                found = v;
            }
        }
        return found;
    }

    /** The end of the key's last version (its greatest valid_to), or null. */
    private LocalDateTime lastEnd(List<Object> key) {
        LocalDateTime end = null;
        for (Version v : versions) {
            if (v.key().equals(key) && v.validTo() != null && (end == null || v.validTo().isAfter(end))) {
                end = v.validTo();
            }
        }
        return end;
    }

    private Map<String, Object> project(Map<String, Object> row, List<String> columns) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (String c : columns) {
            out.put(c, normalise(row.get(c)));
        }
        return out;
    }

    private List<Object> keyOf(Map<String, Object> row) {
        List<Object> key = new ArrayList<>();
        for (String c : config.keyColumns()) {
            key.add(normalise(row.get(c)));
        }
        return key;
    }

    private LocalDateTime updatedAt(Map<String, Object> row) {
        return (LocalDateTime) row.get(config.updatedAtColumn());
    }

    private static LocalDateTime later(LocalDateTime a, LocalDateTime b) {
        return b != null && b.isAfter(a) ? b : a;
    }

    // ------------------------------------------------------------------ values

    /** Integers as Long, decimals without trailing zeros; everything else as is. */
    public static Object normalise(Object v) {
        if (v instanceof Integer || v instanceof Short || v instanceof Byte) {
            return ((Number) v).longValue();
        }
        if (v instanceof BigDecimal b) {
            return b.signum() == 0 ? BigDecimal.ZERO : b.stripTrailingZeros();
        }
        return v;
    }

    /** Compares two non-null values of one type: strings by code point, everything else by its natural order. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    public static int compareValues(Object a, Object b) {
        Object x = normalise(Objects.requireNonNull(a, "sequence"));
        Object y = normalise(Objects.requireNonNull(b, "sequence"));
        if (x instanceof String s && y instanceof String t) {
            int i = 0;
            int j = 0;
            while (i < s.length() && j < t.length()) {
                int p = s.codePointAt(i);
                int q = t.codePointAt(j);
                if (p != q) {
                    return Integer.compare(p, q);
                }
                i += Character.charCount(p);
                j += Character.charCount(q);
            }
            return Integer.compare(s.length() - i, t.length() - j);
        }
        return ((Comparable) x).compareTo(y);
    }

    /**
     * {@code dbt_scd_id} by its documented formula (docs/semantics.md): the MD5, as lower-case hex, of the UTF-8 text
     * that joins with {@code |} each key part's text (NULL as empty; for a composite key each part with {@code \}
     * written {@code \\} and then {@code |} written {@code \|}), the {@code updated_at} text (NULL as empty) and the
     * text of the sequence that opened the version, followed by {@code |deleted} for a deletion record.
     *
     * @param keyTexts the key parts as the database's cast to text writes them, null for NULL
     */
    public static String scdId(List<String> keyTexts, String updatedAtText, String sequenceText,
                               boolean deletionRecord) {
        StringBuilder text = new StringBuilder();
        for (String k : keyTexts) {
            String part = k == null ? "" : k;
            if (keyTexts.size() > 1) {
                part = part.replace("\\", "\\\\").replace("|", "\\|");
            }
            text.append(part).append('|');
        }
        text.append(updatedAtText == null ? "" : updatedAtText).append('|').append(sequenceText);
        if (deletionRecord) {
            text.append("|deleted");
        }
        try {
            byte[] md5 = java.security.MessageDigest.getInstance("MD5")
                    .digest(text.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8));
            return java.util.HexFormat.of().formatHex(md5);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The canonical text of a sequence or time value, as the ledger writes it (ISO-8601, plain digits). */
    public static String canonical(Object value) {
        Object v = normalise(value);
        if (v == null) {
            return null;
        }
        return v instanceof BigDecimal b ? b.toPlainString() : v.toString();
    }

    /** A value as text for identities and reports: canonical, NULL as {@code null}. */
    static String valueText(Object value) {
        return value == null ? "null" : canonical(value);
    }
}
