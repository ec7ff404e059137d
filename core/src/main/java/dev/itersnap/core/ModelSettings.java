package dev.itersnap.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * The settings of one model (see docs/settings.md). Immutable and thread-safe; built and validated by {@link #builder(String)}.
 * Every setting is checked in {@link Builder#build()}, before any SQL runs, and an invalid one fails with an
 * {@link ItersnapException} of code {@link ErrorCode#INVALID_SETTING} whose message names the setting.
 */
public final class ModelSettings {
    /** Default of {@code lock_timeout}. */
    public static final Duration DEFAULT_LOCK_TIMEOUT = Duration.ofMinutes(10);
    /** The newest applied batches every run compares with the source by default (dbt's microbatch lookback: 1). */
    public static final int DEFAULT_RESTATEMENT_LOOKBACK = 1;
    /** The older applied batches each run compares in turn by default. */
    public static final int DEFAULT_RESTATEMENT_SWEEP = 1;
    /** The most batches either setting may name (a run binds each compared batch's sequence). */
    public static final int MAX_RESTATEMENT_BATCHES = 1000;
    /** The longest model name (the metadata tables' model column holds 128 characters). */
    public static final int MAX_NAME_LENGTH = 128;
    /** Default of {@code metadata_schema}. */
    public static final String DEFAULT_METADATA_SCHEMA = "itersnap_metadata";

    private final String name;
    private final TableName target;
    private final String source;
    private final List<String> uniqueKey;
    private final String updatedAt;
    private final List<String> sequenceBy;
    private final Strategy strategy;
    private final List<String> checkCols;
    private final HardDeletes hardDeletes;
    private final String deleteWhen;
    private final ColumnNames columnNames;
    private final String metadataSchema;
    private final Duration lockTimeout;
    private final Restatements restatements;
    private final int restatementLookback;
    private final int restatementSweep;
    private final String validToCurrent;
    private final boolean ignoreNullUpdates;
    private final UntrackedColumns untrackedColumns;
    private final boolean keepSuperseded;
    private final Duration supersededRetention;

    private ModelSettings(Builder b) {
        this.name = b.name;
        this.target = b.target;
        this.source = b.source;
        this.uniqueKey = b.uniqueKey;
        this.updatedAt = b.updatedAt;
        this.sequenceBy = b.sequenceBy;
        this.strategy = b.strategy;
        this.checkCols = b.checkCols;
        this.hardDeletes = b.hardDeletes;
        this.deleteWhen = b.deleteWhen;
        this.columnNames = b.columnNames;
        this.metadataSchema = b.metadataSchema;
        this.lockTimeout = b.lockTimeout;
        this.restatements = b.restatements;
        this.restatementLookback = b.restatementLookback;
        this.restatementSweep = b.restatementSweep;
        this.validToCurrent = b.validToCurrent;
        this.ignoreNullUpdates = b.ignoreNullUpdates;
        this.untrackedColumns = b.untrackedColumns;
        this.keepSuperseded = b.keepSuperseded;
        this.supersededRetention = b.supersededRetention;
    }

    /**
     * Starts the settings of the model called {@code name} (the key of its ledger, lock and run log). Model names are
     * case-insensitive and kept in lower case.
     */
    public static Builder builder(String name) {
        return new Builder(name);
    }

    /** The model name ({@code name}): key of the ledger, the lock and the run log. */
    public String name() { return name; }
    /** The history table ({@code target}). */
    public TableName target() { return target; }
    /** The SELECT over the raw batches ({@code source}). */
    public String source() { return source; }
    /** The key columns ({@code unique_key}), one or more. */
    public List<String> uniqueKey() { return uniqueKey; }
    /** The business modification time column ({@code updated_at}). */
    public String updatedAt() { return updatedAt; }
    /**
     * The column naming the batch a row belongs to ({@code sequence_by}); for a list of columns, their names joined
     * by {@code ", "} (for messages: {@link #sequenceByColumns()} has them one by one).
     */
    public String sequenceBy() { return String.join(", ", sequenceBy); }
    /**
     * The columns that name the batch a row belongs to, in order: one, or several compared one after the other (the
     * first, then the next on a tie), each in its own type. One batch is one distinct combination of their values.
     */
    public List<String> sequenceByColumns() { return sequenceBy; }
    /** How a change is detected ({@code strategy}). */
    public Strategy strategy() { return strategy; }
    /** The tracked columns, or null for {@code all} (every source column but key, updated_at and sequence_by). */
    public List<String> checkCols() { return checkCols; }
    /** What happens to keys missing from a batch ({@code hard_deletes}). */
    public HardDeletes hardDeletes() { return hardDeletes; }
    /** The SQL predicate marking explicit deletes, or null. */
    public String deleteWhen() { return deleteWhen; }
    /** The meta column names, dbt's unless overridden ({@code column_names}). */
    public ColumnNames columnNames() { return columnNames; }
    /** The schema of the ledger, run log and error log ({@code metadata_schema}). */
    public String metadataSchema() { return metadataSchema; }
    /** How long a run waits for another run of the model ({@code lock_timeout}). */
    public Duration lockTimeout() { return lockTimeout; }
    /** Whether applied batches whose rows changed in the source are detected and replayed. */
    public Restatements restatements() { return restatements; }

    /**
     * How many of the newest applied batches every run compares with the source besides those it applies
     * ({@code restatement_lookback}, default {@value #DEFAULT_RESTATEMENT_LOOKBACK}): a restatement of one of them is
     * replayed by the next run.
     */
    public int restatementLookback() { return restatementLookback; }

    /**
     * How many older applied batches each run compares with the source, taking up where the previous run stopped
     * ({@code restatement_sweep}, default {@value #DEFAULT_RESTATEMENT_SWEEP}): every retained batch is compared within
     * a bounded number of runs. 0 turns the sweep off (only the lookback and a full check then find older restatements).
     */
    public int restatementSweep() { return restatementSweep; }
    /** The literal open versions carry in {@code dbt_valid_to} instead of NULL, or null (dbt 1.9's dbt_valid_to_current). */
    public String validToCurrent() { return validToCurrent; }
    /**
     * Whether a NULL in a non-key column of a row means "not supplied" ({@code ignore_null_updates}): the row takes
     * the value the key's current version has, and such a NULL is never a change.
     */
    public boolean ignoreNullUpdates() { return ignoreNullUpdates; }
    /**
     * Whether a repair (the roll back of a late or restated replay, {@code replay --from}, {@code full-refresh},
     * {@code adopt --rebuild-from}) first copies every version it deletes or changes, as it was, to the model's
     * {@code itersnap_superseded_<model>} table with the run that superseded it ({@code keep_superseded}; default
     * true), so that the history as known at an earlier moment can be read ({@link AsOf#timeKnownAt}).
     */
    public boolean keepSuperseded() { return keepSuperseded; }
    /**
     * How long what a repair superseded is kept ({@code superseded_retention}), or null (the default): for ever. A
     * repair deletes the superseded versions of the repairs that finished more than this before it, and the history
     * as known at a moment before the last of those can no longer be read (refused, never answered wrong).
     */
    public Duration supersededRetention() { return supersededRetention; }
    /**
     * What a row whose tracked columns are unchanged does to the columns {@code check_cols} does not track
     * ({@code untracked_columns}): nothing ({@code ignore}), or update them in the current version in place
     * ({@code overwrite}).
     */
    public UntrackedColumns untrackedColumns() { return untrackedColumns; }

    /**
     * The settings that decide what the history contains and where it lives, one {@code key: value} per line in a
     * fixed order: the model's logic. {@code target} and {@code metadata_schema} are part of it (in lower case, as
     * unquoted identifiers are case-insensitive); {@code lock_timeout} is not. A key that an older fingerprint lacks
     * is not a change.
     */
    public String logic() {
        return "source: " + source.replaceAll("\\s+", " ") + "\n"
                + "unique_key: " + uniqueKey + "\n"
                + "updated_at: " + updatedAt + "\n"
                + "sequence_by: " + sequenceByText() + "\n"
                + "strategy: " + strategy.name().toLowerCase(Locale.ROOT) + "\n"
                + "check_cols: " + (checkCols == null ? "all" : checkCols) + "\n"
                + "hard_deletes: " + hardDeletes.name().toLowerCase(Locale.ROOT) + "\n"
                + "delete_when: " + (deleteWhen == null ? "" : deleteWhen) + "\n"
                + "column_names: " + columnNames.asMap() + "\n"
                + "target: " + target.toString().toLowerCase(Locale.ROOT) + "\n"
                + "metadata_schema: " + metadataSchema.toLowerCase(Locale.ROOT) + "\n"
                + "valid_to_current: " + (validToCurrent == null ? "" : validToCurrent) + "\n"
                + "ignore_null_updates: " + ignoreNullUpdates + "\n"
                + "untracked_columns: " + untrackedColumns.name().toLowerCase(Locale.ROOT) + "\n";
    }

    @Override
    public String toString() {
        return "ModelSettings[name=" + name + ", target=" + target + ", unique_key=" + uniqueKey + ", updated_at="
                + updatedAt + ", sequence_by=" + sequenceByText() + ", strategy=" + strategy.name().toLowerCase(Locale.ROOT)
                + ", check_cols=" + (checkCols == null ? "all" : checkCols) + ", hard_deletes="
                + hardDeletes.name().toLowerCase(Locale.ROOT) + ", delete_when=" + deleteWhen
                + (validToCurrent == null ? "" : ", valid_to_current=" + validToCurrent)
                + (ignoreNullUpdates ? ", ignore_null_updates=true" : "")
                + (untrackedColumns == UntrackedColumns.OVERWRITE ? ", untracked_columns=overwrite" : "") + "]";
    }

    /** sequence_by as the logic and toString write it: the column, or the list {@code [a, b]}. */
    private String sequenceByText() {
        return sequenceBy.size() == 1 ? sequenceBy.get(0) : sequenceBy.toString();
    }

    /** The first word of SQL text in upper case, after comments; "(" for a parenthesised query. */
    private static String firstWord(String sql) {
        String s = sql;
        while (true) {
            s = s.stripLeading();
            if (s.startsWith("--")) {
                int nl = s.indexOf('\n');
                s = nl < 0 ? "" : s.substring(nl + 1);
            } else if (s.startsWith("/*")) {
                int end = s.indexOf("*/");
                s = end < 0 ? "" : s.substring(end + 2);
            } else {
                break;
            }
        }
        if (s.startsWith("(")) {
            return "(";
        }
        int i = 0;
        while (i < s.length() && Character.isLetter(s.charAt(i))) {
            i++;
        }
        return s.substring(0, i).toUpperCase(Locale.ROOT);
    }

    /** Collects settings; {@link #build()} validates them all. Not thread-safe; the result is. */
    public static final class Builder {
        private String name;
        private TableName target;
        private String targetText;
        private String source;
        private List<String> uniqueKey;
        private String updatedAt;
        private List<String> sequenceBy;
        private Strategy strategy = Strategy.CHECK;
        private List<String> checkCols;
        private HardDeletes hardDeletes = HardDeletes.IGNORE;
        private String deleteWhen;
        private Map<String, String> columnNameOverrides;
        private ColumnNames columnNames;
        private String metadataSchema = DEFAULT_METADATA_SCHEMA;
        private Duration lockTimeout = DEFAULT_LOCK_TIMEOUT;
        private Restatements restatements = Restatements.DETECT;
        private int restatementLookback = DEFAULT_RESTATEMENT_LOOKBACK;
        private int restatementSweep = DEFAULT_RESTATEMENT_SWEEP;
        private String validToCurrent;
        private boolean ignoreNullUpdates;
        private UntrackedColumns untrackedColumns = UntrackedColumns.IGNORE;
        private boolean keepSuperseded = true;
        private Duration supersededRetention;

        private Builder(String name) {
            this.name = name;
        }

        /** History table: {@code table}, {@code schema.table} or {@code catalog.schema.table}. Required. */
        public Builder target(String target) { this.targetText = target; return this; }
        /** A SELECT over the raw batches, every retained batch. Required. */
        public Builder source(String selectSql) { this.source = selectSql; return this; }
        /** One key column or several (composite key). Required. */
        public Builder uniqueKey(String... columns) { this.uniqueKey = columns == null ? null : java.util.Arrays.asList(columns); return this; }
        /** One key column or several (composite key). Required. */
        public Builder uniqueKey(List<String> columns) { this.uniqueKey = columns == null ? null : new ArrayList<>(columns); return this; }
        /** Business modification time of a record; becomes {@code dbt_valid_from}. Required. */
        public Builder updatedAt(String column) { this.updatedAt = column; return this; }
        /** The batch a row belongs to (DATE, TIMESTAMP, integer, decimal or string). Required. */
        public Builder sequenceBy(String column) { this.sequenceBy = column == null ? null : java.util.Collections.singletonList(column); return this; }
        /**
         * The batch a row belongs to, as several columns compared one after the other (the first, then the next on a
         * tie, each in its own type), like {@code [file_date, file_no]}; one batch is one distinct combination.
         */
        public Builder sequenceBy(List<String> columns) { this.sequenceBy = columns == null ? null : new ArrayList<>(columns); return this; }
        /** {@code check} (default) or {@code timestamp}. */
        public Builder strategy(Strategy strategy) { this.strategy = strategy; return this; }
        /** Tracked columns; null or never called means {@code all}. */
        public Builder checkCols(List<String> columns) { this.checkCols = columns == null ? null : new ArrayList<>(columns); return this; }
        /** Tracked columns. */
        public Builder checkCols(String... columns) { return checkCols(columns == null ? null : java.util.Arrays.asList(columns)); }
        /** {@code ignore} (default), {@code invalidate} or {@code new_record}. */
        public Builder hardDeletes(HardDeletes hardDeletes) { this.hardDeletes = hardDeletes; return this; }
        /** SQL predicate over a source row marking an explicit delete, e.g. {@code op = 'D'}. */
        public Builder deleteWhen(String predicate) { this.deleteWhen = predicate; return this; }
        /** Overrides of meta column names, keyed by default name ({@code dbt_valid_to}, ...). */
        public Builder columnNames(Map<String, String> overrides) { this.columnNameOverrides = overrides; return this; }
        /** Schema of the ledger, run log and error log; default {@code itersnap_metadata}. */
        public Builder metadataSchema(String schema) { this.metadataSchema = schema; return this; }
        /** How long a run waits for another run of the same model; default 10 minutes. */
        public Builder lockTimeout(Duration timeout) { this.lockTimeout = timeout; return this; }
        /** {@code detect} (default): applied batches whose rows changed are replayed; {@code ignore}: append-only. */
        public Builder restatements(Restatements restatements) { this.restatements = restatements; return this; }

        /** {@code restatement_lookback}: the newest applied batches every run compares (0 or more). */
        public Builder restatementLookback(int batches) { this.restatementLookback = batches; return this; }

        /** {@code restatement_sweep}: the older applied batches each run compares in turn (0 or more). */
        public Builder restatementSweep(int batches) { this.restatementSweep = batches; return this; }
        /**
         * A literal of updated_at's type (e.g. {@code 9999-12-31}) that open versions carry in {@code dbt_valid_to}
         * instead of NULL; null (default) keeps NULL.
         */
        public Builder validToCurrent(String literal) { this.validToCurrent = literal; return this; }
        /**
         * {@code true}: a NULL in a non-key column of a row means "not supplied" (partial-update change feeds): the
         * row takes the value of the key's current version, and such a NULL is never a change. Default false. Only
         * with {@code hard_deletes: ignore}, and with every column tracked ({@code strategy: check} without a
         * {@code check_cols} subset).
         */
        public Builder ignoreNullUpdates(boolean ignore) { this.ignoreNullUpdates = ignore; return this; }
        /**
         * {@code true} (default): every version a repair deletes or changes is first kept, as it was, in the model's
         * {@code itersnap_superseded_<model>} table with the run that superseded it, which the known-at read
         * ({@link AsOf#timeKnownAt}) needs. {@code false}: a repair keeps nothing (the history as known before a
         * repair can no longer be read); not a change of the model's logic.
         */
        public Builder keepSuperseded(boolean keep) { this.keepSuperseded = keep; return this; }
        /**
         * How long what a repair superseded is kept: a repair deletes, from the model's
         * {@code itersnap_superseded_<model>} table, what the repairs that finished more than {@code retention}
         * before it superseded, and the history as known at a moment before the last of those is then refused
         * ({@link AsOf#timeKnownAt}). Null (default): kept for ever. Positive; no effect while
         * {@link #keepSuperseded} is false. Not a change of the model's logic.
         */
        public Builder supersededRetention(Duration retention) { this.supersededRetention = retention; return this; }
        /**
         * {@code ignore} (default): a row whose tracked columns are unchanged changes nothing. {@code overwrite}: it
         * updates the columns {@code check_cols} does not track in the current version, in place. Only with
         * {@code strategy: check} and a {@code check_cols} list.
         */
        public Builder untrackedColumns(UntrackedColumns untracked) { this.untrackedColumns = untracked; return this; }

        /** Validates every setting and returns the immutable settings. */
        public ModelSettings build() {
            // model names are identifiers, so case-insensitive: 'Customers' and 'customers' are one model
            name = Settings.identifier("name", name).toLowerCase(Locale.ROOT);
            if (name.length() > MAX_NAME_LENGTH) {
                throw Settings.invalid("name", "is " + name.length() + " characters long; a model name has at most "
                        + MAX_NAME_LENGTH + " (the metadata tables store it)");
            }
            target = TableName.parse("target", targetText);
            if (source == null || source.isBlank()) {
                throw Settings.invalid("source", "is required (a SELECT over the raw batches)");
            }
            source = source.strip();
            while (source.endsWith(";")) {
                source = source.substring(0, source.length() - 1).strip();
            }
            if (source.contains(";")) {
                throw Settings.invalid("source", "must be a single SELECT without ';'");
            }
            String first = firstWord(source);
            if (!List.of("SELECT", "WITH", "VALUES", "TABLE", "(").contains(first)) {
                throw Settings.invalid("source", "must be a query (SELECT, WITH ... SELECT, VALUES or TABLE), got a "
                        + "statement starting with '" + first + "'");
            }
            uniqueKey = Settings.identifiers("unique_key", uniqueKey);
            Settings.identifier("updated_at", updatedAt);
            sequenceBy = Settings.identifiers("sequence_by", sequenceBy);
            if (strategy == null) {
                throw Settings.invalid("strategy", "is required: check or timestamp");
            }
            if (hardDeletes == null) {
                throw Settings.invalid("hard_deletes", "is required: ignore, invalidate or new_record");
            }
            for (String k : uniqueKey) {
                if (k.equalsIgnoreCase(updatedAt) || sequenceBy.stream().anyMatch(k::equalsIgnoreCase)) {
                    throw Settings.invalid("unique_key", "must not contain the updated_at or sequence_by column '" + k + "'");
                }
            }
            if (checkCols != null) {
                if (checkCols.size() == 1 && "all".equalsIgnoreCase(checkCols.get(0))) {
                    checkCols = null;
                } else if (strategy == Strategy.TIMESTAMP) {
                    throw Settings.invalid("check_cols", "applies to strategy check only; under strategy timestamp "
                            + "every column but unique_key, updated_at and sequence_by is tracked. Remove check_cols or "
                            + "use strategy check");
                } else {
                    checkCols = Settings.identifiers("check_cols", checkCols);
                    for (String c : checkCols) {
                        if (uniqueKey.stream().anyMatch(c::equalsIgnoreCase) || c.equalsIgnoreCase(updatedAt)
                                || sequenceBy.stream().anyMatch(c::equalsIgnoreCase)) {
                            throw Settings.invalid("check_cols", "must not list the key, updated_at or sequence_by column '" + c + "'");
                        }
                    }
                }
            }
            if (deleteWhen != null) {
                deleteWhen = deleteWhen.strip();
                if (deleteWhen.isEmpty()) {
                    deleteWhen = null;
                } else if (deleteWhen.contains(";")) {
                    throw Settings.invalid("delete_when", "must be a single SQL predicate without ';'");
                }
            }
            columnNames = ColumnNames.withOverrides(columnNameOverrides);
            if (metadataSchema == null || metadataSchema.isBlank()) {
                throw Settings.invalid("metadata_schema", "is required");
            }
            String[] metadataParts = metadataSchema.split("\\.", -1);
            if (metadataParts.length > 2) {
                throw Settings.invalid("metadata_schema", "expected schema or catalog.schema, got '" + metadataSchema
                        + "'");
            }
            for (int i = 0; i < metadataParts.length; i++) {
                metadataParts[i] = Settings.namePart("metadata_schema", metadataParts[i], metadataSchema);
            }
            metadataSchema = String.join(".", metadataParts); // backticks taken off: the parts hold no period
            if (restatements == null) {
                throw Settings.invalid("restatements", "is required: detect or ignore");
            }
            if (restatementLookback < 0 || restatementLookback > MAX_RESTATEMENT_BATCHES) {
                throw Settings.invalid("restatement_lookback", "expected a number of batches from 0 to "
                        + MAX_RESTATEMENT_BATCHES + ", got " + restatementLookback);
            }
            if (restatementSweep < 0 || restatementSweep > MAX_RESTATEMENT_BATCHES) {
                throw Settings.invalid("restatement_sweep", "expected a number of batches from 0 to "
                        + MAX_RESTATEMENT_BATCHES + ", got " + restatementSweep);
            }
            if (validToCurrent != null) {
                validToCurrent = validToCurrent.strip();
                if (validToCurrent.startsWith("'") && validToCurrent.endsWith("'") && validToCurrent.length() > 1) {
                    validToCurrent = validToCurrent.substring(1, validToCurrent.length() - 1).strip(); // dbt's quoting
                }
                if (!validToCurrent.matches("[0-9A-Za-z :.+\\-]{1,40}")) {
                    throw Settings.invalid("valid_to_current", "expected a date, time or number literal such as "
                            + "9999-12-31 (digits, letters, ' ', ':', '.', '+', '-'; at most 40), got '" + validToCurrent
                            + "'");
                }
            }
            if (untrackedColumns == null) {
                throw Settings.invalid("untracked_columns", "is required: ignore or overwrite");
            }
            if (untrackedColumns == UntrackedColumns.OVERWRITE) {
                if (strategy != Strategy.CHECK || checkCols == null) {
                    throw Settings.invalid("untracked_columns", "overwrite needs strategy: check and a check_cols "
                            + "list (the columns it names are tracked; the others are overwritten in place), got "
                            + (strategy != Strategy.CHECK ? "strategy: timestamp" : "check_cols: all")
                            + ". Name the tracked columns in check_cols, or leave untracked_columns: ignore");
                }
                if (ignoreNullUpdates) {
                    throw Settings.invalid("untracked_columns", "overwrite cannot be combined with "
                            + "ignore_null_updates: true (which needs every column tracked). Choose one");
                }
            }
            if (ignoreNullUpdates) {
                if (hardDeletes.fullBatches()) {
                    throw Settings.invalid("ignore_null_updates", "cannot be true with hard_deletes: "
                            + hardDeletes.name().toLowerCase(Locale.ROOT) + ": a batch that holds every key's full "
                            + "picture has no unsupplied values (a NULL there is the value). Use hard_deletes: ignore "
                            + "for a change feed, or leave ignore_null_updates false");
                }
                if (strategy != Strategy.CHECK || checkCols != null) {
                    throw Settings.invalid("ignore_null_updates", "needs every column tracked (strategy: check, "
                            + "check_cols: all): with " + (strategy != Strategy.CHECK ? "strategy: timestamp"
                            + " a row that is not newer is no change, so" : "a check_cols subset") + " the value a "
                            + "NULL stands for would depend on how the batches were split into runs. Use strategy "
                            + "check without check_cols, or leave ignore_null_updates false");
                }
            }
            if (lockTimeout == null || lockTimeout.isNegative()) {
                throw Settings.invalid("lock_timeout", "expected a duration of zero or more, got " + lockTimeout);
            }
            if (supersededRetention != null && (supersededRetention.isNegative() || supersededRetention.isZero())) {
                throw Settings.invalid("superseded_retention", "expected a positive duration (or none: kept for "
                        + "ever), got " + supersededRetention);
            }
            for (String meta : columnNames.asMap().values()) {
                List<String> user = new ArrayList<>(uniqueKey);
                user.add(updatedAt);
                user.addAll(sequenceBy);
                if (checkCols != null) {
                    user.addAll(checkCols);
                }
                for (String u : user) {
                    if (u.equalsIgnoreCase(meta)) {
                        throw Settings.invalid("column_names", "meta column '" + meta
                                + "' collides with a source column; rename it through column_names");
                    }
                }
            }
            Objects.requireNonNull(columnNames);
            return new ModelSettings(this);
        }
    }
}
