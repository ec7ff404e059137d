package dev.itersnap.spi;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import javax.sql.DataSource;

/**
 * One SQL dialect: how itersnap talks to one kind of database. Implementations are stateless and thread-safe, found
 * through {@link java.util.ServiceLoader} ({@code META-INF/services/dev.itersnap.spi.Dialect}) and usually extend
 * {@link AbstractSqlDialect}, overriding only what differs.
 *
 * <p>Three groups of methods: identity (which databases it handles), capabilities (what the database can do), and
 * SQL (one method per engine step; each returns the statement(s) with {@code ?} placeholders whose bind order the
 * method documents). Values from data are never spliced into SQL; identifiers go through {@link #quote(String)}.
 */
public interface Dialect {
    // ---- identity

    /** Short name used in settings and messages: {@code h2}, {@code postgres}, {@code databricks}. */
    String name();

    /** True when this dialect handles the JDBC URL (e.g. {@code url.contains(":h2:")}). */
    boolean handlesUrl(String jdbcUrl);

    /** True when this dialect handles the {@code DatabaseMetaData.getDatabaseProductName()}. */
    boolean handlesProduct(String productName);

    // ---- capabilities

    /** True when DML is transactional, so a batch's writes and its ledger entry commit together. */
    default boolean transactionalDml() {
        return true;
    }

    // ---- identifiers and types

    /** Quotes one identifier (already folded to the database's case). */
    String quote(String identifier);

    /** The DDL type for a column described by JDBC metadata, e.g. {@code VARCHAR(20)}. */
    String columnType(SourceColumn column);

    /** True when every value of type {@code from} fits, unchanged, in type {@code to}. */
    boolean widens(SourceColumn from, SourceColumn to);

    /** The statement that changes {@code column} of {@code table} to the type of {@code to} (a widening). */
    String widenColumn(dev.itersnap.core.TableName table, String column, SourceColumn to);

    // ---- locking

    /**
     * Takes the model's lock, waiting up to {@code timeout}; the lock is held until the returned handle is closed
     * and released by the database if the process dies.
     *
     * @param describeHolder called after a timeout to name the current holder in the error message
     * @throws dev.itersnap.core.ItersnapException with code LOCK_TIMEOUT after the timeout
     */
    ModelLock lock(DataSource dataSource, ResolvedModel m, Duration timeout,
                   java.util.function.Supplier<String> describeHolder) throws SQLException;

    // ---- SQL, one method per engine step

    /** Creates the metadata schema and tables if missing (ledger, runs, errors, columns, lock). */
    List<String> createMetadata(ResolvedModel m);

    /** Creates the history table and its indexes. */
    List<String> createHistory(ResolvedModel m);

    /** Adds a source column to a table of the model (the history or the archive). */
    String addColumn(ResolvedModel m, dev.itersnap.core.TableName table, SourceColumn column);

    /** Creates the model's archive table and its index if missing ({@link ResolvedModel#archive()}). */
    List<String> createArchive(ResolvedModel m);

    /** Drops and creates the run's scratch tables (stage and work). */
    List<String> createScratch(ResolvedModel m);

    /** {@code SELECT DISTINCT} of the sequence over the source. No binds. */
    String discoverSequences(ResolvedModel m);

    /**
     * Copies source rows into the stage, classifying NULL sequences, NULL keys, duplicates and NULL updated_at.
     * Binds: the lowest sequence to read (inclusive).
     */
    String stageSource(ResolvedModel m, boolean includeNullSequence);

    /**
     * Reproduces one aged-out batch into the stage from the history and the archive. Every bind is the batch's
     * sequence.
     *
     * @param notYetIntroduced columns introduced after this batch (reproduced as NULL)
     * @param fullPicture      true when the batch was a full picture with a deletion time: every version live
     *                         right after it was in it; otherwise only the versions it opened
     */
    String stageReproduced(ResolvedModel m, List<String> notYetIntroduced, boolean fullPicture);

    /** Statements undoing every batch from the bound sequence on (inclusive); a statement with a {@code ?} binds it. */
    List<String> rollback(ResolvedModel m, List<String> introducedColumns);

    /**
     * Classifies one batch of the stage into the work table. Binds: the batch's sequence. Rows whose action is
     * {@code noop} and that are neither set aside nor archived may be left out (nothing reads them; the engine counts
     * the batch's rows in the stage), except while {@code untracked} names a column being introduced.
     */
    String classifyBatch(ResolvedModel m, List<String> untracked);

    /** Copies the work table's rows that the history cannot reproduce into the archive. No binds. */
    String archiveBatch(ResolvedModel m);

    /** Copies set-aside rows of the work table into the error log. */
    String logRejected(ResolvedModel m);

    /** Copies rows with a NULL sequence from the stage into the error log, once per record. Binds: model, run id,
     * logged-at time, model. */
    String logNullSequences(ResolvedModel m);

    /** Fills a newly introduced column of the current versions from the work table. No binds. */
    String fillIntroduced(ResolvedModel m, String column);

    /** Closes current versions whose keys are absent from a full batch. */
    String closeAbsent(ResolvedModel m);

    /** Closes changed and deleted versions and inserts new ones, from the work table. */
    String mergeBatch(ResolvedModel m);

    /** Inserts deletion records for the versions the batch closed by deletion. */
    String insertDeletionRecords(ResolvedModel m);

    /**
     * Counts the batch in one query: the work table by reject reason and action (reason, action, rows, rows to archive,
     * so the engine skips the archive statement when there are none), plus one row whose reason is
     * {@link AbstractSqlDialect#SOURCE_ROWS} counting the batch's rows in the stage (the work table may leave out rows
     * that change nothing). Binds: the batch's sequence.
     */
    String countBatch(ResolvedModel m);

    /**
     * A query over the history giving the state as of a time ({@code bySequence} false: {@code literal} is a value of
     * updated_at's type) or as of a batch ({@code bySequence} true: a value of the sequence's type). No binds: the
     * value is a literal from {@link #literal}, so the query can define a view.
     */
    String asOf(ResolvedModel m, boolean bySequence, String literal);

    /** A typed SQL literal of a value read by {@link ValueType#coerce} (numbers, dates, times, strings escaped). */
    String literal(SourceColumn type, Object value);

    /** Finds timeline violations among the keys touched from the bound sequence on. */
    String timelineCheck(ResolvedModel m);

    /** Whether a table exists; the default asks JDBC metadata (names already folded). */
    default boolean tableExists(Connection c, dev.itersnap.core.TableName table) throws SQLException {
        String schema = table.schema() != null ? table.schema() : c.getSchema();
        String catalog = table.parts().size() == 3 ? table.parts().get(0) : null;
        try (var rs = c.getMetaData().getTables(catalog, schema, table.table(), null)) {
            return rs.next();
        }
    }
}
