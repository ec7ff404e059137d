package dev.itersnap.core;

import java.util.List;
import java.util.Objects;

/**
 * A model as {@link dev.itersnap.IterativeSnapshot#validate} checked it against the database: its columns as the
 * database spells them, and the types that matter to it. The history's own columns are not read. Immutable.
 *
 * @param model         the model's name
 * @param uniqueKey     the key columns
 * @param updatedAt     the {@code updated_at} column
 * @param sequenceBy    the {@code sequence_by} column, or the columns of a {@code sequence_by} list, in order
 * @param sequenceTypes the kind of each {@code sequence_by} column as it orders batches, in the same order: {@code
 *                      date}, {@code timestamp}, {@code timestamp tz}, {@code integer}, {@code decimal} or {@code
 *                      string}
 * @param tracked       the tracked columns, in source order
 * @param sourceColumns the source query's columns, in its order, with the database's type names
 */
public record ValidatedModel(String model, List<String> uniqueKey, String updatedAt, List<String> sequenceBy,
                             List<String> sequenceTypes, List<String> tracked, List<Column> sourceColumns) {
    public ValidatedModel {
        Objects.requireNonNull(model, "model");
        Objects.requireNonNull(updatedAt, "updatedAt");
        uniqueKey = List.copyOf(uniqueKey);
        sequenceBy = List.copyOf(sequenceBy);
        sequenceTypes = List.copyOf(sequenceTypes);
        tracked = List.copyOf(tracked);
        sourceColumns = List.copyOf(sourceColumns);
    }

    /** Whether {@code sequence_by} is a list of columns (batches ordered by the first, then the next on a tie). */
    public boolean sequenceList() {
        return sequenceBy.size() > 1;
    }

    /**
     * One column of the source query.
     *
     * @param name the column's name, as the database spells it
     * @param type the database's name of its type ({@code DATE}, {@code VARCHAR}, {@code NUMERIC})
     */
    public record Column(String name, String type) {
        public Column {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(type, "type");
        }
    }
}
