package dev.itersnap.core;

import java.util.Objects;

/**
 * A point of a model's history to read: as of a business time (the versions valid then, half-open
 * {@code [dbt_valid_from, dbt_valid_to)}), or as of a batch (the state right after that batch was applied, from the
 * bookkeeping columns). Deleted keys are absent from both.
 */
public sealed interface AsOf {
    /** The value: a time for {@link Time}, a sequence for {@link Sequence}; a Java value or its text. */
    Object value();

    /** As of a business time, compared with {@code dbt_valid_from}/{@code dbt_valid_to}. */
    record Time(Object value) implements AsOf {
        public Time {
            Objects.requireNonNull(value, "time");
        }
    }

    /** As of a batch: every batch up to and including this sequence applied, none after. */
    record Sequence(Object value) implements AsOf {
        public Sequence {
            Objects.requireNonNull(value, "sequence");
        }
    }

    static AsOf time(Object time) {
        return new Time(time);
    }

    static AsOf sequence(Object sequence) {
        return new Sequence(sequence);
    }
}
