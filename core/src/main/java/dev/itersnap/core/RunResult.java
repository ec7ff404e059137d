package dev.itersnap.core;

import java.time.Duration;
import java.util.List;

/**
 * The outcome of a successful run, full refresh or replay.
 *
 * @param runId          id of the run, as in the run log, ledger and error log
 * @param model          model name
 * @param batches        the batches applied, in business order (replayed ones included)
 * @param lateBatchFound true when a batch arrived with a sequence lower than one already applied
 * @param replayPoint    the sequence the history was rolled back to (inclusive), or null when nothing was rolled back
 * @param timelineViolations 0: a violation of the timeline check after the writes fails the run ({@link
 *                           ErrorCode#HISTORY_EDITED}) instead of being counted here (kept for compatibility)
 * @param duration       wall time of the run
 */
public record RunResult(String runId, String model, List<BatchResult> batches, boolean lateBatchFound,
                        Object replayPoint, long timelineViolations, Duration duration) {
    /** Copies the list. */
    public RunResult {
        batches = List.copyOf(batches);
    }

    /** The number of batches applied (or replayed) by the run. */
    public int batchesApplied() { return batches.size(); }
    /** The replay point as the ledger writes sequences, or null. */
    public String replayPointText() { return SequenceText.of(replayPoint); }
    /** Versions inserted, over all batches of the run. */
    public long inserted() { return batches.stream().mapToLong(BatchResult::inserted).sum(); }
    /** Versions closed by a change, over all batches of the run. */
    public long updated() { return batches.stream().mapToLong(BatchResult::updated).sum(); }
    /** Versions closed by a deletion, over all batches of the run. */
    public long deleted() { return batches.stream().mapToLong(BatchResult::deleted).sum(); }
    /** Rows set aside in the error log, over all batches of the run. */
    public long rejected() { return batches.stream().mapToLong(BatchResult::rejected).sum(); }
}
