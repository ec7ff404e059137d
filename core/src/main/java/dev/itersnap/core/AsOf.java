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
        /** Requires a value. */
        public Time {
            Objects.requireNonNull(value, "time");
        }
    }

    /** As of a batch: every batch up to and including this sequence applied, none after. */
    record Sequence(Object value) implements AsOf {
        /** Requires a value. */
        public Sequence {
            Objects.requireNonNull(value, "sequence");
        }
    }

    /** As of a business time: a {@code LocalDateTime}, {@code LocalDate}, ... or its text. */
    static AsOf time(Object time) {
        return new Time(time);
    }

    /** As of a batch: a value of the sequence column's type or its text ({@code 2024-03-01}, {@code 42}). */
    static AsOf sequence(Object sequence) {
        return new Sequence(sequence);
    }
}
