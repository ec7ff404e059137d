package dev.itersnap.spi;

/**
 * Which source rows a stage statement copies (the engine's {@code stageSource} step); every scope reads from a sequence on.
 */
public enum StageScope {
    /** Every row from the sequence on. */
    ALL,
    /** The rows of the batches a key-scoped replay applies in full: those not replayed (the batches table's). */
    FRESH,
    /**
     * The rows of the replayed batches of the keys a key-scoped replay computes again from its first batch (the keys
     * table's, {@link PlanHints#RECOMPUTED_FROM} 1).
     */
    REPLAYED_KEYS
}
