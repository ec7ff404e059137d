package dev.itersnap.internal;

import dev.itersnap.core.ColumnNames;
import dev.itersnap.core.HardDeletes;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.TableName;
import dev.itersnap.core.UntrackedColumns;
import dev.itersnap.spi.MetadataSchema;
import dev.itersnap.spi.ModelView;
import dev.itersnap.spi.SourceColumn;
import dev.itersnap.spi.ValueType;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.function.UnaryOperator;

/**
 * A model resolved against the database: settings, the source's columns with their real names, and every table and
 * column name folded to the database's case. Built by the engine once per run ({@link #builder}); the dialect sees it
 * as a {@link ModelView}. Immutable and thread-safe. All names here are unquoted; the dialect quotes them.
 */
public final class ResolvedModel implements ModelView {
    private final ModelSettings settings;
    private final UnaryOperator<String> fold;
    private final TableName target;
    private final MetadataSchema metadata;
    private final List<SourceColumn> sourceColumns;
    private final List<SourceColumn> historyOnly;
    private final List<String> keys;
    private final String updatedAt;
    private final String sequenceBy;
    private final List<String> sequenceParts;
    private final SequenceKey sequenceKey;
    private final List<String> tracked;
    private final ColumnNames meta;
    private final int maxIdentifierLength;
    /** Columns the source no longer has that this view treats as source columns ({@link #carrying}); empty else. */
    private final List<String> carried;
    /** The model this view was made from by {@link #carrying}, or null. */
    private final ResolvedModel base;

    /** The history table {@code settings} name, folded as the database folds unquoted names. */
    static TableName targetOf(ModelSettings settings, UnaryOperator<String> fold) {
        return new TableName(settings.target().parts().stream().map(fold).toList());
    }

    /** The metadata tables of {@code settings}' metadata schema, folded as the database folds unquoted names. */
    static MetadataSchema metadataOf(ModelSettings settings, UnaryOperator<String> fold) {
        return new MetadataSchema(fold.apply(settings.metadataSchema()), fold);
    }

    private ResolvedModel(Builder b) {
        this.settings = Objects.requireNonNull(b.settings, "settings");
        this.fold = b.fold;
        this.target = b.target != null ? b.target : targetOf(settings, fold);
        this.metadata = metadataOf(settings, fold);
        this.sourceColumns = List.copyOf(b.sourceColumns);
        this.historyOnly = List.copyOf(b.historyOnly);
        this.keys = List.copyOf(b.keys);
        this.updatedAt = Objects.requireNonNull(b.updatedAt, "updatedAt");
        this.sequenceBy = Objects.requireNonNull(b.sequenceBy, "sequenceBy");
        this.sequenceParts = b.sequenceParts == null ? List.of(sequenceBy) : List.copyOf(b.sequenceParts);
        this.tracked = List.copyOf(b.tracked);
        this.meta = b.meta != null ? b.meta : foldAll(ColumnNames.DEFAULTS, fold);
        this.maxIdentifierLength = b.maxIdentifierLength;
        this.carried = List.copyOf(b.carried);
        this.base = b.base;
        if (sourceColumn(updatedAt) == null || sourceColumn(sequenceBy) == null) {
            throw new IllegalArgumentException("updated_at and sequence_by must be source columns");
        }
        if (sequenceParts.size() > 1) {
            List<SourceColumn> parts = new java.util.ArrayList<>();
            for (String p : sequenceParts) {
                parts.add(Objects.requireNonNull(sourceColumn(p), "sequence_by column " + p));
            }
            this.sequenceKey = SequenceKey.of(parts);
        } else {
            this.sequenceKey = null;
        }
    }

    /**
     * Starts a model of {@code settings} on a database that folds unquoted identifiers with {@code fold}. Required:
     * {@link Builder#sourceColumns}, {@link Builder#keys}, {@link Builder#updatedAt}, {@link Builder#sequenceBy};
     * the target and the meta column names default to the settings' folded.
     */
    public static Builder builder(ModelSettings settings, UnaryOperator<String> fold) {
        return new Builder(settings, fold);
    }

    /** A builder holding this model's properties, to derive a model that differs in a few. */
    public Builder toBuilder() {
        Builder b = new Builder(settings, fold);
        b.target = target;
        b.sourceColumns = sourceColumns;
        b.historyOnly = historyOnly;
        b.keys = keys;
        b.updatedAt = updatedAt;
        b.sequenceBy = sequenceBy;
        b.sequenceParts = sequenceParts;
        b.tracked = tracked;
        b.meta = meta;
        b.maxIdentifierLength = maxIdentifierLength;
        b.carried = carried;
        b.base = base;
        return b;
    }

