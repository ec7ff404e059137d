package dev.itersnap.core;

/** What happens to keys that are current in the history but missing from a batch. */
public enum HardDeletes {
    /** Missing keys are left alone: each batch may hold only part of the source. */
    IGNORE,
    /** Each batch is a full picture: a missing key's current version is closed ({@code dbt_change_type = 'delete'}). */
    INVALIDATE,
    /** As {@link #INVALIDATE}, and a deletion record ({@code dbt_is_deleted = true}) is inserted as the current row. */
    NEW_RECORD;

    /** Parses the setting value ({@code ignore}, {@code invalidate}, {@code new_record}), case-insensitively. */
    public static HardDeletes parse(String value) {
        return Settings.parseEnum(HardDeletes.class, "hard_deletes", value);
    }

    /** True when every batch is a full picture of the source. */
    public boolean fullBatches() {
        return this != IGNORE;
    }
}
