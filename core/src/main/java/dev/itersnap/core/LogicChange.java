package dev.itersnap.core;

/**
 * What a run does when the model's logic (source query, keys, updated_at, sequence_by, strategy, tracked columns,
 * delete rules, meta column names) differs from the last successful run's.
 */
public enum LogicChange {
    /** Stop with {@link ErrorCode#LOGIC_CHANGE} before writing anything (the default). */
    REFUSE,
    /** Keep the history built with the old logic and apply the new logic from now on. */
    ACCEPT
}
