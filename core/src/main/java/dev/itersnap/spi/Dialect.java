package dev.itersnap.spi;

import dev.itersnap.core.AsOf;
import dev.itersnap.core.TableName;

import javax.sql.DataSource;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;

/**
 * One SQL dialect: how itersnap talks to one kind of database. Implementations are stateless and thread-safe, found
 * through {@link java.util.ServiceLoader} ({@code META-INF/services/dev.itersnap.spi.Dialect}) and usually extend
 * {@link AbstractSqlDialect}, overriding only what differs.
 *
 * <p>Four groups of methods: identity (which databases it handles); what the database can do, its names and types;
 * the model lock; and the SQL of each step of a run. Every statement is a {@link Statement} that carries its bound
 * values: values from data are never spliced into SQL, identifiers go through {@link #quote(String)}. The engine
 * runs the statements it gets, in the order documented here, and never edits them.
 */
public interface Dialect {
    // ---------------------------------------------------------------- identity

    /** Short name used in settings and messages: {@code h2}, {@code postgres}, {@code databricks}. */
    String name();

    /** True when this dialect handles the JDBC URL (e.g. {@code url.startsWith("jdbc:h2:")}). */
    boolean handlesUrl(String jdbcUrl);

    /** True when this dialect handles the {@code DatabaseMetaData.getDatabaseProductName()}. */
    boolean handlesProduct(String productName);

    // ---------------------------------------------------------------- the database: capabilities, names, types

    /** What the database can do; the shared SQL and the engine pick statement forms from it. */
    Capabilities capabilities();

    /**
     * How the database folds unquoted identifiers, when its JDBC driver does not report it right (the Databricks
     * driver reports mixed case while Unity Catalog stores names in lower case); null: as the driver's {@code
     * DatabaseMetaData} says.
     */
    default java.util.function.UnaryOperator<String> identifierFolding() {
        return null;
    }

    /** Quotes one identifier (already folded to the database's case). */
    String quote(String identifier);

    /** The DDL type for a column described by JDBC metadata, e.g. {@code VARCHAR(20)}. */
    String columnType(SourceColumn column);

    /** True when every value of type {@code from} fits, unchanged, in type {@code to}. */
    boolean widens(SourceColumn from, SourceColumn to);

    /**
     * How values are bound to this database's statements. Default: {@link SqlValues#bind}, each value through the
     * setter of its SQL type. A driver that refuses one of those setters (DuckDB's refuses {@code setObject(v,
     * Types.DATE)} and a {@code BigDecimal} of negative scale) gets a binder that binds that type otherwise and hands
     * every other value to {@link SqlValues#bind}.
     */
    default ValueBinder valueBinder() {
        return SqlValues::bind;
    }

    /**
     * Whether a failure is a write conflict of the database's concurrency control: the statement (or its transaction)
     * lost a race and committed nothing, so running it again later may succeed. The run retries such a statement in
     * auto-commit, and the lease ({@link LeaseLock}) takes it for a lost race. Default:
     * {@link WriteConflicts#standard} (Delta Lake's conflicts, a serialization failure, SQLState 40001).
     */
    default boolean isWriteConflict(Throwable failure) {
        return WriteConflicts.standard(failure);
    }

    /**
     * What itersnap's errors, which are one line, quote of a driver's failure. Default: the message's first line
     * ({@link DriverMessages#firstLine}). A driver that names the culprit on a later line (DuckDB names the file and
     * the line of a CSV error there) adds it.
     */
    default String errorSummary(SQLException failure) {
        return DriverMessages.firstLine(failure.getMessage());
    }

    /**
     * What this database's runtime must offer a run, checked on a connection before a first run ({@code
     * IterativeSnapshot.check}, {@code itersnap doctor}): runtime version, session settings such as the time zone.
     * Default: nothing beyond the generic checks.
     */
    default List<dev.itersnap.core.Check> environmentChecks(java.sql.Connection connection) throws SQLException {
        return List.of();
    }

    /**
     * What the database can tell about the model's tables that exist, as informational checks of {@code doctor}
     * (e.g. how many files a table is made of, for a database that needs maintenance). Never a failure for a table
     * that does not exist yet. Default: nothing.
     */
    default List<dev.itersnap.core.Check> tableChecks(java.sql.Connection connection, ResolvedModel m)
            throws SQLException {
        return List.of();
    }

