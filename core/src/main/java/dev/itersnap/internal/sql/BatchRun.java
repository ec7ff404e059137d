package dev.itersnap.internal.sql;

import java.time.LocalDateTime;
import java.util.List;

/**
 * The batches a run applies together, in business order, as the statements that apply them need them
 * ({@link SqlSteps#applyBatches}). Every column introduced within the run's range is introduced at its first batch
 * (the engine applies batches in runs split where a column is introduced).
 *
 * @param batches           the batches in business order (position i + 1 in the run)
 * @param runId             the run applying them
 * @param loggedAt          the time their set-aside rows are logged at
 * @param untracked         columns not compared in any of these batches (introduced after the last one)
 * @param introducedAtFirst columns that first appear in the first batch: not compared in it, and filled in place on
 *                          the versions current when it starts
 */
public record BatchRun(List<BatchInfo> batches, String runId, LocalDateTime loggedAt, List<String> untracked,
                       List<String> introducedAtFirst) {
    public BatchRun {
        batches = List.copyOf(batches);
        untracked = List.copyOf(untracked);
        introducedAtFirst = List.copyOf(introducedAtFirst);
        if (batches.isEmpty()) {
            throw new IllegalArgumentException("a run applies at least one batch");
        }
    }

    /**
     * One batch.
     *
     * @param sequence     its sequence value (bound as the sequence column's type)
     * @param sequenceText its canonical text (the ledger's and the error log's form; part of dbt_scd_id)
     * @param deletionTime its deletion time when known to the engine (a temporal sequence, or the one the ledger
     *                     recorded for a batch reproduced from the history), else null: the greatest updated_at of
     *                     its rows
     * @param recorded     true when {@code deletionTime} is the recorded one, even when null (then the batch deletes
     *                     nothing by absence)
     * @param replayed     true for a batch already applied that a key-scoped replay applies again: only the rows of
     *                     the keys the run's late batches change are staged (its deletion time is the recorded one)
     */
    public record BatchInfo(Object sequence, String sequenceText, Object deletionTime, boolean recorded,
                            boolean replayed) {
        /** A batch applied in full (not a key-scoped replay). */
        public BatchInfo(Object sequence, String sequenceText, Object deletionTime, boolean recorded) {
            this(sequence, sequenceText, deletionTime, recorded, false);
        }
    }

    /**
     * Whether this is a key-scoped replay: some batches are replayed for the keys the late batches change only (their
     * other keys' history is already right).
     */
    public boolean keyScoped() {
        return batches.stream().anyMatch(BatchInfo::replayed);
    }

    /** Position (from 1) of the first batch after every replayed one; {@code batches().size() + 1} when none is. */
    public int firstAfterReplayed() {
        int last = 0;
        for (int k = 0; k < batches.size(); k++) {
            if (batches.get(k).replayed()) {
                last = k + 1;
            }
        }
        return last + 1;
    }
}
