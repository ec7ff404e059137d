package dev.itersnap.core;

/** How a change is detected for a key that already has a current version. */
public enum Strategy {
    /** A change is any tracked column ({@code check_cols}) whose value IS DISTINCT FROM the current version's. */
    CHECK,
    /** A change is an {@code updated_at} later than the current version's {@code dbt_updated_at}. */
    TIMESTAMP;

    /** Parses the setting value ({@code check} or {@code timestamp}), case-insensitively. */
    public static Strategy parse(String value) {
        return Settings.parseEnum(Strategy.class, "strategy", value);
    }
}
