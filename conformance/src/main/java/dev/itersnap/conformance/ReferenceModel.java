package dev.itersnap.conformance;

import dev.itersnap.core.HardDeletes;
import dev.itersnap.core.Strategy;

import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The oracle of the conformance suite: SPEC.md §3 and docs/semantics.md ("Applying a batch") implemented in memory,
 * one batch at a time, in business order. Clarity beats speed here; every rule is a few lines that can be read
 * against the documents.
 *
 * <p>A source row is a map from column name (as in {@link Config#columns()}) to value: keys are Integer or String,
 * {@code updated_at} is a {@link LocalDateTime}, the sequence a Long, {@link LocalDate} or {@link LocalDateTime}.
 * The model covers what the scenario generator produces: no schema evolution, a TIMESTAMP {@code updated_at}.
 *
 * <p>Not thread-safe; one instance models one history table.
 */
public final class ReferenceModel {
    /** Rejection reasons, as written to the error log, in priority order. */
    public static final String NULL_SEQUENCE = "null_sequence";
    public static final String NULL_KEY = "null_key";
    public static final String DUPLICATE_KEY = "duplicate_key";
    public static final String NULL_UPDATED_AT = "null_updated_at";
    public static final String UPDATED_AT_REGRESSION = "updated_at_regression";

    public static final String INSERT = "insert";
    public static final String UPDATE = "update";
    public static final String DELETE = "delete";

    /**
     * What the model needs of the settings and the source.
     *
     * @param columns          every source column, in the source's order
     * @param checkCols        tracked columns under {@code check}; null means {@code all}
     * @param deleteWhen       the {@code delete_when} predicate over a source row, or null
     * @param temporalSequence true when {@code sequence_by} is a DATE or TIMESTAMP (deletion time = the sequence)
     */
    public record Config(List<String> columns, List<String> keyColumns, String updatedAtColumn, String sequenceColumn,
                         Strategy strategy, List<String> checkCols, HardDeletes hardDeletes,
                         Predicate<Map<String, Object>> deleteWhen, boolean temporalSequence) {
        public Config {
            columns = List.copyOf(columns);
            keyColumns = List.copyOf(keyColumns);
            checkCols = checkCols == null ? null : List.copyOf(checkCols);
        }

        /**
         * Tracked columns in source order: {@code check_cols} under check ({@code all} = every column but the key,
         * updated_at and sequence_by), every column but those under timestamp.
         */
        public List<String> trackedColumns() {
            List<String> tracked = new ArrayList<>();
            for (String c : columns) {
                boolean meta = keyColumns.contains(c) || c.equals(updatedAtColumn) || c.equals(sequenceColumn);
                boolean listed = strategy == Strategy.TIMESTAMP || checkCols == null || checkCols.contains(c);
                if (!meta && listed) {
                    tracked.add(c);
                }
            }
            return tracked;
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

    /** One row of the history table. Mutable only by the model (closing a version). */
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
        /** Every source column of the version (for a deletion record: those of the version it closed). */
        public Map<String, Object> values() { return values; }
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
    private final List<String> tracked;
    private final List<Version> versions = new ArrayList<>();
    private final List<Rejection> rejections = new ArrayList<>();
    private Comparable<Object> lastSequence;

    public ReferenceModel(Config config) {
        this.config = Objects.requireNonNull(config);
        this.tracked = config.trackedColumns();
    }

    /** The history after applying every batch once in business order, NULL-sequence rows set aside. */
    public static ReferenceModel ofBatches(Config config, Collection<Batch> batches,
                                           List<Map<String, Object>> nullSequenceRows) {
        ReferenceModel model = new ReferenceModel(config);
        model.rejectNullSequenceRows(nullSequenceRows);
        List<Batch> ordered = new ArrayList<>(batches);
        ordered.sort(Comparator.comparing(b -> comparable(b.sequence())));
        ordered.forEach(model::apply);
        return model;
    }

    /** Rows with a NULL sequence belong to no batch: they are set aside (semantics: once). */
    public void rejectNullSequenceRows(List<Map<String, Object>> rows) {
        for (Map<String, Object> row : rows) {
            rejections.add(new Rejection(null, NULL_SEQUENCE, row));
        }
    }

    /** Every version, in the order the model created them. */
    public List<Version> versions() {
        return List.copyOf(versions);
    }

    /** Every row set aside, in the order the model met them. */
    public List<Rejection> rejections() {
        return List.copyOf(rejections);
    }

    /** Applies one batch (SPEC §3). Batches must come in ascending sequence order, each once. */
    public void apply(Batch batch) {
        Comparable<Object> seq = comparable(batch.sequence());
        if (lastSequence != null && seq.compareTo(lastSequence) <= 0) {
            throw new IllegalArgumentException("batch " + batch.sequence() + " is not after " + lastSequence);
        }
        lastSequence = seq;
        Object sequence = batch.sequence();

        // Rejections in priority order: null_key, duplicate_key (every row of a key with differing rows),
        // null_updated_at. Exact copies of a row count once (a file loaded twice changes nothing).
        Map<List<Object>, List<Map<String, Object>>> rowsByKey = new LinkedHashMap<>();
        for (Map<String, Object> row : batch.rows()) {
            List<Object> key = keyOf(row);
            if (key.contains(null)) {
                rejections.add(new Rejection(sequence, NULL_KEY, row));
            } else {
                rowsByKey.computeIfAbsent(key, k -> new ArrayList<>()).add(row);
            }
        }
        List<Map<String, Object>> accepted = new ArrayList<>();
        for (List<Map<String, Object>> rows : rowsByKey.values()) {
            if (new java.util.HashSet<>(rows).size() > 1) {
                rows.forEach(r -> rejections.add(new Rejection(sequence, DUPLICATE_KEY, r)));
            } else if (updatedAt(rows.get(0)) == null) {
                rejections.add(new Rejection(sequence, NULL_UPDATED_AT, rows.get(0)));
            } else {
                accepted.add(rows.get(0));
            }
        }
        // Keys whose rows were set aside are still "in the batch": untouched, not deleted by absence.
        Set<List<Object>> keysInBatch = rowsByKey.keySet();
        LocalDateTime deletionTime = deletionTime(batch);
        // Keys current before the batch, for deletion by absence; a key applied below is in the batch anyway.
        List<Version> currentBefore = versions.stream().filter(v -> v.current() && !v.deletionRecord()).toList();

        for (Map<String, Object> row : accepted) {
            if (config.deleteWhen() != null && config.deleteWhen().test(row)) {
                applyExplicitDelete(sequence, row);
            } else {
                applyRow(sequence, row);
            }
        }

        if (config.hardDeletes().fullBatches() && deletionTime != null) {
            for (Version v : currentBefore) {
                if (!keysInBatch.contains(v.key())) {
                    closeByDeletion(sequence, v, deletionTime);
                }
            }
        }
    }

    /** Upsert of one accepted, non-delete row against the key's current version. */
    private void applyRow(Object sequence, Map<String, Object> row) {
        List<Object> key = keyOf(row);
        LocalDateTime updatedAt = updatedAt(row);
        Version current = currentVersion(key);
        if (current == null || current.deletionRecord()) {
            // New or returning key: starts at the later of updated_at and the end of its last version.
            Version last = lastVersion(key);
            LocalDateTime start = updatedAt;
            if (last != null) {
                LocalDateTime end = last.deletionRecord() ? last.validFrom() : last.validTo();
                start = later(updatedAt, end);
            }
            if (current != null) {
                close(sequence, current, start, UPDATE, changedColumns(current.values(), row));
            }
            versions.add(new Version(key, sourceValues(row), updatedAt, start, false, sequence));
            return;
        }
        boolean changed = config.strategy() == Strategy.CHECK
                ? !changedColumns(current.values(), row).isEmpty()
                : updatedAt.isAfter(current.updatedAt());
        if (!changed) {
            return;
        }
        if (updatedAt.isBefore(current.validFrom())) {
            rejections.add(new Rejection(sequence, UPDATED_AT_REGRESSION, row));
            return;
        }
        close(sequence, current, updatedAt, UPDATE, changedColumns(current.values(), row));
        versions.add(new Version(key, sourceValues(row), updatedAt, updatedAt, false, sequence));
    }

    /** A row matching {@code delete_when}: closes the current version at the row's updated_at. */
    private void applyExplicitDelete(Object sequence, Map<String, Object> row) {
        Version current = currentVersion(keyOf(row));
        if (current == null || current.deletionRecord()) {
            return; // nothing to delete
        }
        LocalDateTime at = updatedAt(row);
        if (at.isBefore(current.validFrom())) {
            rejections.add(new Rejection(sequence, UPDATED_AT_REGRESSION, row));
            return;
        }
        closeByDeletion(sequence, current, at);
    }

    /** Closes a version as deleted, never before it opened; under new_record adds the deletion record. */
    private void closeByDeletion(Object sequence, Version current, LocalDateTime deletionTime) {
        LocalDateTime at = later(deletionTime, current.validFrom());
        close(sequence, current, at, DELETE, null);
        if (config.hardDeletes() == HardDeletes.NEW_RECORD) {
            versions.add(new Version(current.key(), current.values(), at, at, true, sequence));
        }
    }

    private static void close(Object sequence, Version v, LocalDateTime at, String changeType, List<String> changed) {
        v.validTo = at;
        v.changeType = changeType;
        v.changedAttributes = changed;
        v.closedSeq = sequence;
    }

    /**
     * Deletion time of a full batch: the sequence when it is temporal (a DATE at midnight), otherwise the greatest
     * non-NULL updated_at among all the batch's rows, rejected ones included; null when there is none.
     */
    private LocalDateTime deletionTime(Batch batch) {
        if (config.temporalSequence()) {
            Object s = batch.sequence();
            return s instanceof LocalDate d ? d.atStartOfDay() : (LocalDateTime) s;
        }
        LocalDateTime max = null;
        for (Map<String, Object> row : batch.rows()) {
            LocalDateTime u = updatedAt(row);
            if (u != null && (max == null || u.isAfter(max))) {
                max = u;
            }
        }
        return max;
    }

    /** Tracked columns whose values differ (IS DISTINCT FROM), in source order. */
    private List<String> changedColumns(Map<String, Object> before, Map<String, Object> after) {
        List<String> changed = new ArrayList<>();
        for (String c : tracked) {
            if (!Objects.equals(before.get(c), after.get(c))) {
                changed.add(c);
            }
        }
        return changed;
    }

    private Version currentVersion(List<Object> key) {
        Version found = null;
        for (Version v : versions) {
            if (v.key().equals(key) && v.current()) {
                if (found != null) {
                    throw new IllegalStateException("model bug: two current versions of " + key);
                }
                found = v;
            }
        }
        return found;
    }

    /** The key's latest version: the current one, else the one that ended last. */
    private Version lastVersion(List<Object> key) {
        Version last = null;
        for (Version v : versions) {
            if (v.key().equals(key)) {
                last = v; // versions of a key are created in time order
            }
        }
        return last;
    }

    private Map<String, Object> sourceValues(Map<String, Object> row) {
        Map<String, Object> values = new LinkedHashMap<>();
        for (String c : config.columns()) {
            values.put(c, row.get(c));
        }
        return values;
    }

    private List<Object> keyOf(Map<String, Object> row) {
        List<Object> key = new ArrayList<>();
        for (String c : config.keyColumns()) {
            key.add(row.get(c));
        }
        return key;
    }

    private LocalDateTime updatedAt(Map<String, Object> row) {
        return (LocalDateTime) row.get(config.updatedAtColumn());
    }

    private static LocalDateTime later(LocalDateTime a, LocalDateTime b) {
        return b != null && b.isAfter(a) ? b : a;
    }

    @SuppressWarnings("unchecked")
    static Comparable<Object> comparable(Object sequence) {
        return (Comparable<Object>) Objects.requireNonNull(sequence, "sequence");
    }
}
