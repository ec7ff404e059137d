package dev.itersnap.spi;

import dev.itersnap.core.ColumnNames;
import dev.itersnap.core.TableName;

import java.util.List;

/**
 * What a dialect sees of a model the engine resolved against the database: its name, its tables, its key and
 * sequence columns. The engine hands one to {@link Dialect#lock}, {@link Dialect#tableChecks}, the {@link PlanHints}
 * and the primitives {@link AbstractSqlDialect#ordered} and {@link AbstractSqlDialect#keyJoin}; a dialect never builds
 * one. Every name is unquoted and already folded to the database's case; the dialect quotes it. Implementations are
 * immutable and thread-safe.
 */
public interface ModelView {
    /** The model's name (the lock's and the metadata's key). */
    String name();

    /** The metadata schema's tables and columns. */
    MetadataSchema metadata();

    /** The history table. */
    TableName target();

    /** Scratch table holding the run's source rows. */
    TableName stage();

    /** Scratch table holding the run's batches in order (its columns: {@link PlanHints#REPLAYED}, the sequence). */
    TableName batches();

    /** Scratch table holding the keys the run may change (its columns: the keys, {@link PlanHints#RECOMPUTED_FROM}). */
    TableName keysTable();

    /** Scratch table holding what the run does per key and batch. */
    TableName work();

    /** The model's archive: the versions a roll back removed, kept for a later replay. */
    TableName archive();

    /** The model's pending batches: the rows a replay that failed saved before its roll back. */
    TableName pending();

    /** Folds a name of the engine's own (a column of a scratch or metadata table, such as {@link PlanHints#REPLAYED}). */
    String id(String name);

    /** The key columns (source names). */
    List<String> keys();

    /** The source query's columns, in its order (source names). */
    List<String> sourceNames();

    /**
     * The column batches are ordered by (source name): the {@code sequence_by} column, or for a {@code sequence_by}
     * list the engine's own column holding the list's key (text whose code point order is the tuples' order).
     */
    String sequenceBy();

    /** The {@link #sequenceBy} column as the source describes it (for {@link AbstractSqlDialect#param}). */
    SourceColumn sequenceColumn();

    /** The type of the {@link #sequenceBy} column ({@link ValueType#STRING} for a {@code sequence_by} list). */
    ValueType sequenceType();

    /** The history's meta column names, folded. */
    ColumnNames meta();
}
