package dev.itersnap.core;

/**
 * What a row does to the source columns {@code check_cols} does not track ({@code untracked_columns}), when its
 * tracked columns are unchanged.
 */
public enum UntrackedColumns {
    /** Nothing: the version keeps the values of the row that opened it (dbt's behaviour; the default). */
    IGNORE,
    /**
     * The row updates those columns of the current version in place, without a new version: the current version
     * always shows the latest values, a closed version the values it had when it was closed (AUTO CDC's
     * {@code TRACK HISTORY ON ... EXCEPT (...)}). Only with {@code strategy: check} and a {@code check_cols} list.
     */
    OVERWRITE;

    /** Parses the setting value ({@code ignore}, {@code overwrite}), case-insensitively. */
    public static UntrackedColumns parse(String value) {
        return Settings.parseEnum(UntrackedColumns.class, "untracked_columns", value);
    }
}
