package dev.itersnap.internal;

import dev.itersnap.core.BatchResult;
import dev.itersnap.core.SnapshotEvent;
import dev.itersnap.core.SnapshotListener;
import dev.itersnap.internal.sql.ApplyStatements;
import dev.itersnap.internal.sql.BatchRun;
import dev.itersnap.internal.sql.RejectReason;
import dev.itersnap.internal.sql.SqlSteps;
import dev.itersnap.spi.Dialect;
import dev.itersnap.spi.ModelLock;
import dev.itersnap.internal.sql.ModelTables;
import dev.itersnap.spi.Statement;
import dev.itersnap.spi.ValueType;

import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Applies a run's batches from the stage to the history together, in a fixed number of statements whatever their
 * number: the dialect's set-based statements, then the ledger, one entry per batch with its own counts. Columns
 * introduced within the batches split them where they first appear (their values are compared from the next batch
 * on), so a run with no new column is one pass.
 */
final class BatchApplier {
    /** What a batch of the pass is to the engine. */
    record Planned(Seq sequence, boolean reproduced, String recordedDeletionTime, boolean replayed) {
        Planned(Seq sequence, boolean reproduced, String recordedDeletionTime) {
            this(sequence, reproduced, recordedDeletionTime, false);
        }
    }

    private final Jdbc jdbc;
    private final Dialect dialect;
    private final ResolvedModel m;
    private final ModelTables tables;
    private final MetadataStore store;
    private final Map<String, Seq> introduced;
    private final SnapshotListener listener;
    private final String runId;
    private final ModelLock lock;
    /**
     * The check of a pass before its first write to the history (it may refuse), once its keys are in the keys table
     * and its versions derived: the statement whose rows it refuses, counted by the pass's counts query (none: the
     * check reads what it needs), then the check with what that count found.
     */
    interface WriteCheck {
        Statement probe();

        void verify(long found);
    }

    private WriteCheck beforeWriting = new WriteCheck() {
        @Override
        public Statement probe() {
            return null;
        }

        @Override
        public void verify(long found) {
        }
    };
    /** Columns the source no longer has that the run carries ({@link RunSchema.Carried}); {@link #m} carries them. */
    private List<RunSchema.Carried> carried = List.of();

    BatchApplier(Jdbc jdbc, Dialect dialect, ResolvedModel m, ModelTables tables, MetadataStore store,
                 Map<String, Seq> introduced, SnapshotListener listener, String runId, ModelLock lock) {
        this.jdbc = jdbc;
        this.dialect = dialect;
        this.m = m;
        this.tables = tables;
        this.store = store;
        this.introduced = introduced;
        this.listener = listener;
        this.runId = runId;
        this.lock = lock;
    }

    /** {@code check} runs before each pass writes to the history, once its versions are derived; returns this. */
    BatchApplier beforeWriting(WriteCheck check) {
        this.beforeWriting = check;
        return this;
    }

    /**
     * This applier with the columns the run carries: each is a source column in the passes up to the last batch
     * applied while the source had it (the passes split there) and a column the source lacks after it.
     */
    BatchApplier carrying(List<RunSchema.Carried> columns) {
        this.carried = List.copyOf(columns);
        return this;
    }

    /**
     * The model of a pass whose last batch is {@code last}: carrying the columns whose last batch with the source is
     * at or after it, none otherwise.
     */
    private ResolvedModel model(Seq last) {
        if (carried.isEmpty()) {
            return m;
        }
        ResolvedModel base = m.withoutCarried();
        List<dev.itersnap.spi.SourceColumn> columns = new ArrayList<>();
        for (RunSchema.Carried c : carried) {
            if (c.through().compareTo(last) >= 0) {
                columns.add(c.column());
            }
        }
        // placed as in the run's view, whose order is the history's
        return columns.size() == carried.size() ? m : base.carrying(columns, m.historyDataColumns());
    }

    /**
     * Applies every batch, in business order, and records each in the ledger; within the caller's transaction (the
     * caller commits). Returns the batches' results in order.
     */
    List<BatchResult> apply(List<Planned> batches) {
        List<BatchResult> results = new ArrayList<>();
        for (List<Planned> pass : passes(batches)) {
            if (!results.isEmpty()) { // the scratch tables are new for the first pass
                jdbc.updateAll(List.of(tables.clear(m.batches()), tables.clear(m.keysTable()),
                        tables.clear(m.work())));
            }
            results.addAll(applyPass(pass));
        }
        return results;
    }

