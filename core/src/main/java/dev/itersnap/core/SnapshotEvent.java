package dev.itersnap.core;

import java.time.Duration;
import java.util.List;

/** Everything a run reports to its {@link SnapshotListener}. Each event carries the model name and the run id. */
public sealed interface SnapshotEvent {
    /** The model the event belongs to. */
    String model();

    /** The run the event belongs to. */
    String runId();

    /**
     * A run has waited {@code waited} for the model lock, which another run holds ({@code holder}: its run id, host
     * and start, as the run log has it, or "holder unknown"). Fired once per run, when the wait passes about two
     * seconds; the run goes on waiting up to {@code lock_timeout}.
     */
    record WaitingForLock(String model, String runId, String holder, Duration waited) implements SnapshotEvent { }

    /** A run took the lock and started. {@code operation} is run, full_refresh or replay. */
    record RunStarted(String model, String runId, String operation) implements SnapshotEvent { }

    /** A run finished successfully. */
    record RunFinished(String model, String runId, RunResult result) implements SnapshotEvent { }

    /** A run failed; the history is as it was after the last batch recorded in the ledger. */
    record RunFailed(String model, String runId, ItersnapException error, Duration after) implements SnapshotEvent { }

    /** One batch was applied and recorded in the ledger. */
    record BatchApplied(String model, String runId, BatchResult batch) implements SnapshotEvent { }

    /**
     * Batches arrived with sequences lower than the greatest applied one; the history is rolled back to
     * {@code replayPoint} and replayed.
     */
    record OutOfOrder(String model, String runId, List<Object> incoming, Object greatestApplied, Object replayPoint)
            implements SnapshotEvent { }

    /**
     * Rows of one batch shared a key: {@code rows} differing rows were all set aside ({@code duplicate_key});
     * {@code copies} exact copies of another row were applied once.
     */
    record DuplicateRecords(String model, String runId, Object sequence, long rows, long copies)
            implements SnapshotEvent { }

    /**
     * Rows of one batch were set aside in the error log; {@code reasons} counts them by reason. {@code sequence} is
     * null for rows without a sequence ({@code null_sequence}), which belong to no batch.
     */
    record RowsRejected(String model, String runId, Object sequence, java.util.Map<String, Long> reasons)
            implements SnapshotEvent { }

    /** Source columns were added to the history table, or became missing from the source (kept, NULL from now on). */
    record SchemaChange(String model, String runId, List<String> added, List<String> missing) implements SnapshotEvent { }

    /**
     * The timeline check after the run's writes found keys breaking the SCD2 invariants ({@code examples}: up to five,
     * as {@code key=value}); the run then fails with {@link ErrorCode#HISTORY_EDITED}.
     */
    record TimelineViolation(String model, String runId, long keys, List<String> examples) implements SnapshotEvent { }

    /**
     * The history carries batches whose ledger entries were lost (deleted by hand): the history is replayed from the
     * first of them, never applied over. {@code sequences} are the lost batches.
     */
    record LedgerRepaired(String model, String runId, List<Object> sequences) implements SnapshotEvent { }

    /**
     * A run that did not finish ({@code unfinishedRuns}, still running in the run log) recorded batches in the ledger
     * whose versions the history does not hold: {@code recordedVersions} counted by their entries, {@code
     * foundVersions} opened by them in the history (a commit the database had not made durable when the process
     * died). The history is replayed from the first of {@code sequences}, never applied over.
     */
    record UnfinishedRunRepaired(String model, String runId, List<String> unfinishedRuns, List<Object> sequences,
                                 long recordedVersions, long foundVersions) implements SnapshotEvent { }

    /**
     * The source holds more rows of an applied batch than were applied ({@code sourceRows} against
     * {@code appliedRows}, the ledger's count): rows added after the batch was applied, which a run does not apply by
     * itself. {@code replay --from} the batch ({@code IterativeSnapshot.replayFrom}) applies them.
     */
    record RowsAddedToAppliedBatch(String model, String runId, Object sequence, long sourceRows, long appliedRows)
            implements SnapshotEvent { }

    /**
     * An applied batch that the source still holds has other rows than when it was applied (rows corrected, added or
     * removed, the batch replaced): its fingerprint (row count and content hash) differs from the ledger's. The
     * history is replayed from the earliest restated batch, in the same run. {@code oldRows} is the row count
     * recorded with the fingerprint, {@code newRows} the source's now. Only with {@code restatements: detect}.
     */
    record BatchRestated(String model, String runId, Object sequence, long oldRows, long newRows)
            implements SnapshotEvent { }

    /**
     * Applied batches that the source still holds were fingerprinted over columns it no longer has as they were
     * ({@code columns}: dropped, or of another type now), so whether they were corrected since cannot be told: the
     * history is replayed from the earliest of them ({@code from}), in the same run, for every key, as for a restated
     * batch, and the values of dropped columns are kept. {@code batches} is how many. Only with {@code restatements:
     * detect}; fired by the first run after such a change.
     */
    record UncomparableBatches(String model, String runId, List<String> columns, int batches, Object from)
            implements SnapshotEvent { }

    /**
     * An existing SCD Type 2 table became the model's history ({@code adopt}): the source's batches up to
     * {@code through} ({@code batches} ledger entries, the point itself included) are declared applied, its
     * {@code versions} kept as they are; {@code columnsAdded} are the bookkeeping columns it lacked.
     */
    record HistoryAdopted(String model, String runId, Object through, int batches, long versions,
                          List<String> columnsAdded) implements SnapshotEvent { }
}
