package dev.itersnap.spi;

import dev.itersnap.core.ColumnNames;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.TableName;

import java.util.List;
import java.util.Locale;
import java.util.function.UnaryOperator;

/**
 * A model resolved against the database: settings, the source's columns with their real names, and every table and
 * column name folded to the database's case. Immutable; built by the engine once per run and handed to the dialect's
 * SQL methods. All names here are unquoted; the dialect quotes them.
 *
 * @param settings        the validated settings
 * @param fold            folds an identifier the way the database folds unquoted identifiers
 * @param target          the history table
 * @param metadataSchema  schema of the ledger, run log, error log, column registry and lock table
 * @param stage           scratch table holding the run's source rows
 * @param work            scratch table holding one batch's classified rows
 * @param sourceColumns   the source query's columns, in its order
 * @param historyOnly     data columns of the history table that the source no longer has
 * @param keys            key columns (source names)
 * @param updatedAt       the updated_at column (source name)
 * @param sequenceBy      the sequence_by column (source name)
 * @param tracked         tracked columns (source names, source order)
 * @param meta            meta column names, folded
 * @param sequenceColumn  the sequence column's metadata
 * @param updatedAtColumn the updated_at column's metadata
 */
public record ResolvedModel(ModelSettings settings, UnaryOperator<String> fold, TableName target,
                            String metadataSchema, TableName stage, TableName work, List<SourceColumn> sourceColumns,
                            List<String> historyOnly, List<String> keys, String updatedAt, String sequenceBy,
                            List<String> tracked, ColumnNames meta, SourceColumn sequenceColumn,
                            SourceColumn updatedAtColumn) {

    /** Model name. */
    public String name() {
        return settings.name();
    }

    /** A metadata table, e.g. {@code metaTable("itersnap_ledger")}. */
    public TableName metaTable(String table) {
        return new TableName(List.of(metadataSchema, fold.apply(table)));
    }

    /**
     * The model's archive: the rows of applied batches whose effect the history alone cannot reproduce (set-aside
     * rows, explicit deletes, rows that changed nothing but differ from the live version), so that a batch that
     * aged out of the source can be replayed exactly.
     */
    public TableName archive() {
        return new TableName(List.of(metadataSchema, fold.apply("itersnap_archive_" + name())));
    }

    /**
     * The model's pending batches, used only where DML is not transactional: the staged rows of batches that aged out
     * of the source, saved before a replay rolls the history back over them, so that a run that fails in between
     * loses nothing (the next run finds them here). Empty between runs.
     */
    public TableName pending() {
        return new TableName(List.of(metadataSchema, fold.apply("itersnap_pending_" + name())));
    }

    /** Folds an internal identifier (column of a metadata or scratch table). */
    public String id(String name) {
        return fold.apply(name);
    }

    /** Source column names, in source order. */
    public List<String> sourceNames() {
        return sourceColumns.stream().map(SourceColumn::name).toList();
    }

    /** Data columns of the history table: source columns then history-only ones. */
    public List<String> historyDataColumns() {
        List<String> all = new java.util.ArrayList<>(sourceNames());
        all.addAll(historyOnly);
        return all;
    }

    public ValueType sequenceType() {
        return sequenceColumn.valueType();
    }

    public ValueType updatedAtType() {
        return updatedAtColumn.valueType();
    }

    /** True when the history carries deletion records ({@code hard_deletes: new_record}). */
    public boolean deletionRecords() {
        return settings.hardDeletes() == dev.itersnap.core.HardDeletes.NEW_RECORD;
    }

    /** The source column called {@code name} (case-insensitive), or null. */
    public SourceColumn sourceColumn(String name) {
        for (SourceColumn c : sourceColumns) {
            if (c.name().toLowerCase(Locale.ROOT).equals(name.toLowerCase(Locale.ROOT))) {
                return c;
            }
        }
        return null;
    }
}
