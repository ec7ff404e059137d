package dev.itersnap.core;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * What {@code IterativeSnapshot.audit} checks: any SCD Type 2 table (one itersnap built, or a dbt snapshot), its key
 * and the names of its validity columns, and optionally the raw batches it was built from. Immutable; {@link
 * Builder#build()} validates every setting and names the one that is wrong.
 *
 * <pre>{@code
 * AuditSettings dbtSnapshot = AuditSettings.builder("analytics.customers_snapshot")
 *         .uniqueKey("customer_id")
 *         .validToCurrent("9999-12-31")         // dbt 1.9's dbt_valid_to_current, if the project sets it
 *         .build();
 * AuditSettings modelHistory = AuditSettings.of(customers); // a model's target, key and column names
 * }</pre>
 *
 * <p>Column names default to dbt's ({@code dbt_updated_at}, {@code dbt_valid_from}, {@code dbt_valid_to}, {@code
 * dbt_change_type}, {@code dbt_is_deleted}, {@code dbt_opened_seq}, {@code dbt_closed_seq}) and are matched against
 * the table's columns case-insensitively. The change type, deletion flag and opened- and closed-sequence columns are
 * read only where the table has them.
 */
public final class AuditSettings {
    /** Example rows a finding carries unless {@link Builder#examples(int)} says otherwise. */
    public static final int DEFAULT_EXAMPLES = 5;

    private final TableName table;
    private final List<String> uniqueKey;
    private final String updatedAt;
    private final String validFrom;
    private final String validTo;
    private final String validToCurrent;
    private final String changeType;
    private final String isDeleted;
    private final String openedSeq;
    private final String closedSeq;
    private final String source;
    private final String sequenceBy;
    private final String sourceUpdatedAt;
    private final int examples;

    private AuditSettings(Builder b, TableName table, String validToCurrent) {
        this.table = table;
        this.uniqueKey = List.copyOf(b.uniqueKey);
        this.updatedAt = b.updatedAt;
        this.validFrom = b.validFrom;
        this.validTo = b.validTo;
        this.validToCurrent = validToCurrent;
        this.changeType = b.changeType;
        this.isDeleted = b.isDeleted;
        this.openedSeq = b.openedSeq;
        this.closedSeq = b.closedSeq;
        this.source = b.source;
        this.sequenceBy = b.sequenceBy;
        this.sourceUpdatedAt = b.sourceUpdatedAt;
        this.examples = b.examples;
    }

    /** A builder for the table {@code table} ({@code table}, {@code schema.table} or {@code catalog.schema.table}). */
    public static Builder builder(String table) {
        return new Builder(table);
    }

    /**
     * The audit of a model's history: its target, key, meta column names and {@code valid_to_current}, without the
     * raw batches (what the command line's {@code adopt} checks before taking a table over).
     */
    public static AuditSettings of(ModelSettings model) {
        Objects.requireNonNull(model, "model");
        return builder(model.target().toString()).uniqueKey(model.uniqueKey()).columnNames(model.columnNames())
                .validToCurrent(model.validToCurrent()).build();
    }

    /** The table audited. */
    public TableName table() { return table; }

    /** Its key column(s). */
    public List<String> uniqueKey() { return uniqueKey; }

    /** The column with the source's modification time ({@code dbt_updated_at}). */
    public String updatedAt() { return updatedAt; }

    /** Start of validity ({@code dbt_valid_from}). */
    public String validFrom() { return validFrom; }

    /** End of validity ({@code dbt_valid_to}). */
    public String validTo() { return validTo; }

    /** The literal current versions carry in valid_to instead of NULL ({@code 9999-12-31}), or null. */
    public String validToCurrent() { return validToCurrent; }

    /** The change type column, read where the table has it ({@code dbt_change_type}). */
    public String changeType() { return changeType; }

    /** The deletion flag column, read where the table has it ({@code dbt_is_deleted}). */
    public String isDeleted() { return isDeleted; }

    /** The column naming the batch that opened a version, read where the table has it ({@code dbt_opened_seq}). */
    public String openedSeq() { return openedSeq; }

