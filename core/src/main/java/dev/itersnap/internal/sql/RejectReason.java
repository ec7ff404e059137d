package dev.itersnap.internal.sql;

import java.util.Locale;

/**
 * Why a source row is set aside (the error log's {@code reason}, the stage's and work table's {@code itersnap_reject}):
 * every reason the engine gives, with where it is decided. The code is what the tables, the events and the command
 * line show.
 */
public enum RejectReason {
    /** The row has no sequence: it belongs to no batch. Decided when staging ({@link SqlSteps#stageSource}). */
    NULL_SEQUENCE,
    /** A key column is NULL. Decided when staging. */
    NULL_KEY,
    /** Another row of the batch has the same key and differs in some column. Decided when staging. */
    DUPLICATE_KEY,
    /**
     * The row repeats another row of its batch in every column (a file loaded twice): applied once, the copies
     * counted, not logged. Decided when staging.
     */
    DUPLICATE_COPY,
    /** updated_at is NULL. Decided when staging. */
    NULL_UPDATED_AT,
    /**
     * Under strategy timestamp, updated_at is older than the key's live version's: set aside, the version kept.
     * Decided by the derivation ({@link SetBasedApply}).
     */
    UPDATED_AT_REGRESSION;

    /** The reason as the tables and events write it: {@code duplicate_key}. */
    public String code() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The code as a SQL string literal: {@code 'duplicate_key'}. */
    public String literal() {
        return "'" + code() + "'";
    }

    @Override
    public String toString() {
        return code();
    }
}
