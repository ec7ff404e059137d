package dev.itersnap.internal;

import dev.itersnap.spi.ValueType;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Objects;

/**
 * A sequence value with its type: compared typed (numbers as numbers, strings by code point), stored as text. For a
 * {@code sequence_by} list the value is the tuple's {@link SequenceKey} (what the engine's SQL binds and compares),
 * its text the readable tuple {@code (2024-01-05, 3)} and {@link #shown()} the list of values.
 */
record Seq(ValueType type, SequenceKey key, Object value) implements Comparable<Seq> {
    Seq {
        value = type.normalize(value);
    }

    /** A value of one sequence column (no list). */
    Seq(ValueType type, Object value) {
        this(type, null, value);
    }

    /**
     * A value as the database gives it (for a list, the key its SQL computed: it must read back as values whose key
     * is itself, or the database's key and the engine's would disagree; refused with INVALID_SEQUENCE otherwise).
     */
    static Seq of(ResolvedModel m, Object value) {
        SequenceKey key = m.sequenceKey();
        if (key != null && value != null) {
            String read = null;
            try {
                read = key.encode(key.decode((String) value));
            } catch (RuntimeException e) {
                // reported below
            }
            if (!value.equals(read)) {
                throw new dev.itersnap.core.ItersnapException(dev.itersnap.core.ErrorCode.INVALID_SEQUENCE, "model '"
                        + m.name() + "': the database computed the sequence key '" + SequenceKey.printable(
                        (String) value) + "' for " + m.sequenceDescription() + ", which does not read back as the "
                        + "values it stands for; nothing was written. Cast the columns of the list in the source "
                        + "query to plain DATE, TIMESTAMP, integer, DECIMAL(p <= 18) or string types");
            }
        }
        return new Seq(m.sequenceType(), key, value);
    }

    /** Column {@code i} of a result set holding sequences. */
    static Seq read(ResolvedModel m, ResultSet rs, int i) throws SQLException {
        return of(m, m.sequenceType().read(rs, i));
    }

    /**
     * A sequence's canonical text ({@link #text()}: the ledger's, the error log's and the run log's form).
     *
     * @throws dev.itersnap.core.ItersnapException INCOMPATIBLE_SCHEMA_CHANGE when the metadata holds a batch that is
     *                                             no value of the current sequence_by (it changed its columns or kind)
     */
    static Seq parse(ResolvedModel m, String text) {
        try {
            return coerce(m, text);
        } catch (IllegalArgumentException e) {
            throw new dev.itersnap.core.ItersnapException(dev.itersnap.core.ErrorCode.INCOMPATIBLE_SCHEMA_CHANGE,
                    "model '" + m.name() + "': the metadata records batch '" + text + "', which is no value of "
                    + m.sequenceDescription() + " (" + e.getMessage() + "): sequence_by changed what a batch is "
                    + "since it was recorded; nothing was written. Set sequence_by back, or build a new table from "
                    + "the batches the source holds (full-refresh --yes with a new target)", e);
        }
    }

    /**
     * A sequence a user names: canonical text or a Java value of a compatible type (for a list: a {@code List} of
     * values, or text like {@code (2024-01-05, 3)}).
     *
     * @throws IllegalArgumentException when it cannot be read as the sequence's type
     */
    static Seq coerce(ResolvedModel m, Object value) {
        SequenceKey key = m.sequenceKey();
        if (key == null) {
            return new Seq(m.sequenceType(), m.sequenceType().coerce(value));
        }
        return new Seq(m.sequenceType(), key, key.keyOf(value));
    }

    String text() {
        return key == null ? type.format(value) : key.text(key.decode((String) value));
    }

    /** The value events, results and messages carry: the value, or for a list the list of its values. */
    Object shown() {
        return key == null || value == null ? value : key.decode((String) value);
    }

    @Override
    public int compareTo(Seq o) {
        return type.compare(value, o.value);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Seq s && Objects.equals(value, s.value);
    }

    @Override
    public int hashCode() {
        return Objects.hashCode(value);
    }

    @Override
    public String toString() {
        return text();
    }
}