    /**
     * A view of this model in which {@code columns}, data columns of the history that the source no longer has, are
     * source columns again: a replay reaching back to batches applied while the source had them stages them (the
     * engine fills their values from the history) and compares them as it did then. Each is placed among the source
     * columns where the history table has it ({@code historyOrder}: the history's data columns in table order), so
     * that {@code changed_attributes} lists them where it did; the source query gives them as NULL. Tracked when every
     * column is ({@code check_cols: all}). {@link #withoutCarried()} gives this model back.
     */
    public ResolvedModel carrying(List<SourceColumn> columns, List<String> historyOrder) {
        if (columns.isEmpty()) {
            return this;
        }
        ResolvedModel from = withoutCarried();
        List<SourceColumn> source = new ArrayList<>(from.sourceColumns);
        List<String> lowerOrder = historyOrder.stream().map(n -> n.toLowerCase(Locale.ROOT)).toList();
        List<SourceColumn> ordered = new ArrayList<>(columns);
        ordered.sort(java.util.Comparator.comparingInt(c -> lowerOrder.indexOf(c.name().toLowerCase(Locale.ROOT))));
        for (SourceColumn c : ordered) {
            int at = 0;
            int pos = lowerOrder.indexOf(c.name().toLowerCase(Locale.ROOT));
            for (int j = pos - 1; j >= 0 && at == 0; j--) {
                for (int k = 0; k < source.size(); k++) {
                    if (source.get(k).name().toLowerCase(Locale.ROOT).equals(lowerOrder.get(j))) {
                        at = k + 1;
                        break;
                    }
                }
            }
            source.add(at, c);
        }
        List<String> names = ordered.stream().map(c -> c.name().toLowerCase(Locale.ROOT)).toList();
        List<SourceColumn> rest = from.historyOnly.stream()
                .filter(h -> !names.contains(h.name().toLowerCase(Locale.ROOT))).toList();
        List<String> trackedNow = new ArrayList<>(from.tracked);
        if (settings.checkCols() == null) {
            trackedNow.clear();
            for (SourceColumn col : source) {
                String n = col.name();
                if (!from.keys.contains(n) && !n.equals(from.updatedAt) && !from.isSequenceColumn(n)) {
                    trackedNow.add(n);
                }
            }
        }
        Builder b = from.toBuilder().sourceColumns(source).historyOnly(rest).tracked(trackedNow);
        b.carried = ordered.stream().map(SourceColumn::name).toList();
        b.base = from;
        return b.build();
    }

    /** The columns this view carries ({@link #carrying}) in history order; empty for a model as resolved. */
    public List<String> carried() {
        return carried;
    }

    /** The model without the carried columns: this one when it carries none. */
    public ResolvedModel withoutCarried() {
        return base == null ? this : base;
    }

    /** The validated settings. */
    public ModelSettings settings() {
        return settings;
    }

    /** Folds an identifier the way the database folds unquoted identifiers. */
    public UnaryOperator<String> fold() {
        return fold;
    }

    /** Model name. */
    @Override
    public String name() {
        return settings.name();
    }

    /** The history table. */
    @Override
    public TableName target() {
        return target;
    }

    /** Schema of the ledger, run log, error log, column registry and the model's working tables, folded. */
    public String metadataSchema() {
        return metadata.schema();
    }

    /** The metadata schema's tables and columns. */
    @Override
    public MetadataSchema metadata() {
        return metadata;
    }

    /** Scratch table holding the run's source rows. */
    @Override
    public TableName stage() {
        return modelTable("itersnap_stage_");
    }

    /** Scratch table holding the run's batches in order (the engine's {@code ModelTables.batches()}). */
    @Override
    public TableName batches() {
        return modelTable("itersnap_batches_");
    }

    /** Scratch table holding the keys the run may change (the engine's {@code ModelTables.keys()}). */
    @Override
    public TableName keysTable() {
        return modelTable("itersnap_keys_");
    }

    /** Scratch table holding what the run does per key and batch (the engine's {@code ModelTables.work()}). */
    @Override
    public TableName work() {
        return modelTable("itersnap_work_");
    }

    /** The model's archive (the engine's {@code ModelTables.archive()}). */
    @Override
    public TableName archive() {
        return modelTable("itersnap_archive_");
    }

    /**
     * The values of carried columns a replay saved before its roll back, on a database without transactions (the
     * engine's {@code ModelTables.carriedValues()}).
     */
    public TableName carriedValues() {
        return modelTable("itersnap_carried_");
    }

