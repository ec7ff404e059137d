package dev.itersnap.spi;

import javax.sql.DataSource;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;

/**
 * One SQL dialect: how itersnap talks to one kind of database, and only what databases really differ in. The engine
 * writes every step of a run itself (the batch rules live in the engine, in one place); a dialect supplies:
 * <ul>
 *   <li><b>identity</b>: {@link #name}, {@link #handlesUrl}, {@link #handlesProduct};</li>
 *   <li><b>capabilities</b> as data: {@link #capabilities} (which statement forms the engine picks);</li>
 *   <li><b>names and types</b>: {@link #quote}, {@link #identifierFolding}, {@link #columnType}, {@link #widens},
 *       {@link #valueBinder};</li>
 *   <li><b>the model lock</b>: {@link #lock}, {@link #lockState} (a row lock, an advisory lock, or the lease of
 *       {@link dev.itersnap.spi.lease.LeaseLock} where the database has no lock);</li>
 *   <li><b>the session and failures</b>: {@link #prepareRunConnection}, {@link #isWriteConflict},
 *       {@link #errorSummary}, {@link #damagedStorage};</li>
 *   <li><b>DDL</b> of the tables the lock and the engine own: {@link #createTable};</li>
 *   <li>optional <b>plan hints</b> ({@link #planHints}) and <b>diagnostics</b> for {@code doctor}
 *       ({@link #environmentChecks}, {@link #tableChecks}).</li>
 * </ul>
 * and the <b>SQL primitives</b> the engine's statements are written in ({@link #primitives}: an
 * {@link AbstractSqlDialect}, which a dialect usually extends: functions without a standard spelling, type names, DDL
 * spellings, listed there). Implementations are stateless and
 * thread-safe, found through {@link java.util.ServiceLoader} ({@code META-INF/services/dev.itersnap.spi.Dialect}).
 * Where a method receives the model, it is a {@link ModelView}: what a dialect reads of it, built by the engine.
 * Every statement is a {@link Statement} that carries its bound values: values from data are never spliced into SQL,
 * identifiers go through {@link #quote(String)}.
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
     * auto-commit, and the lease ({@link dev.itersnap.spi.lease.LeaseLock}) takes it for a lost race. Default:
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
     * Whether a failure says the database's own storage is damaged (its file, not the statement or the data), and if
     * so what a run reports instead of the driver's message: what is damaged, with the driver's words, and the
     * database's way to recover it. Running again cannot help such a run, so the error says so rather than quote, say,
     * a lock timeout the driver reported for it. Asked with the connection the failure came from (null when there is
     * none, e.g. the database would not open), which can tell the file. Default: null, not damage.
     */
    default String damagedStorage(SQLException failure, java.sql.Connection connection) {
        return null;
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
    default List<dev.itersnap.core.Check> tableChecks(java.sql.Connection connection, ModelView m)
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
    ModelLock lock(DataSource dataSource, ModelView m, Duration timeout, Supplier<String> describeHolder)
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

    // ---------------------------------------------------------------- plans

    /**
     * How this database's planner is helped to the plans the steps assume (probes of the source's indexes,
     * statistics of scratch tables once filled). Default: {@link PlanHints#NONE}, the statements as the engine
     * writes them.
     */
    default PlanHints planHints() {
        return PlanHints.NONE;
    }

    // ---------------------------------------------------------------- SQL primitives

    /**
     * The SQL primitives the engine writes its statements in ({@link AbstractSqlDialect}: names, types, functions
     * without a standard spelling, DDL spellings). A dialect that extends {@link AbstractSqlDialect} returns itself
     * (its default there); one that does not returns an {@link AbstractSqlDialect} it delegates to. The two types
     * together are the contract: this interface is what the engine calls, {@link AbstractSqlDialect} what its
     * statements are written in; the engine never casts one to the other.
     */
    AbstractSqlDialect primitives();
}
