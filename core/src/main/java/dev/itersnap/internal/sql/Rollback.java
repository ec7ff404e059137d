package dev.itersnap.internal.sql;

import dev.itersnap.internal.sql.ModelTables;

import java.util.List;

/**
 * What to undo ({@link SqlSteps#rollback}): the versions opened and the closings made by batches from a sequence on,
 * or by one batch only, and their archived rows; of every key, or of the keys a key-scoped replay recomputes.
 *
 * @param sequence      the first (or the only) batch to undo; null: none ({@link #restoreOnly})
 * @param onlyThisBatch undo {@code sequence} alone, not every batch from it on
 * @param history       undo the history's versions too (false: the archive's rows only)
 * @param resetColumns  columns introduced by the undone batches, emptied on every version
 * @param keyScoped     undo only for the keys the run computes again from its first batch (the keys table's, see
 *                      {@link ModelTables#FROM_IDX})
 * @param errorLog      (key-scoped only) remove those keys' rows of the replayed batches from the error log too
 *                      (matched by the staged rows, which the replay logs again); false when none of the replayed
 *                      batches set a row aside
 */
public record Rollback(Object sequence, boolean onlyThisBatch, boolean history, List<String> resetColumns,
                       boolean keyScoped, boolean errorLog) {
    public Rollback {
        resetColumns = List.copyOf(resetColumns);
        if (keyScoped && (onlyThisBatch || !history || !resetColumns.isEmpty())) {
            throw new IllegalArgumentException("a key-scoped rollback undoes the history from a sequence on");
        }
    }

    /** Every batch from {@code sequence} on (inclusive), emptying {@code resetColumns}. */
    public static Rollback from(Object sequence, List<String> resetColumns) {
        return new Rollback(sequence, false, true, resetColumns, false, false);
    }

    /**
     * Every batch from {@code sequence} on, for the keys a key-scoped replay computes again only; their rows of the
     * replayed batches in the error log too when {@code errorLog}.
     */
    public static Rollback keys(Object sequence, boolean errorLog) {
        return new Rollback(sequence, false, true, List.of(), true, errorLog);
    }

    /** The batch {@code sequence} alone: its versions, closings and archived rows. */
    public static Rollback batch(Object sequence) {
        return new Rollback(sequence, true, true, List.of(), false, false);
    }

    /**
     * Nothing to undo; only, under {@code untracked_columns: overwrite}, every live version's overwritten columns
     * restored from the archive (a recovery after a run that stopped between its writes on a database without
     * transactional DML, where a roll back it had begun leaves no sequence to find). No statement otherwise.
     */
    public static Rollback restoreOnly() {
        return new Rollback(null, false, false, List.of(), false, false);
    }

    /** The archived rows of the batch {@code sequence} alone. */
    public static Rollback archived(Object sequence) {
        return new Rollback(sequence, true, false, List.of(), false, false);
    }
}
