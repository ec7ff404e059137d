package dev.itersnap.internal;

import dev.itersnap.core.BatchResult;
import dev.itersnap.core.SnapshotEvent;
import dev.itersnap.core.SnapshotListener;
import dev.itersnap.spi.ApplyStatements;
import dev.itersnap.spi.BatchRun;
import dev.itersnap.spi.Dialect;
import dev.itersnap.spi.ModelLock;
import dev.itersnap.spi.ModelTables;
import dev.itersnap.spi.ResolvedModel;
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
    record Planned(Seq sequence, boolean reproduced, String recordedDeletionTime) {
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

    /**
     * Applies every batch, in business order, and records each in the ledger; within the caller's transaction (the
     * caller commits). Returns the batches' results in order.
     */
    List<BatchResult> apply(List<Planned> batches) {
        List<BatchResult> results = new ArrayList<>();
        for (List<Planned> pass : passes(batches)) {
            if (!results.isEmpty()) { // the scratch tables are new for the first pass
                jdbc.updateAll(List.of(tables.clear(m.batches()), tables.clear(m.keysTable()),
                        tables.clear(m.events()), tables.clear(m.work())));
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
            if (introduces && !current.isEmpty()) {
                out.add(current);
                current = new ArrayList<>();
            }
            current.add(p);
        }
        out.add(current);
        return out;
    }

    private List<BatchResult> applyPass(List<Planned> pass) {
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
        ValueType upd = m.updatedAtType();
        List<BatchRun.BatchInfo> infos = new ArrayList<>();
        for (Planned p : pass) {
            // the recorded deletion time of a reproduced batch; the sequence itself when both are times; else the
            // greatest updated_at of the batch's rows, which the statements compute
            boolean recorded = p.recordedDeletionTime() != null;
            Object deletionTime = recorded ? upd.coerce(p.recordedDeletionTime())
                    : m.sequenceType().temporal() && upd.temporal()
                    ? upd.convertTemporal(m.sequenceType(), p.sequence().value()) : null;
            infos.add(new BatchRun.BatchInfo(p.sequence().value(), p.sequence().text(), deletionTime, recorded));
        }
        ApplyStatements sql = dialect.applyBatches(m, new BatchRun(infos, runId, LocalDateTime.now(), untracked,
                introducedAtFirst));
        jdbc.updateAll(sql.prepare());
        Counts counts;
        while (true) {
            jdbc.update(sql.events());
            jdbc.update(sql.derive());
            counts = count(sql, pass.size());
            if (counts.regressions == 0) {
                break;
            }
            jdbc.updateAll(sql.setAsideRegressions());
        }
        lock.verifyHeld();
        jdbc.update(sql.closeCurrent());
        jdbc.update(sql.insertVersions());
        if (counts.rejected > 0) {
            jdbc.update(sql.logRejected());
        }
        if (counts.archiveCandidates > 0 || !m.settings().hardDeletes().fullBatches()) {
            jdbc.update(sql.archive());
        }
        List<BatchResult> results = new ArrayList<>();
        List<String> deletionTimes = new ArrayList<>();
        for (int k = 0; k < pass.size(); k++) {
            Planned p = pass.get(k);
            Map<String, Long> c = counts.byBatch.getOrDefault(k + 1, Map.of());
            long copies = c.getOrDefault("duplicate_copy", 0L);
            Map<String, Long> reasons = new TreeMap<>();
            c.forEach((what, rows) -> {
                if (REASONS.contains(what)) {
                    reasons.put(what, rows);
                }
            });
            long rejected = reasons.values().stream().mapToLong(Long::longValue).sum();
            long deleted = c.getOrDefault("delete", 0L) + c.getOrDefault("absent", 0L);
            long updated = c.getOrDefault("change", 0L) + c.getOrDefault("return", 0L);
            long inserted = c.getOrDefault("insert", 0L) + updated + (m.deletionRecords() ? deleted : 0L);
            results.add(new BatchResult(p.sequence().value(), c.getOrDefault(ApplyStatements.SOURCE_ROWS, 0L),
                    inserted, updated, deleted, rejected, p.reproduced(), copies));
            Object deletionTime = counts.deletionTimes.get(k + 1);
            deletionTimes.add(m.settings().hardDeletes().fullBatches() ? upd.format(deletionTime) : null);
            long conflicting = reasons.getOrDefault("duplicate_key", 0L);
            if (conflicting > 0 || copies > 0) {
                listener.onEvent(new SnapshotEvent.DuplicateRecords(m.name(), runId, p.sequence().value(), conflicting,
                        copies));
            }
            if (rejected > 0) {
                listener.onEvent(new SnapshotEvent.RowsRejected(m.name(), runId, p.sequence().value(), reasons));
            }
        }
        store.recordAll(results, pass.stream().map(Planned::sequence).toList(), runId, deletionTimes);
        return results;
    }

    /** Reasons rows are set aside for (exact copies are counted, not set aside). */
    private static final java.util.Set<String> REASONS = java.util.Set.of("null_key", "duplicate_key",
            "null_updated_at", "updated_at_regression");

    /** What the counts query said. */
    private record Counts(Map<Integer, Map<String, Long>> byBatch, Map<Integer, Object> deletionTimes,
                          long regressions, long rejected, long archiveCandidates) {
    }

    private Counts count(ApplyStatements sql, int batches) {
        Map<Integer, Map<String, Long>> byBatch = new HashMap<>();
        Map<Integer, Object> deletionTimes = new HashMap<>();
        long[] regressions = {0};
        long[] rejected = {0};
        long[] archive = {0};
        ValueType upd = m.updatedAtType();
        jdbc.query(sql.counts(), rs -> {
            int idx = rs.getInt(1);
            String what = rs.getString(2);
            long rows = rs.getLong(3);
            if (ApplyStatements.DELETION_TIME.equals(what)) {
                deletionTimes.put(idx, upd.read(rs, 4));
            } else if (ApplyStatements.REGRESSIONS.equals(what)) {
                regressions[0] += rows;
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
        return new Counts(byBatch, deletionTimes, regressions[0], rejected[0], archive[0]);
    }
}