    /** The batches split where a column is introduced (after the first batch). */
    private List<List<Planned>> passes(List<Planned> batches) {
        List<List<Planned>> out = new ArrayList<>();
        List<Planned> current = new ArrayList<>();
        for (Planned p : batches) {
            boolean introduces = introduced.values().stream().anyMatch(at -> at.compareTo(p.sequence()) == 0);
            // a carried column is compared up to its last batch with the source, and lacked after it
            Seq before = current.isEmpty() ? null : current.get(current.size() - 1).sequence();
            boolean dropped = before != null && carried.stream().anyMatch(c -> c.through().compareTo(p.sequence())
                    < 0 && c.through().compareTo(before) >= 0);
            if ((introduces || dropped) && !current.isEmpty()) {
                out.add(current);
                current = new ArrayList<>();
            }
            current.add(p);
        }
        out.add(current);
        return out;
    }

    private List<BatchResult> applyPass(List<Planned> pass) {
        ApplyStatements sql = statements(pass, false);
        jdbc.updateAll(sql.listBatches());
        jdbc.updateAll(sql.prepare());
        Counts counts = deriveChecked(sql.derivation());
        write(sql, counts);
        List<BatchResult> results = new ArrayList<>();
        for (int k = 0; k < pass.size(); k++) {
            Planned p = pass.get(k);
            Map<String, Long> c = counts.byBatch.getOrDefault(k + 1, Map.of());
            results.add(new BatchResult(p.sequence().shown(), c.getOrDefault(ApplyStatements.SOURCE_ROWS, 0L),
                    inserted(c), updated(c), deleted(c), rejected(c), p.reproduced(),
                    c.getOrDefault(RejectReason.DUPLICATE_COPY.code(), 0L)));
            Map<String, Long> reasons = reasons(c);
            announce(p.sequence(), reasons.getOrDefault(RejectReason.DUPLICATE_KEY.code(), 0L),
                    results.get(k).duplicateCopies(),
                    reasons);
        }
        record(pass, results, counts);
        return results;
    }

    /**
     * The statements of a key-scoped replay of {@code batches} (one pass: no column is introduced within it), whose
     * replayed ones are {@link Planned#replayed}. The caller runs {@code listBatches}, stages the batches applied in
     * full, runs {@code prepare}, stages the replayed batches' rows of the keys it found and rolls those keys back,
     * then calls {@link #applyReplay}.
     */
    ApplyStatements replayStatements(List<Planned> batches) {
        return statements(batches, true);
    }

    /**
     * Applies a key-scoped replay prepared by the caller (see {@link #replayStatements}), within the caller's
     * transaction. A replayed batch's counts are its ledger counts changed by the difference its rows of the keys
     * computed again make with the late batches and without them ({@code before}). Returns the results in order.
     */
    List<BatchResult> applyReplay(ApplyStatements sql, List<Planned> pass, Map<Seq, MetadataStore.Entry> ledger) {
        Counts before = derive(sql.before());
        if (before.regressionsSetAside) {
            jdbc.update(sql.resetRegressions());
        }
        jdbc.updateAll(sql.before().clear());
        Counts after = deriveChecked(sql.derivation());
        write(sql, after);
        List<BatchResult> results = new ArrayList<>();
        boolean needReasons = false;
        for (int k = 0; k < pass.size(); k++) {
            Planned p = pass.get(k);
            Map<String, Long> c = after.byBatch.getOrDefault(k + 1, Map.of());
            if (!p.replayed()) {
                results.add(new BatchResult(p.sequence().shown(), c.getOrDefault(ApplyStatements.SOURCE_ROWS, 0L),
                        inserted(c), updated(c), deleted(c), rejected(c), false,
                        c.getOrDefault(RejectReason.DUPLICATE_COPY.code(), 0L)));
                continue;
            }
            Map<String, Long> b = before.byBatch.getOrDefault(k + 1, Map.of());
            BatchResult old = ledger.get(p.sequence()).counts();
            BatchResult now = new BatchResult(p.sequence().shown(), old.sourceRows(),
                    old.inserted() - inserted(b) + inserted(c), old.updated() - updated(b) + updated(c),
                    old.deleted() - deleted(b) + deleted(c), old.rejected() - rejected(b) + rejected(c), false,
                    old.duplicateCopies());
            results.add(now);
            needReasons |= now.rejected() > 0;
        }
        // the events: a replayed batch's reasons are read back from the error log (only its rows of the keys computed
        // again were staged)
        Map<String, Map<String, Long>> logged = new HashMap<>();
        if (needReasons) {
            for (MetadataStore.ErrorCount e : store.errorCounts(true)) {
                if (e.sequence() != null) {
                    logged.computeIfAbsent(e.sequence(), x -> new TreeMap<>()).put(e.reason(), e.rows());
                }
            }
        }
        for (int k = 0; k < pass.size(); k++) {
            Planned p = pass.get(k);
            Map<String, Long> reasons = p.replayed() ? logged.getOrDefault(p.sequence().text(), Map.of())
                    : reasons(after.byBatch.getOrDefault(k + 1, Map.of()));
            announce(p.sequence(), reasons.getOrDefault(RejectReason.DUPLICATE_KEY.code(), 0L),
                    results.get(k).duplicateCopies(),
                    reasons);
        }
        record(pass, results, after);
        return results;
    }

