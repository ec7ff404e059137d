package dev.itersnap.spi;

import java.util.List;

/**
 * What to undo ({@link Dialect#rollback}): the versions opened and the closings made by batches from a sequence on,
 * or by one batch only, and their archived rows.
 *
 * @param sequence      the first (or the only) batch to undo
 * @param onlyThisBatch undo {@code sequence} alone, not every batch from it on
 * @param history       undo the history's versions too (false: the archive's rows only)
 * @param resetColumns  columns introduced by the undone batches, emptied on every version
 */
public record Rollback(Object sequence, boolean onlyThisBatch, boolean history, List<String> resetColumns) {
    public Rollback {
        resetColumns = List.copyOf(resetColumns);
    }

    /** Every batch from {@code sequence} on (inclusive), emptying {@code resetColumns}. */
    public static Rollback from(Object sequence, List<String> resetColumns) {
        return new Rollback(sequence, false, true, resetColumns);
    }

    /** The batch {@code sequence} alone: its versions, closings and archived rows. */
    public static Rollback batch(Object sequence) {
        return new Rollback(sequence, true, true, List.of());
    }

    /** The archived rows of the batch {@code sequence} alone. */
    public static Rollback archived(Object sequence) {
        return new Rollback(sequence, true, false, List.of());
    }
}