    /**
     * Prepares the connection a run (or replay, adoption) works on, before it reads or writes anything: the session
     * settings the run depends on, set or, when the database refuses them, an {@link dev.itersnap.core.ItersnapException}
     * naming the setting. Called once per run, on a connection the run then keeps. Default: nothing.
     */
    default void prepareRunConnection(java.sql.Connection connection) throws SQLException {
    }

    // ---------------------------------------------------------------- the model lock

    /**
     * Takes the model's lock, waiting up to {@code timeout}; the lock is held until the returned handle is closed
     * and released by the database (or expires) if the process dies.
     *
     * @param describeHolder called after a timeout to name the current holder in the error message
     * @throws dev.itersnap.core.ItersnapException with code LOCK_TIMEOUT after the timeout
     */
    ModelLock lock(DataSource dataSource, ResolvedModel m, Duration timeout, Supplier<String> describeHolder)
            throws SQLException;

    /**
     * Whether a live process holds the lock of model {@code model} (metadata schema {@code metadata}) now, observed
     * on {@code connection} without waiting and without writing ({@code status}). Default: {@link LockState#unknown()}.
     */
    default LockState lockState(java.sql.Connection connection, MetadataSchema metadata, String model)
            throws SQLException {
        return LockState.unknown();
    }

    // ---------------------------------------------------------------- tables

    /**
     * The statements creating a table described as data: its schema first when {@link TableSpec#createSchema()},
     * then the table, then its indexes, leaving out what the database lacks ({@link Capabilities}).
     */
    List<Statement> createTable(TableSpec table);

    /** Adds a source column to a table of the model (the history, the archive or the pending table). */
    Statement addColumn(TableName table, SourceColumn column);

    /**
     * Adds a bookkeeping column of a logical type to an existing table (the meta columns a history adopted from
     * another tool lacks).
     */
    Statement addColumn(TableName table, String column, TableSpec.ColumnType type);

    /** Changes {@code column} of {@code table} to the type of {@code to} (a widening, see {@link #widens}). */
    Statement widenColumn(TableName table, String column, SourceColumn to);

    /**
     * What a table needs before a column of it is widened, run before every {@link #widenColumn} (so idempotent):
     * Delta Lake's type widening is a table feature that upgrades the table's protocol, so it is enabled only when a
     * column is about to be widened. Default: nothing.
     */
    default List<Statement> prepareWidening(TableName table) {
        return List.of();
    }

    /** A query returning no row whose result describes the relation's columns ({@code ... WHERE 1 = 0}). */
    Statement describe(Relation relation);

    /**
     * The {@link SequenceKey} of a {@code sequence_by} list over the columns {@code parts} of the row aliased
     * {@code alias}: the same text {@link SequenceKey#encode} gives for the row's values, NULL when one is NULL.
     */
    String sequenceKey(List<SourceColumn> parts, String alias);

    // ---------------------------------------------------------------- the steps of a run

    /**
     * Discover: the distinct sequences in the source, NULL included when some rows have none, one column. Nothing
     * else: a run counts and hashes only the batches it applies or checks ({@link #fingerprintSequences},
     * {@link #fingerprintStaged}), so discovery should cost what the distinct sequences cost (an index walk where the
     * database has one).
     */
    Statement discoverSequences(ResolvedModel m);

    /**
     * The fingerprints of the source's batches {@code sequences} (sequence values, bound; null: every batch), one
     * row per batch found: its sequence, its number of rows and, in a third column, the content hash of its rows,
     * computed by the database in the same statement (no row leaves it): the sum, as an exact integer
     * ({@code DECIMAL}, no overflow), of the distinct 64-bit hashes of the rows' canonical texts over {@code columns}
     * in the order given (each value as text, prefixed with its length; NULL distinct from an empty string). The sum
     * depends neither on the order of the rows nor on exact copies of a row. With {@code columns} null, or on a
     * database without a 64-bit hash, the statement has no third column (rows counted only).
     */
    Statement fingerprintSequences(ResolvedModel m, List<SourceColumn> columns, List<?> sequences);

    /**
     * Empties the run's scratch tables {@code tables} (they exist, in the shape this run needs) so that a run reuses
     * them instead of dropping and creating them: one statement or one per table. An empty list: the database
     * replaces its scratch tables instead (Delta's {@code CREATE OR REPLACE TABLE}, which is one commit anyway).
     */
    List<Statement> clearScratchTables(List<dev.itersnap.core.TableName> tables);