    /** The model's pending batches (the engine's {@code ModelTables.pending()}). */
    @Override
    public TableName pending() {
        return modelTable("itersnap_pending_");
    }

    private TableName modelTable(String prefix) {
        return metadata.tableNamed(fit(prefix + name()));
    }

    /** The longest identifier the database accepts (0: unknown); see {@link dev.itersnap.spi.Capabilities#maxIdentifierLength()}. */
    public int maxIdentifierLength() {
        return maxIdentifierLength;
    }

    /**
     * A derived identifier (a working table, an index), folded, that fits the database's limit: as it is when it
     * fits, otherwise cut and ended with {@code _} and 8 hex digits of its SHA-256, so that two long names that share
     * a beginning stay two names. Stable: the same name always gives the same identifier.
     */
    public String fit(String name) {
        String folded = fold.apply(name);
        if (maxIdentifierLength <= 0 || folded.length() <= maxIdentifierLength) {
            return folded;
        }
        try {
            byte[] h = java.security.MessageDigest.getInstance("SHA-256")
                    .digest(folded.getBytes(java.nio.charset.StandardCharsets.UTF_8));
            String hash = fold.apply(java.util.HexFormat.of().formatHex(h, 0, 4));
            return folded.substring(0, maxIdentifierLength - 9) + fold.apply("_") + hash;
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Folds an internal identifier (column of a metadata or scratch table). */
    @Override
    public String id(String name) {
        return fold.apply(name);
    }

    /** The source query's columns, in its order. */
    public List<SourceColumn> sourceColumns() {
        return sourceColumns;
    }

    /** Data columns of the history table that the source no longer has. */
    public List<String> historyOnly() {
        return historyOnly.stream().map(SourceColumn::name).toList();
    }

    /** The history-only data columns as the history table describes them. */
    public List<SourceColumn> historyOnlyColumns() {
        return historyOnly;
    }

    /** Every data column of the history table, described: source columns then history-only ones. */
    public List<SourceColumn> historyDataSourceColumns() {
        List<SourceColumn> all = new ArrayList<>(sourceColumns);
        all.addAll(historyOnly);
        return all;
    }

    /** Key columns (source names). */
    @Override
    public List<String> keys() {
        return keys;
    }

    /** The updated_at column (source name). */
    public String updatedAt() {
        return updatedAt;
    }

    /** The sequence_by column (source name). */
    @Override
    public String sequenceBy() {
        return sequenceBy;
    }

    /** Tracked columns (source names, source order). */
    public List<String> tracked() {
        return tracked;
    }

    /** Meta column names, folded. */
    @Override
    public ColumnNames meta() {
        return meta;
    }

    /**
     * The columns of a {@code sequence_by} list, in order ({@link #sequenceBy()} is then the engine's own column
     * {@code itersnap_sequence} holding their {@link SequenceKey}); the one sequence column otherwise.
     */
    public List<String> sequenceParts() {
        return sequenceParts;
    }

    /** The key of a {@code sequence_by} list; null for one sequence column. */
    public SequenceKey sequenceKey() {
        return sequenceKey;
    }

    /** Whether a source column orders the batches: the sequence column, or a column of a {@code sequence_by} list. */
    public boolean isSequenceColumn(String column) {
        return column.equals(sequenceBy) || sequenceParts.contains(column);
    }

    /**
     * sequence_by and its type, for messages: {@code sequence_by 'file_date' is DATE}, or for a list
     * {@code sequence_by [file_date, file_no] is (DATE, INTEGER)}.
     */
    public String sequenceDescription() {
        if (sequenceKey == null) {
            return "sequence_by '" + sequenceBy + "' is " + sequenceColumn().typeName();
        }
        return "sequence_by " + sequenceParts + " is (" + String.join(", ", sequenceParts.stream()
                .map(p -> sourceColumn(p).typeName()).toList()) + ")";
    }

    /** The sequence column's metadata. */
    @Override
    public SourceColumn sequenceColumn() {
        return sourceColumn(sequenceBy);
    }

    /** The updated_at column's metadata. */
    public SourceColumn updatedAtColumn() {
        return sourceColumn(updatedAt);
    }

    /** Source column names, in source order. */
    @Override
    public List<String> sourceNames() {
        return sourceColumns.stream().map(SourceColumn::name).toList();
    }

    /**
     * The columns of a row as the error log records it: the source query's own (without the key column a
     * {@code sequence_by} list adds), in source order.
     */
    public List<String> recordNames() {
        return sequenceKey == null ? sourceNames()
                : sourceColumns.stream().map(SourceColumn::name).filter(c -> !c.equals(sequenceBy)).toList();
    }

    /** Data columns of the history table: source columns then history-only ones. */
    public List<String> historyDataColumns() {
        List<String> all = new ArrayList<>(sourceNames());
        all.addAll(historyOnly());
        return all;
    }

    @Override
    public ValueType sequenceType() {
        return sequenceColumn().valueType();
    }

    public ValueType updatedAtType() {
        return updatedAtColumn().valueType();
    }

    /**
     * {@code valid_to_current} as a value of updated_at's type (a date alone stands for its midnight when updated_at
     * is a timestamp), or null when open versions carry NULL.
     *
     * @throws IllegalArgumentException when the literal is not a value of that type
     */
    public Object validToCurrent() {
        String v = settings.validToCurrent();
        if (v == null) {
            return null;
        }
        ValueType t = updatedAtType();
        if ((t == ValueType.TIMESTAMP || t == ValueType.TIMESTAMP_TZ) && v.matches("\\d{4}-\\d{2}-\\d{2}")) {
            v = v + "T00:00:00" + (t == ValueType.TIMESTAMP_TZ ? "Z" : "");
        }
        return t.coerce(v);
    }

    /**
     * {@code untracked_columns: overwrite}: the source columns a row whose tracked columns are unchanged updates in the
     * current version in place (every source column but the key, updated_at, sequence_by and the tracked ones); empty
     * otherwise.
     */
    public List<String> overwritten() {
        if (!overwritesUntracked()) {
            return List.of();
        }
        return sourceColumns.stream().map(SourceColumn::name).filter(c -> !keys.contains(c) && !c.equals(updatedAt)
                && !isSequenceColumn(c) && !tracked.contains(c)).toList();
    }

    /**
     * True under {@code untracked_columns: overwrite}, whether or not the source has an untracked column now: every
     * applied row is archived.
     */
    public boolean overwritesUntracked() {
        return settings.untrackedColumns() == UntrackedColumns.OVERWRITE;
    }

    /** True when the history carries deletion records ({@code hard_deletes: new_record}). */
    public boolean deletionRecords() {
        return settings.hardDeletes() == HardDeletes.NEW_RECORD;
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

    private static ColumnNames foldAll(ColumnNames names, UnaryOperator<String> fold) {
        var map = names.asMap();
        map.replaceAll((k, v) -> fold.apply(v));
        return ColumnNames.withOverrides(map);
    }

    /** Builds a {@link ResolvedModel}. Not thread-safe. */
    public static final class Builder {
        private final ModelSettings settings;
        private final UnaryOperator<String> fold;
        private TableName target;
        private List<SourceColumn> sourceColumns = List.of();
        private List<SourceColumn> historyOnly = List.of();
        private List<String> keys = List.of();
        private String updatedAt;
        private String sequenceBy;
        private List<String> sequenceParts;
        private List<String> tracked = List.of();
        private ColumnNames meta;
        private int maxIdentifierLength;
        private List<String> carried = List.of();
        private ResolvedModel base;

        private Builder(ModelSettings settings, UnaryOperator<String> fold) {
            this.settings = settings;
            this.fold = Objects.requireNonNull(fold, "fold");
        }

        /** The history table (default: the settings' target, folded). */
        public Builder target(TableName target) {
            this.target = target;
            return this;
        }

        public Builder sourceColumns(List<SourceColumn> columns) {
            this.sourceColumns = columns;
            return this;
        }

        /** Data columns of the history that the source no longer has, as the history describes them. */
        public Builder historyOnly(List<SourceColumn> columns) {
            this.historyOnly = columns;
            return this;
        }

        public Builder keys(List<String> keys) {
            this.keys = keys;
            return this;
        }

        public Builder updatedAt(String column) {
            this.updatedAt = column;
            return this;
        }

        /** The columns of a {@code sequence_by} list (the sequence column is then the key's own column). */
        public Builder sequenceParts(List<String> columns) {
            this.sequenceParts = columns;
            return this;
        }

        public Builder sequenceBy(String column) {
            this.sequenceBy = column;
            return this;
        }

        public Builder tracked(List<String> columns) {
            this.tracked = columns;
            return this;
        }

        /** The meta column names, already folded (default: the settings' column_names, folded). */
        public Builder meta(ColumnNames names) {
            this.meta = names;
            return this;
        }

        /** The database's identifier limit (default 0: unknown), which derived names are made to fit. */
        public Builder maxIdentifierLength(int length) {
            this.maxIdentifierLength = length;
            return this;
        }

        public ResolvedModel build() {
            return new ResolvedModel(this);
        }
    }
}