    private ApplyStatements statements(List<Planned> pass, boolean keyScoped) {
        Seq first = pass.get(0).sequence();
        Seq last = pass.get(pass.size() - 1).sequence();
        List<String> untracked = new ArrayList<>();
        List<String> introducedAtFirst = new ArrayList<>();
        introduced.forEach((column, at) -> {
            if (at.compareTo(last) > 0) {
                untracked.add(column);
            } else if (at.compareTo(first) == 0) {
                introducedAtFirst.add(column);
            }
        });
        ResolvedModel m = model(last);
        ValueType upd = m.updatedAtType();
        List<BatchRun.BatchInfo> infos = new ArrayList<>();
        for (Planned p : pass) {
            // the recorded deletion time of a reproduced or replayed batch; the sequence itself when both are times;
            // else the greatest updated_at of the batch's rows, which the statements compute
            boolean recorded = p.recordedDeletionTime() != null || (keyScoped && p.replayed());
            Object deletionTime = p.recordedDeletionTime() != null ? upd.coerce(p.recordedDeletionTime())
                    : recorded ? null : m.sequenceType().temporal() && upd.temporal()
                    ? upd.convertTemporal(m.sequenceType(), p.sequence().value()) : null;
            infos.add(new BatchRun.BatchInfo(p.sequence().value(), p.sequence().text(), deletionTime, recorded,
                    keyScoped && p.replayed()));
        }
        return SqlSteps.of(dialect).applyBatches(m, new BatchRun(infos, runId, LocalDateTime.now(), untracked,
                introducedAtFirst));
    }

    /**
     * {@link #derive} with the check before writing ({@link #beforeWriting}), its rows counted by the counts query (one
     * read less); it refuses before any write to the history (deriving writes the work table only).
     */
    private Counts deriveChecked(ApplyStatements.Derivation d) {
        Statement probe = beforeWriting.probe();
        Counts counts = derive(probe == null ? d : d.counting(probe));
        beforeWriting.verify(probe == null ? -1 : counts.probed());
        return counts;
    }

    /** Runs a derivation until it finds no more regressions; returns its counts. */
    private Counts derive(ApplyStatements.Derivation d) {
        boolean setAside = false;
        while (true) {
            jdbc.update(d.derive());
            jdbc.updateAll(d.derived());
            Counts counts = count(d);
            if (counts.regressions == 0) {
                return setAside ? counts.withRegressionsSetAside() : counts;
            }
            jdbc.updateAll(d.setAsideRegressions());
            setAside = true;
        }
    }

    /**
     * The writes: the versions the run closes and opens, the error log and the archive, each only when the counts say
     * it has a row to write (on Delta Lake every statement is a job and a commit, even one that writes nothing).
     */
    private void write(ApplyStatements sql, Counts counts) {
        lock.verifyHeld();
        boolean overwrite = m.overwritesUntracked();
        if (overwrite) {
            // untracked_columns: overwrite archives every row, first: a version overwritten in place then always has
            // its run's rows in the archive, from which a recovery restores it
            jdbc.update(sql.archive());
        }
        long change = counts.total("change");
        long ret = counts.total("return");
        long deletes = counts.total("delete") + counts.total("absent");
        // a version current before the run is closed only by a change, a delete, a deletion by absence, or a return
        // (which closes a deletion record); under overwrite a noop may update it in place
        boolean closes = change + ret + deletes > 0 || (overwrite && counts.total("noop") > 0);
        boolean opens = counts.total("insert") + ret + change + (m.deletionRecords() ? deletes : 0) > 0;
        if (closes && opens && sql.writeVersions() != null) {
            jdbc.update(sql.writeVersions()); // both in one statement
        } else {
            if (closes) {
                jdbc.update(sql.closeCurrent());
            }
            if (opens) {
                jdbc.update(sql.insertVersions());
            }
        }
        if (counts.rejected > 0) {
            jdbc.update(sql.logRejected());
        }
        // ignore_null_updates also archives a change whose NULLs were filled
        if (!overwrite && (counts.archiveCandidates > 0
                || (!m.settings().hardDeletes().fullBatches() && leftAlone(counts) > 0)
                || (m.settings().ignoreNullUpdates() && change > 0))) {
            jdbc.update(sql.archive());
        }
    }