    /** The column naming the batch that closed a version, read where the table has it ({@code dbt_closed_seq}). */
    public String closedSeq() { return closedSeq; }

    /** A SELECT over the raw batches, or null (then there is no {@code missing_versions} check). */
    public String source() { return source; }

    /** The source column naming a row's batch, or null without a source. */
    public String sequenceBy() { return sequenceBy; }

    /** The source column that became the table's {@link #updatedAt()} ({@code updated_at}). */
    public String sourceUpdatedAt() { return sourceUpdatedAt; }

    /** How many example rows a finding carries at most. */
    public int examples() { return examples; }

    @Override
    public boolean equals(Object o) {
        return o instanceof AuditSettings a && table.equals(a.table) && uniqueKey.equals(a.uniqueKey)
                && updatedAt.equals(a.updatedAt) && validFrom.equals(a.validFrom) && validTo.equals(a.validTo)
                && Objects.equals(validToCurrent, a.validToCurrent) && changeType.equals(a.changeType)
                && isDeleted.equals(a.isDeleted) && openedSeq.equals(a.openedSeq) && closedSeq.equals(a.closedSeq) && Objects.equals(source, a.source)
                && Objects.equals(sequenceBy, a.sequenceBy) && sourceUpdatedAt.equals(a.sourceUpdatedAt)
                && examples == a.examples;
    }

    @Override
    public int hashCode() {
        return Objects.hash(table, uniqueKey, updatedAt, validFrom, validTo, validToCurrent, changeType, isDeleted,
                openedSeq, closedSeq, source, sequenceBy, sourceUpdatedAt, examples);
    }

    @Override
    public String toString() {
        return "AuditSettings[table=" + table + ", unique_key=" + uniqueKey + ", updated_at=" + updatedAt
                + ", valid_from=" + validFrom + ", valid_to=" + validTo
                + (validToCurrent == null ? "" : ", valid_to_current=" + validToCurrent)
                + (source == null ? "" : ", sequence_by=" + sequenceBy) + "]";
    }

    /** Builds {@link AuditSettings}; {@link #uniqueKey} is required. */
    public static final class Builder {
        private final String table;
        private List<String> uniqueKey = List.of();
        private String updatedAt = ColumnNames.DEFAULTS.updatedAt();
        private String validFrom = ColumnNames.DEFAULTS.validFrom();
        private String validTo = ColumnNames.DEFAULTS.validTo();
        private String validToCurrent;
        private String changeType = ColumnNames.DEFAULTS.changeType();
        private String isDeleted = ColumnNames.DEFAULTS.isDeleted();
        private String openedSeq = ColumnNames.DEFAULTS.openedSeq();
        private String closedSeq = ColumnNames.DEFAULTS.closedSeq();
        private String source;
        private String sequenceBy;
        private String sourceUpdatedAt = "updated_at";
        private int examples = DEFAULT_EXAMPLES;

        private Builder(String table) {
            this.table = table;
        }

        /** The key column(s). Required. */
        public Builder uniqueKey(String... columns) {
            this.uniqueKey = columns == null ? null : Arrays.asList(columns);
            return this;
        }

        /** The key columns. Required. */
        public Builder uniqueKey(List<String> columns) {
            this.uniqueKey = columns == null ? null : new ArrayList<>(columns);
            return this;
        }

        /** Default {@code dbt_updated_at}. */
        public Builder updatedAt(String column) { this.updatedAt = column; return this; }

        /** Default {@code dbt_valid_from}. */
        public Builder validFrom(String column) { this.validFrom = column; return this; }

        /** Default {@code dbt_valid_to}. */
        public Builder validTo(String column) { this.validTo = column; return this; }

        /**
         * The value current versions carry in valid_to instead of NULL: a date, time or number literal such as
         * {@code 9999-12-31} (quotes allowed). Default none: current versions have NULL.
         */
        public Builder validToCurrent(String literal) { this.validToCurrent = literal; return this; }

        /** Default {@code dbt_change_type}: a version whose value is {@code delete} was closed by a deletion. */
        public Builder changeType(String column) { this.changeType = column; return this; }

