package dev.itersnap.core;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Logs events through SLF4J with the model name in every line. */
final class Slf4jListener implements SnapshotListener {
    static final Slf4jListener INSTANCE = new Slf4jListener();
    private static final Logger LOG = LoggerFactory.getLogger("dev.itersnap");

    private Slf4jListener() {
    }

    @Override
    public void onEvent(SnapshotEvent event) {
        if (event instanceof SnapshotEvent.WaitingForLock e) {
            LOG.info("[{}] waiting for the model lock, held by {} (waited {} ms so far)", e.model(), e.holder(),
                    e.waited().toMillis());
        } else if (event instanceof SnapshotEvent.RunStarted e) {
            LOG.info("[{}] {} started (run {})", e.model(), e.operation(), e.runId());
        } else if (event instanceof SnapshotEvent.RunFinished e) {
            RunResult r = e.result();
            LOG.info("[{}] run {} finished: {} batches, +{} inserted, {} updated, {} deleted, {} rejected in {} ms",
                    e.model(), e.runId(), r.batchesApplied(), r.inserted(), r.updated(), r.deleted(), r.rejected(),
                    r.duration().toMillis());
        } else if (event instanceof SnapshotEvent.RunFailed e) {
            LOG.error("[{}] run {} failed: {}", e.model(), e.runId(), e.error().getMessage());
        } else if (event instanceof SnapshotEvent.BatchApplied e) {
            BatchResult b = e.batch();
            LOG.info("[{}] batch {}{}: {} rows, {} inserted, {} updated, {} deleted, {} rejected", e.model(),
                    b.sequence(), b.reproduced() ? " (reproduced from history)" : "", b.sourceRows(), b.inserted(),
                    b.updated(), b.deleted(), b.rejected());
        } else if (event instanceof SnapshotEvent.OutOfOrder e) {
            LOG.warn("[{}] out of order: incoming {} below greatest applied {}; replaying from {}", e.model(),
                    e.incoming(), e.greatestApplied(), e.replayPoint());
        } else if (event instanceof SnapshotEvent.DuplicateRecords e) {
            LOG.warn("[{}] batch {}: {} rows share a key with a differing row (set aside), {} exact copies (applied "
                    + "once)", e.model(), e.sequence(), e.rows(), e.copies());
        } else if (event instanceof SnapshotEvent.RowsRejected e) {
            LOG.warn("[{}] {}: rows set aside in the error log: {}", e.model(), e.sequence() == null
                    ? "rows without a sequence (in no batch)" : "batch " + SequenceText.of(e.sequence()), e.reasons());
        } else if (event instanceof SnapshotEvent.SchemaChange e) {
            LOG.warn("[{}] schema change: added {}, missing from source {}", e.model(), e.added(), e.missing());
        } else if (event instanceof SnapshotEvent.LedgerRepaired e) {
            LOG.warn("[{}] the ledger lost the entries of batches {} that the history carries; replaying from {}",
                    e.model(), e.sequences(), e.sequences().get(0));
        } else if (event instanceof SnapshotEvent.UnfinishedRunRepaired e) {
            LOG.warn("[{}] unfinished run {}: the history holds {} of the {} versions the ledger records for batches "
                    + "{}; replaying from {}", e.model(), e.unfinishedRuns(), e.foundVersions(), e.recordedVersions(),
                    e.sequences(), e.sequences().get(0));
        } else if (event instanceof SnapshotEvent.RowsAddedToAppliedBatch e) {
            LOG.warn("[{}] batch {}: the source holds {} rows, {} were applied; the {} rows added since are not in the "
                    + "history: replay from {} to apply them", e.model(), e.sequence(), e.sourceRows(), e.appliedRows(),
                    e.sourceRows() - e.appliedRows(), e.sequence());
        } else if (event instanceof SnapshotEvent.BatchRestated e) {
            LOG.warn("[{}] restated batch {}: changed in the source since it was applied ({} rows then, {} now); "
                    + "replaying from it", e.model(), e.sequence(), e.oldRows(), e.newRows());
        } else if (event instanceof SnapshotEvent.UncomparableBatches e) {
            LOG.warn("[{}] {} applied {} fingerprinted over columns the source no longer has as they were {}: "
                    + "whether they were corrected since cannot be told; replaying from {}", e.model(), e.batches(),
                    e.batches() == 1 ? "batch was" : "batches were", e.columns(), e.from());
        } else if (event instanceof SnapshotEvent.HistoryAdopted e) {
            LOG.info("[{}] adopted {} versions through {}: {} {} declared applied, bookkeeping columns added {}",
                    e.model(), e.versions(), e.through(), e.batches(), e.batches() == 1 ? "batch" : "batches",
                    e.columnsAdded());
        } else if (event instanceof SnapshotEvent.TimelineViolation e) {
            LOG.error("[{}] timeline check failed for {} keys, e.g. {}", e.model(), e.keys(), e.examples());
        }
    }
}
