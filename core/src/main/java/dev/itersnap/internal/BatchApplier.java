package dev.itersnap.internal;

import dev.itersnap.core.BatchResult;
import dev.itersnap.core.SnapshotEvent;
import dev.itersnap.core.SnapshotListener;
import dev.itersnap.spi.Dialect;
import dev.itersnap.spi.ResolvedModel;
import dev.itersnap.spi.ValueType;

import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Applies one batch from the stage to the history (SPEC §3), within the caller's transaction: classify, set aside,
 * fill introduced columns, close absent keys, merge, add deletion records, record in the ledger.
 */
final class BatchApplier {
    private final Jdbc jdbc;
    private final Dialect dialect;
    private final ResolvedModel m;
    private final Ledger ledger;
    private final Map<String, Seq> introduced;
    private final SnapshotListener listener;
    private final String runId;
    private final SqlNames n;

    BatchApplier(Jdbc jdbc, Dialect dialect, ResolvedModel m, Ledger ledger, Map<String, Seq> introduced,
                 SnapshotListener listener, String runId) {
        this.jdbc = jdbc;
        this.dialect = dialect;
        this.m = m;
        this.ledger = ledger;
        this.introduced = introduced;
        this.listener = listener;
        this.runId = runId;
        this.n = new SqlNames(dialect, m);
    }

    /**
     * Applies batch {@code seq}.
     *
     * @param recordedDeletionTime the deletion time the ledger holds for a reproduced batch, else null
     */
    BatchResult apply(Seq seq, boolean reproduced, String recordedDeletionTime) {
        jdbc.update("clear work table", "DELETE FROM " + n.table(m.work()));
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
        jdbc.update("classify batch", dialect.classifyBatch(m, untracked), seq.value());
        for (String column : introducedNow) {
            jdbc.update("fill new column", dialect.fillIntroduced(m, column));
        }
        Map<String, Long> reasons = new TreeMap<>();
        long rows = 0;
        long inserted = 0;
        long updated = 0;
        long deleted = 0;
        long copies = 0;
        long toArchive = 0;
        for (Object[] r : jdbc.query("count batch", dialect.countBatch(m),
                rs -> new Object[] {rs.getString(1), rs.getString(2), rs.getLong(3), rs.getLong(4)}, seq.value())) {
            String reason = (String) r[0];
            String action = (String) r[1];
            long count = (Long) r[2];
            toArchive += (Long) r[3];
            if (dev.itersnap.spi.AbstractSqlDialect.SOURCE_ROWS.equals(reason)) {
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
            jdbc.update("set rows aside", dialect.logRejected(m), m.name(), runId, seq.text(), LocalDateTime.now());
        }
        if (toArchive > 0) {
            jdbc.update("archive rows", dialect.archiveBatch(m));
        }
        String deletionText = null;
        if (m.settings().hardDeletes().fullBatches()) {
            Object deletionTime = deletionTime(seq, recordedDeletionTime);
            deletionText = m.updatedAtType().format(deletionTime);
            if (deletionTime != null) {
                deleted += jdbc.update("close absent keys", dialect.closeAbsent(m), deletionTime, deletionTime,
                        seq.value(), seq.value());
            }
        }
        jdbc.update("merge batch", dialect.mergeBatch(m), seq.value(), seq.text(), seq.value());
        if (m.deletionRecords()) {
            inserted += jdbc.update("insert deletion records", dialect.insertDeletionRecords(m), seq.text(),
                    seq.value(), seq.value());
        }
        BatchResult result = new BatchResult(seq.value(), rows, inserted, updated, deleted, rejected, reproduced,
                copies);
        ledger.record(result, seq, runId, deletionText);
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
     * sequence and updated_at are temporal; otherwise the greatest updated_at of the batch.
     */
    private Object deletionTime(Seq seq, String recorded) {
        ValueType upd = m.updatedAtType();
        if (recorded != null) {
            return upd.coerce(recorded);
        }
        if (m.sequenceType().temporal() && upd.temporal()) {
            return upd.convertTemporal(m.sequenceType(), seq.value());
        }
        List<Object> max = jdbc.query("deletion time", "SELECT MAX(" + n.q(m.updatedAt()) + ") FROM "
                + n.table(m.stage()) + " WHERE " + n.q(m.sequenceBy()) + " = ?", rs -> upd.read(rs, 1), seq.value());
        return max.isEmpty() ? null : max.get(0);
    }
}