        /** Default {@code dbt_is_deleted}: a version whose value is true (or the text {@code True}) is a deletion record. */
        public Builder isDeleted(String column) { this.isDeleted = column; return this; }

        /** Default {@code dbt_opened_seq}: orders versions that start at the same time. */
        public Builder openedSeq(String column) { this.openedSeq = column; return this; }

        /**
         * Default {@code dbt_closed_seq}: the batch that closed a version (NULL while open); with the opened sequence it
         * lets the audit check the bookkeeping of an itersnap history.
         */
        public Builder closedSeq(String column) { this.closedSeq = column; return this; }

        /**
         * Every meta column name at once, as a model's {@code column_names} gives them (updated_at, validity, change
         * type, deletion flag, opened and closed sequence).
         */
        public Builder columnNames(ColumnNames names) {
            Objects.requireNonNull(names, "names");
            return updatedAt(names.updatedAt()).validFrom(names.validFrom()).validTo(names.validTo())
                    .changeType(names.changeType()).isDeleted(names.isDeleted()).openedSeq(names.openedSeq())
                    .closedSeq(names.closedSeq());
        }

        /**
         * The raw batches: a SELECT returning the key columns (under the names of {@link #uniqueKey}), the
         * {@link #sourceUpdatedAt} column and {@code sequenceBy}. With it the audit also runs {@code
         * missing_versions}: a (key, updated_at) of the raw batches that no version carries.
         */
        public Builder source(String sql, String sequenceBy) {
            this.source = sql;
            this.sequenceBy = sequenceBy;
            return this;
        }

        /** The source column that becomes the table's updated_at; default {@code updated_at}. */
        public Builder sourceUpdatedAt(String column) { this.sourceUpdatedAt = column; return this; }

        /** Example rows per finding, at most; default {@value AuditSettings#DEFAULT_EXAMPLES}, 0 for counts only. */
        public Builder examples(int rows) { this.examples = rows; return this; }

        /** Validates and builds; an {@link ItersnapException} ({@code INVALID_SETTING}) names a wrong setting. */
        public AuditSettings build() {
            TableName name = TableName.parse("table", table);
            if (uniqueKey == null || uniqueKey.isEmpty()) {
                throw Settings.invalid("unique_key", "is required (one column or a list of columns)");
            }
            for (String k : uniqueKey) {
                column("unique_key", k);
            }
            column("updated_at", updatedAt);
            column("valid_from", validFrom);
            column("valid_to", validTo);
            column("change_type", changeType);
            column("is_deleted", isDeleted);
            column("opened_seq", openedSeq);
            column("closed_seq", closedSeq);
            column("source_updated_at", sourceUpdatedAt);
            if ((source == null) != (sequenceBy == null)) {
                throw Settings.invalid("source", "and setting 'sequence_by' go together: the raw batches and the "
                        + "column naming a row's batch");
            }
            if (source != null) {
                if (source.isBlank()) {
                    throw Settings.invalid("source", "is blank; expected a SELECT over the raw batches");
                }
                column("sequence_by", sequenceBy);
            }
            if (examples < 0) {
                throw Settings.invalid("examples", "expected 0 or more, got " + examples);
            }
            return new AuditSettings(this, name, literal(validToCurrent));
        }

        private static void column(String setting, String name) {
            if (name == null || name.isBlank()) {
                throw Settings.invalid(setting, "is required (a column name)");
            }
        }

        /**
         * The literal without surrounding quotes, checked to be a date, time or number: it is written into the SQL
         * (as {@code CAST('...' AS type)}), so it may hold nothing else.
         */
        private static String literal(String value) {
            if (value == null) {
                return null;
            }
            String lit = value.strip();
            if (lit.length() > 1 && lit.startsWith("'") && lit.endsWith("'")) {
                lit = lit.substring(1, lit.length() - 1).strip();
            }
            if (!lit.matches("[0-9A-Za-z :.+\\-]{1,40}")) {
                throw Settings.invalid("valid_to_current", "expected a date, time or number literal such as "
                        + "9999-12-31, got '" + value + "'");
            }
            return lit;
        }
    }
}