    /**
     * The distinct sequences that opened or closed a version of the history, among {@code sequences} (bound values,
     * possibly none) or at or after {@code from} (null: none): a probe of the history's indexes on the opened and
     * closed sequences that grows with the batches asked for, not with the history.
     */
    Statement historySequences(ResolvedModel m, List<?> sequences, Object from);

    /**
     * The format of this dialect's fingerprints (the row text it hashes and the hash): part of every fingerprint's
     * signature, so that fingerprints of another format are recorded again, never compared. Empty for the first one.
     */
    default String fingerprintFormat() {
        return "";
    }

    /**
     * As {@link #fingerprintSequences}, over the run's stage: the rows the run applies, read from the source once
     * (those reproduced from the history aside), so that the fingerprint a ledger entry records is that of exactly
     * the rows applied.
     */
    Statement fingerprintStaged(ResolvedModel m, List<SourceColumn> columns);

    /**
     * The check of a key-scoped replay, once it has staged the replayed batches' rows of the keys it recomputes
     * ({@code itersnap_from = 1} in the keys table): for each replayed batch {@code sequences} (bound values; null:
     * every replayed batch of the batches table), in one statement, rows {@code (sequence, content hash of the batch in
     * the source, content hash of its rows of those keys in the source, 'source')} and
     * {@code (sequence, NULL, content hash of its rows staged, 'stage')}; hashes as {@link #fingerprintSequences}
     * computes them over {@code columns}, NULL for none. The source's two hashes come from one snapshot, so the run can
     * tell whether the rows it staged are the batch's rows of those keys as the ledger recorded the batch. Default:
     * null, no check (a source that changes between the comparison and the staging can then leave those keys without
     * the batch's rows).
     */
    default Statement fingerprintReplayedKeys(ResolvedModel m, List<SourceColumn> columns, List<?> sequences) {
        return null;
    }

    /**
     * Stage: copies the source rows from sequence {@code from} on (and those without a sequence when
     * {@code includeNullSequence}) into the stage, marking NULL sequences, NULL keys, duplicates, exact copies and
     * NULL updated_at.
     */
    default Statement stageSource(ResolvedModel m, Object from, boolean includeNullSequence) {
        return stageSource(m, from, includeNullSequence, StageScope.ALL);
    }

    /**
     * Stage, as {@link #stageSource(ResolvedModel, Object, boolean)}, of the rows {@code scope} selects (NULL
     * sequences only with {@link StageScope#ALL} or {@link StageScope#FRESH}).
     */
    Statement stageSource(ResolvedModel m, Object from, boolean includeNullSequence, StageScope scope);

    /**
     * Stage: copies the source rows without a sequence from the stage into the error log, once per record (a record
     * already logged is not logged again); its update count is the number logged.
     */
    Statement logNullSequences(ResolvedModel m, String runId, java.time.LocalDateTime loggedAt);

    /**
     * Stage: reproduces one batch that aged out of the source into the stage, from the history and the archive.
     *
     * @param notYetIntroduced columns introduced after this batch (reproduced as NULL)
     * @param fullPicture      true when the batch was a full picture with a deletion time: every version live
     *                         right after it was in it; otherwise only the versions it opened
     */
    Statement stageReproduced(ResolvedModel m, Object sequence, List<String> notYetIntroduced, boolean fullPicture);

    /** Roll back: the statements undoing what {@code rollback} names, in order. */
    List<Statement> rollback(ResolvedModel m, Rollback rollback);

    /**
     * Makes every open version (no closing sequence) carry in valid_to what the model's {@code valid_to_current}
     * says (NULL when unset): converts the history when the setting changed.
     */
    Statement markOpenVersions(ResolvedModel m);

    /**
     * Apply: the statements applying a run's batches from the stage to the history together, in a fixed number
     * whatever the number of batches.
     */
    ApplyStatements applyBatches(ResolvedModel m, BatchRun run);

    /**
     * Check: the keys, one row each (key columns in order), whose timeline is broken among the keys with a version
     * opened or closed from sequence {@code from} on: more than one current version, overlaps, or a closed version
     * whose end is not its successor's start.
     */
    Statement timelineCheck(ResolvedModel m, Object from);

    // ---------------------------------------------------------------- reading the history

    /**
     * A query over the history giving the state as of a business time or a batch, with the point written as a typed
     * literal (read through the column's type first), so that the text can define a view.
     *
     * @throws IllegalArgumentException when the point is not a value of the column's type
     */
    Statement asOf(ResolvedModel m, AsOf point);

    /** Creates a view {@code view} of {@code query}. */
    Statement createView(TableName view, Statement query);
}
