package dev.itersnap.core;

/**
 * What a run does with an applied batch whose rows changed in the source since it was applied (a corrected file
 * re-sent under the same sequence, rows appended to or removed from a loaded batch).
 */
public enum Restatements {
    /**
     * Each run compares the fingerprint (row count and content hash) of every applied batch the source still holds
     * with the one the ledger recorded; the history is replayed from the earliest batch that changed (the default).
     */
    DETECT,
    /** Applied batches are never compared: for sources known to be append-only (a run skips the content hash). */
    IGNORE;

    /** Parses the setting value ({@code detect}, {@code ignore}), case-insensitively. */
    public static Restatements parse(String value) {
        return Settings.parseEnum(Restatements.class, "restatements", value);
    }
}
