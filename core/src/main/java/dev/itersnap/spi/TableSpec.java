package dev.itersnap.spi;

import dev.itersnap.core.TableName;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A table described once, as data: name, columns with their types, primary key and indexes, and how it is created.
 * {@link Dialect#createTable} renders it, leaving out what the database lacks ({@link Capabilities#primaryKeys()},
 * {@link Capabilities#indexes()}). All names are unquoted and already folded to the database's case. Immutable.
 *
 * @param name         the table
 * @param creation     how it is created
 * @param createSchema whether its schema is created first ({@code IF NOT EXISTS}), when the name has one
 * @param columns      its columns, in order
 * @param primaryKey   the primary key's columns (empty: none)
 * @param indexes      secondary indexes, created with the table
 * @param widenable    whether its columns may later be widened in place ({@link AbstractSqlDialect#prepareWidening} runs
 *                     before the first widening)
 * @param writers      who writes it at the same time, for databases whose concurrency control is optimistic
 */
public record TableSpec(TableName name, Creation creation, boolean createSchema, List<Column> columns,
                        List<String> primaryKey, List<Index> indexes, boolean widenable, Writers writers) {

    /**
     * Who writes a table at the same time. Databases with optimistic concurrency (Delta Lake) create a table for it:
     * row-level conflict detection where writers touch different rows, file-level where a race must conflict.
     */
    public enum Writers {
        /** One run of one model at a time (the model's working tables). */
        ONE,
        /**
         * Runs of several models or maintenance (OPTIMIZE) at the same time, on different rows: the metadata tables
         * every model of the schema shares, and the history.
         */
        MANY,
        /**
         * A lock or lease table: two runs inserting the same model's first row at the same time must conflict, so
         * that only one of them gets the row.
         */
        MUTEX
    }

    /** How a table is created. */
    public enum Creation {
        /** {@code CREATE TABLE}: the caller knows it does not exist. */
        NEW,
        /** {@code CREATE TABLE IF NOT EXISTS}, its indexes likewise. */
        IF_NOT_EXISTS,
        /** A scratch table, emptied and reshaped by every run: replaced (or dropped and created). */
        SCRATCH
    }

    /**
     * One column.
     *
     * @param name    unquoted, folded
     * @param type    its type
     * @param notNull whether it is declared NOT NULL
     */
    public record Column(String name, ColumnType type, boolean notNull) {
    }

    /**
     * A secondary index.
     *
     * @param name    unquoted, folded, without schema (the dialect qualifies it where its database needs that)
     * @param columns its columns, in order
     */
    public record Index(String name, List<String> columns) {
        public Index {
            columns = List.copyOf(columns);
        }
    }

    /**
     * A column type, rendered by the dialect: a logical type, or the type of a column JDBC described ({@link #like}).
     *
     * @param kind   the logical type
     * @param length the length of {@link Kind#TEXT}, else 0
     * @param like   the described column of {@link Kind#LIKE}, else null
     */
    public record ColumnType(Kind kind, int length, SourceColumn like) {
        /** Logical column types. */
        public enum Kind {
            /** Text of at most {@code length} characters. */
            TEXT,
            /** Text without a practical length limit (records, logic text). */
            LONG_TEXT,
            /** A JSON array of column names ({@code changed_attributes}). */
            JSON,
            /** 64-bit integer. */
            BIGINT,
            /** 32-bit integer. */
            INT,
            /** Boolean. */
            BOOLEAN,
            /** Timestamp without time zone. */
            TIMESTAMP,
            /** The type of a described column ({@link Dialect#columnType}). */
            LIKE
        }

        public static ColumnType text(int length) {
            return new ColumnType(Kind.TEXT, length, null);
        }

        public static ColumnType longText() {
            return new ColumnType(Kind.LONG_TEXT, 0, null);
        }

        public static ColumnType json() {
            return new ColumnType(Kind.JSON, 0, null);
        }

        public static ColumnType bigint() {
            return new ColumnType(Kind.BIGINT, 0, null);
        }

        public static ColumnType integer() {
            return new ColumnType(Kind.INT, 0, null);
        }

        public static ColumnType bool() {
            return new ColumnType(Kind.BOOLEAN, 0, null);
        }

        public static ColumnType timestamp() {
            return new ColumnType(Kind.TIMESTAMP, 0, null);
        }

        public static ColumnType like(SourceColumn column) {
            return new ColumnType(Kind.LIKE, 0, Objects.requireNonNull(column, "column"));
        }
    }

    public TableSpec {
        columns = List.copyOf(columns);
        primaryKey = List.copyOf(primaryKey);
        indexes = List.copyOf(indexes);
        writers = writers == null ? Writers.ONE : writers;
    }

    /** Starts the description of {@code name}. */
    public static Builder builder(TableName name, Creation creation) {
        return new Builder(name, creation);
    }

    /** The column called {@code name}, or null. */
    public Column column(String name) {
        for (Column c : columns) {
            if (c.name().equals(name)) {
                return c;
            }
        }
        return null;
    }

    /** Builds a {@link TableSpec}. */
    public static final class Builder {
        private final TableName name;
        private final Creation creation;
        private boolean createSchema;
        private final List<Column> columns = new ArrayList<>();
        private List<String> primaryKey = List.of();
        private final List<Index> indexes = new ArrayList<>();
        private boolean widenable;
        private Writers writers = Writers.ONE;

        private Builder(TableName name, Creation creation) {
            this.name = name;
            this.creation = creation;
        }

        public Builder createSchema() {
            this.createSchema = true;
            return this;
        }

        public Builder column(String name, ColumnType type) {
            columns.add(new Column(name, type, false));
            return this;
        }

        public Builder notNull(String name, ColumnType type) {
            columns.add(new Column(name, type, true));
            return this;
        }

        public Builder primaryKey(String... columns) {
            this.primaryKey = List.of(columns);
            return this;
        }

        public Builder index(String name, List<String> columns) {
            indexes.add(new Index(name, columns));
            return this;
        }

        public Builder widenable() {
            this.widenable = true;
            return this;
        }

        /** Who writes the table at the same time (default {@link Writers#ONE}). */
        public Builder writers(Writers writers) {
            this.writers = writers;
            return this;
        }

        public TableSpec build() {
            return new TableSpec(name, creation, createSchema, columns, primaryKey, indexes, widenable, writers);
        }
    }
}
