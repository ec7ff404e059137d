package dev.itersnap.core;

import java.util.Objects;

/**
 * A point of a model's history to read: as of a business time (the versions valid then, half-open
 * {@code [dbt_valid_from, dbt_valid_to)}), or as of a batch (the state right after that batch was applied, from the
 * bookkeeping columns). Deleted keys are absent from both. A business time may also be read as the history was
 * known at an earlier moment ({@link KnownAt}): before the repairs and runs that came after it.
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

        /**
         * The versions valid at this business time as the history stood at system time {@code systemTime} (a
         * {@code LocalDateTime}, {@code LocalDate} or their ISO text, in the clock the run log's times are written
         * in: the JVM's local time of the runs), before every repair after it.
         */
        public KnownAt knownAt(Object systemTime) {
            return new KnownAt(value, systemTime);
        }
    }

    /**
     * The history as it stood at system time {@code knownAt}: exactly what the last run finished by then had left
     * (the versions a later repair replaced read back from the model's {@code itersnap_superseded_<model>} table,
     * closings by later runs undone), restricted to the versions valid at business time {@code value} when it is not
     * null. Needs {@code keep_superseded} (the default) for the repairs after {@code knownAt}.
     */
    record KnownAt(Object value, Object knownAt) implements AsOf {
        /** Requires a moment. */
        public KnownAt {
            Objects.requireNonNull(knownAt, "knownAt");
        }
    }

    /**
     * Both timelines: every version of the history in each form the history showed it, with business time
     * ({@code dbt_valid_from}/{@code dbt_valid_to}) and system time: {@code itersnap_known_from} (inclusive; NULL:
     * before the run log's first record) and {@code itersnap_known_to} (exclusive; NULL: shown now), in the run log's
     * clock. Rows with {@code itersnap_known_from <= K} and ({@code itersnap_known_to} NULL or {@code > K}) are the
     * history as known at K ({@link KnownAt}); those with {@code itersnap_known_to} NULL are the history now. The
     * query reads the run log, the ledger and the superseded versions when it runs, so a view of it
     * ({@code createAsOfView}) stays right as runs go on. Needs one {@code sequence_by} column; no value.
     */
    record Bitemporal() implements AsOf {
        /** None: the relation holds every point of both timelines. */
        @Override
        public Object value() {
            return null;
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

    /**
     * The versions valid at business time {@code time} as the history stood at system time {@code knownAt}
     * ({@link KnownAt}; {@link Time#knownAt}).
     */
    static KnownAt timeKnownAt(Object time, Object knownAt) {
        return new KnownAt(Objects.requireNonNull(time, "time"), knownAt);
    }

    /** Every version of the history as it stood at system time {@code systemTime} ({@link KnownAt}). */
    static AsOf knownAt(Object systemTime) {
        return new KnownAt(null, systemTime);
    }

    /** Both timelines, business and system time, in one relation ({@link Bitemporal}). */
    static AsOf bitemporal() {
        return new Bitemporal();
    }

    /** As of a batch: a value of the sequence column's type or its text ({@code 2024-03-01}, {@code 42}). */
    static AsOf sequence(Object sequence) {
        return new Sequence(sequence);
    }
}
