package dev.itersnap.core;

/** The kind of an {@link ItersnapException}; stable, so applications can branch on it. */
public enum ErrorCode {
    /** A model setting is missing or invalid; nothing was written. */
    INVALID_SETTING,
    /** No dialect on the class path handles the database. */
    NO_DIALECT,
    /** Another run of the same model held the lock longer than {@code lock_timeout}. */
    LOCK_TIMEOUT,
    /** The source query cannot be used (fails, lacks a configured column, or has an unorderable sequence type). */
    INVALID_SOURCE,
    /** A source column changed type in a way the database cannot widen. */
    INCOMPATIBLE_SCHEMA_CHANGE,
    /** A sequence given to {@code replayFrom} cannot be read as the model's sequence type. */
    INVALID_SEQUENCE,
    /**
     * The model's logic (source query, keys, strategy, tracked columns, delete rules) differs from the last successful
     * run; nothing was written. Rebuild with {@code replayFrom}, or run with {@link LogicChange#ACCEPT}.
     */
    LOGIC_CHANGE,
    /**
     * The history table and the metadata do not belong together: the target is owned by another model, by this model
     * under another metadata schema, or by no model (no ledger holds it), or the model's own history is missing while
     * its ledger records batches. Nothing was written; the message names the owner and the ways forward.
     */
    TARGET_NOT_OWNED,
    /**
     * A batch at or before the point a history was adopted through ({@code adopt}) arrived after the adoption, or a
     * run would replay from there (a restated adopted batch, a replay or full refresh reaching back into the adopted
     * range): the adopted versions cannot be rebuilt from batches the source does not hold. Nothing was written; the
     * message names the batch, the adoption point and the ways forward.
     */
    LATE_BEFORE_ADOPTION,
    /**
     * The history holds, among the versions a run was about to write over (or, checked after its writes, among the
     * keys it touched), a state no run of the model leaves: a version deleted, closed or reopened by hand, a key with
     * two open versions, versions that overlap, or fewer versions opened by a batch than the ledger counts. The run
     * stopped before writing to the history (after it, its writes were rolled back where the database has
     * transactions); the message names the keys or batches and the way out ({@code replay --from SEQ},
     * {@code full-refresh --yes}). Not worth retrying: a person must look.
     */
    HISTORY_EDITED,
    /** The database rejected a statement; the exception carries the step, the statement and the SQLState. */
    DATABASE_ERROR
}
