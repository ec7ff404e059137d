package dev.itersnap.internal.sql;

/**
 * A column the source no longer has that a replay stages again ({@link dev.itersnap.internal.ResolvedModel#carrying}), with
 * the batches whose rows take its value from the history: from {@code from} (the batch that introduced it; null: the
 * first) through {@code through} (the last batch applied while the source had it), as sequence values.
 */
public record CarriedRange(String column, Object from, Object through) {
}
