package dev.itersnap.internal;

import dev.itersnap.core.BatchResult;
import dev.itersnap.core.SnapshotEvent;
import dev.itersnap.core.SnapshotListener;
import dev.itersnap.spi.Batch;
import dev.itersnap.spi.BatchStatements;
import dev.itersnap.spi.Dialect;
import dev.itersnap.spi.ModelTables;
import dev.itersnap.spi.ResolvedModel;
import dev.itersnap.spi.Statement;
import dev.itersnap.spi.ValueType;

import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Applies one batch from the stage to the history, within the caller's transaction: classify, set aside, fill
 * introduced columns, archive, close absent keys, merge, add deletion records, record in the ledger.
 */
final class BatchApplier {
    private final Jdbc jdbc;
    private final Dialect dialect;
    private final ResolvedModel m;
    private final ModelTables tables;
    private final MetadataStore store;
    private final Map<String, Seq> introduced;
    private final SnapshotListener listener;
    private final String runId;

    BatchApplier(Jdbc jdbc, Dialect dialect, ResolvedModel m, ModelTables tables, MetadataStore store,
                 Map<String, Seq> introduced, SnapshotListener listener, String runId) {
        this.jdbc = jdbc;
        this.dialect = dialect;
        this.m = m;
        this.tables = tables;
        this.store = store;
        this.introduced = introduced;
        this.listener = listener;
        this.runId = runId;
    }

    /**
     * Applies batch {@code seq}.
     *
     * @param recordedDeletionTime the deletion time the ledger holds for a reproduced batch, else null
     */
    BatchResult apply(Seq seq, boolean reproduced, String recordedDeletionTime) {
        jdbc.update(tables.clear(m.work()).inStep("clear work table"));
        List<String> untracked = new ArrayList<>();
        List<String> introducedNow = new ArrayList<>();
        introduced.forEach((column, at) -> {
            if (at.compareTo(seq) >= 0) {
                untracked.add(column);
            }
            if (at.compareTo(seq) == 0) {
                introducedNow.add(column);
            }
        });
        Object deletionTime = m.settings().hardDeletes().fullBatches() ? deletionTime(seq, recordedDeletionTime) : null;
        BatchStatements sql = dialect.applyBatch(m, new Batch(seq.value(), seq.text(), runId, LocalDateTime.now(),
                untracked, introducedNow, deletionTime));
        jdbc.update(sql.classify());
        sql.fillIntroduced().forEach(jdbc::update);
        Map<String, Long> reasons = new TreeMap<>();
        long rows = 0;
        long inserted = 0;
        long updated = 0;
        long deleted = 0;
        long copies = 0;
        long toArchive = 0;
        for (Object[] r : jdbc.query(sql.count(),
                rs -> new Object[] {rs.getString(1), rs.getString(2), rs.getLong(3), rs.getLong(4)})) {
            String reason = (String) r[0];
            String action = (String) r[1];
            long count = (Long) r[2];
            toArchive += (Long) r[3];
            if (BatchStatements.SOURCE_ROWS.equals(reason)) {
                // the work table may leave out rows that change nothing: the batch's rows are counted in the stage
                rows = count;
            } else if ("duplicate_copy".equals(reason)) {
                copies += count;
            } else if (reason != null) {
                reasons.merge(reason, count, Long::sum);
            } else if ("insert".equals(action)) {
                inserted += count;
            } else if ("change".equals(action) || "return".equals(action)) {
                inserted += count;
                updated += count;
            } else if ("delete".equals(action)) {
                deleted += count;
            }
        }
        long rejected = reasons.values().stream().mapToLong(Long::longValue).sum();
        if (rejected > 0) {
            jdbc.update(sql.logRejected());
        }
        if (toArchive > 0) {
            jdbc.update(sql.archive());
        }
        if (sql.closeAbsent() != null) {
            deleted += jdbc.update(sql.closeAbsent());
        }
        jdbc.update(sql.merge());
        if (sql.deletionRecords() != null) {
            inserted += jdbc.update(sql.deletionRecords());
        }
        BatchResult result = new BatchResult(seq.value(), rows, inserted, updated, deleted, rejected, reproduced,
                copies);
        store.record(result, seq, runId, m.settings().hardDeletes().fullBatches()
                ? m.updatedAtType().format(deletionTime) : null);
        long conflicting = reasons.getOrDefault("duplicate_key", 0L);
        if (conflicting > 0 || copies > 0) {
            listener.onEvent(new SnapshotEvent.DuplicateRecords(m.name(), runId, seq.value(), conflicting, copies));
        }
        if (rejected > 0) {
            listener.onEvent(new SnapshotEvent.RowsRejected(m.name(), runId, seq.value(), reasons));
        }
        return result;
    }

    /**
     * The batch's deletion time: the recorded one for a reproduced batch; the sequence itself when both the
     * sequence and updated_at are temporal; otherwise the greatest updated_at of the batch in the stage.
     */
    private Object deletionTime(Seq seq, String recorded) {
        ValueType upd = m.updatedAtType();
        if (recorded != null) {
            return upd.coerce(recorded);
        }
        if (m.sequenceType().temporal() && upd.temporal()) {
            return upd.convertTemporal(m.sequenceType(), seq.value());
        }
        Statement max = tables.deletionTime(seq.value());
        List<Object> found = jdbc.query(max, rs -> upd.read(rs, 1));
        return found.isEmpty() ? null : found.get(0);
    }
}