    /**
     * The accepted rows of the stage that are no key's event (the keys the run leaves alone), which a run without
     * full batches archives: the stage's rows, less those set aside or counted as exact copies, less those that
     * became an event (each an insert, return, change, noop, delete or delnoop).
     */
    private static long leftAlone(Counts counts) {
        long rows = counts.total(ApplyStatements.SOURCE_ROWS);
        for (String what : List.of(RejectReason.DUPLICATE_COPY.code(), "insert", "return", "change", "noop", "delete",
                "delnoop")) {
            rows -= counts.total(what);
        }
        for (String reason : REASONS) {
            rows -= counts.total(reason);
        }
        return rows;
    }

    /** The ledger entries of the pass, with the deletion time each batch deleted absent keys at. */
    private void record(List<Planned> pass, List<BatchResult> results, Counts counts) {
        List<String> deletionTimes = new ArrayList<>();
        for (int k = 0; k < pass.size(); k++) {
            Object deletionTime = counts.deletionTimes.get(k + 1);
            deletionTimes.add(m.settings().hardDeletes().fullBatches() ? m.updatedAtType().format(deletionTime)
                    : null);
        }
        store.recordAll(results, pass.stream().map(Planned::sequence).toList(), runId, deletionTimes);
    }

    private void announce(Seq sequence, long conflicting, long copies, Map<String, Long> reasons) {
        if (conflicting > 0 || copies > 0) {
            listener.onEvent(new SnapshotEvent.DuplicateRecords(m.name(), runId, sequence.shown(), conflicting,
                    copies));
        }
        long rejected = reasons.values().stream().mapToLong(Long::longValue).sum();
        if (rejected > 0) {
            listener.onEvent(new SnapshotEvent.RowsRejected(m.name(), runId, sequence.shown(), reasons));
        }
    }

    private static Map<String, Long> reasons(Map<String, Long> c) {
        Map<String, Long> reasons = new TreeMap<>();
        c.forEach((what, rows) -> {
            if (REASONS.contains(what)) {
                reasons.put(what, rows);
            }
        });
        return reasons;
    }

    private static long rejected(Map<String, Long> c) {
        return reasons(c).values().stream().mapToLong(Long::longValue).sum();
    }

    private long deleted(Map<String, Long> c) {
        return c.getOrDefault("delete", 0L) + c.getOrDefault("absent", 0L);
    }

    private static long updated(Map<String, Long> c) {
        return c.getOrDefault("change", 0L) + c.getOrDefault("return", 0L);
    }

    private long inserted(Map<String, Long> c) {
        return c.getOrDefault("insert", 0L) + updated(c) + (m.deletionRecords() ? deleted(c) : 0L);
    }

    /** Reasons rows are set aside for (exact copies are counted, not set aside). */
    private static final java.util.Set<String> REASONS = java.util.Set.of(RejectReason.NULL_KEY.code(),
            RejectReason.DUPLICATE_KEY.code(),
            RejectReason.NULL_UPDATED_AT.code(), RejectReason.UPDATED_AT_REGRESSION.code());

    /** What the counts query said (and whether regressions were set aside before it). */
    private record Counts(Map<Integer, Map<String, Long>> byBatch, Map<Integer, Object> deletionTimes,
                          long regressions, long rejected, long archiveCandidates, boolean regressionsSetAside,
                          long probed) {
        Counts withRegressionsSetAside() {
            return new Counts(byBatch, deletionTimes, regressions, rejected, archiveCandidates, true, probed);
        }

        /** The rows counted as {@code what} over every batch of the pass. */
        long total(String what) {
            return byBatch.values().stream().mapToLong(c -> c.getOrDefault(what, 0L)).sum();
        }
    }

    private Counts count(ApplyStatements.Derivation sql) {
        Map<Integer, Map<String, Long>> byBatch = new HashMap<>();
        Map<Integer, Object> deletionTimes = new HashMap<>();
        long[] regressions = {0};
        long[] rejected = {0};
        long[] archive = {0};
        long[] probed = {0};
        ValueType upd = m.updatedAtType();
        jdbc.query(sql.counts(), rs -> {
            int idx = rs.getInt(1);
            String what = rs.getString(2);
            long rows = rs.getLong(3);
            if (ApplyStatements.DELETION_TIME.equals(what)) {
                deletionTimes.put(idx, upd.read(rs, 4));
            } else if (ApplyStatements.REGRESSIONS.equals(what)) {
                regressions[0] += rows;
            } else if (ApplyStatements.PROBED.equals(what)) {
                probed[0] += rows;
            } else {
                byBatch.computeIfAbsent(idx, k -> new HashMap<>()).merge(what, rows, Long::sum);
                if (REASONS.contains(what)) {
                    rejected[0] += rows;
                    archive[0] += rows;
                } else if (what.equals("delete") || what.equals("delnoop") || what.equals("noop")) {
                    archive[0] += rows;
                }
            }
            return null;
        });
        return new Counts(byBatch, deletionTimes, regressions[0], rejected[0], archive[0], false, probed[0]);
    }
}
