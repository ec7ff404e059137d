package dev.itersnap.internal;

import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.core.TableName;
import dev.itersnap.spi.SourceColumn;
import dev.itersnap.spi.Statement;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.UnaryOperator;

/**
 * Runs statement values on one JDBC connection. Every failure becomes an {@link ItersnapException} naming the model,
 * the statement's step and its text. Values are always bound (by {@link Statement#prepare}).
 */
final class Jdbc {
    interface Row<T> {
        T map(ResultSet rs) throws SQLException;
    }

    private final Connection connection;
    private final String model;
    /** The dialect's binding and write-conflict recognition (the shared ones without a dialect). */
    private final dev.itersnap.spi.ValueBinder binder;
    private final java.util.function.Predicate<Throwable> conflict;
    private final java.util.function.Function<SQLException, String> summary;
    /** The dialect's sentence for a failure that says the database's storage is damaged, or null. */
    private final java.util.function.BiFunction<SQLException, Connection, String> damage;
    /** Writes attempted and rollbacks so far: a read taken at the same count still shows the database's state. */
    private long writes;
    /** {@link #writes} when this connection last committed or rolled back through this object. */
    private long settledAt;
    /** The run's scratch tables not created yet ({@link DeferredScratch}), or null. */
    private DeferredScratch scratch;
    /** Checked immediately before every write and commit (the model lock's verifyHeld while a run holds it). */
    private Runnable fence = () -> { };

    Jdbc(Connection connection, String model) {
        this(connection, model, null);
    }

    /** Binds values and recognises write conflicts as {@code dialect} says (null: the shared defaults). */
    Jdbc(Connection connection, String model, dev.itersnap.spi.Dialect dialect) {
        this.connection = connection;
        this.model = model;
        this.binder = dialect == null ? dev.itersnap.spi.SqlValues::bind : dialect.valueBinder();
        this.conflict = dialect == null ? dev.itersnap.spi.WriteConflicts::standard : dialect::isWriteConflict;
        this.summary = dialect == null ? e -> firstLine(e.getMessage()) : dialect::errorSummary;
        this.damage = dialect == null ? (e, c) -> null : dialect::damagedStorage;
    }

    Connection connection() {
        return connection;
    }

    /**
     * Runs a statement. A write conflict ({@code Dialect.isWriteConflict}: Delta Lake's {@code DELTA_CONCURRENT_...},
     * another model's run or an OPTIMIZE committed first) is retried, up to {@value #CONFLICT_ATTEMPTS} attempts in all, when
     * the connection is in auto-commit: the statement is then its own commit, a conflict means it committed nothing,
     * and the model lock keeps every other writer off this model's rows, so running it again is running it later.
     * Inside a transaction a conflict ends the transaction and is not retried.
     */
    int update(Statement s) {
        if (scratch == null) {
            return updateNow(s);
        }
        Statement routed = scratch.route(s, true, this::updateNow);
        try {
            return updateNow(routed);
        } catch (RuntimeException e) {
            if (routed != s && scratch.fellBack(routed, e, this::updateNow)) {
                return updateNow(s); // the table created empty: the INSERT as it was
            }
            throw e;
        }
    }

    /** {@link #update} without the deferral of scratch tables. */
    private int updateNow(Statement s) {
        writes++;
        for (int attempt = 1; ; attempt++) {
            fence.run();
            try (PreparedStatement ps = s.prepare(connection, binder)) {
                return ps.executeUpdate();
            } catch (SQLException e) {
                if (attempt < CONFLICT_ATTEMPTS && conflict.test(e) && autoCommit()) {
                    pauseAfterConflict(attempt);
                    continue;
                }
                throw failure(s.step(), s.sql(), e);
            }
        }
    }

    /** Attempts of a statement that keeps losing write conflicts. */
    static final int CONFLICT_ATTEMPTS = 5;

    private boolean autoCommit() {
        try {
            return connection.getAutoCommit();
        } catch (SQLException e) {
            return false;
        }
    }

    private static void pauseAfterConflict(int attempt) {
        long base = 100L << Math.min(attempt, 5);
        try {
            Thread.sleep(java.util.concurrent.ThreadLocalRandom.current().nextLong(base / 2, base + base / 2));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * How many writes were attempted (and rollbacks done) on this connection: a result read when the count was the
     * same is still what the database holds, since every write of a run goes through {@link #update}.
     */
    long writes() {
        return writes;
    }

    void updateAll(List<Statement> statements) {
        statements.forEach(this::update);
    }

    /** Like {@link #query}, reading at most the first row. */
    <T> List<T> queryFirst(Statement s, Row<T> row) {
        return query(s, 1, row);
    }

    <T> List<T> query(Statement s, Row<T> row) {
        return query(s, 0, row);
    }

    <T> List<T> query(Statement s, int maxRows, Row<T> row) {
        return query(s, maxRows, null, row);
    }

    /** What a query's result's columns say, read before its rows. */
    interface Columns {
        void read(ResultSetMetaData md) throws SQLException;
    }

    /** {@link #query}, with {@code columns} (null: none) reading the result's columns first, even with no row. */
    <T> List<T> query(Statement s, Columns columns, Row<T> row) {
        return query(s, 0, columns, row);
    }

    private <T> List<T> query(Statement s, int maxRows, Columns columns, Row<T> row) {
        if (scratch != null) {
            s = scratch.route(s, false, this::updateNow);
        }
        try (PreparedStatement ps = s.prepare(connection, binder)) {
            ps.setMaxRows(maxRows);
            List<T> out = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                if (columns != null) {
                    columns.read(rs.getMetaData());
                }
                // setMaxRows is a hint: DuckDB's driver (1.4) returns every row
                while ((maxRows == 0 || out.size() < maxRows) && rs.next()) {
                    out.add(row.map(rs));
                }
            }
            return out;
        } catch (SQLException e) {
            throw failure(s.step(), s.sql(), e);
        }
    }

    /** The columns of a query's result ({@code Dialect.describe}), as JDBC metadata reports them. */
    List<SourceColumn> describe(Statement s) throws SQLException {
        return describeWithRow(s).columns();
    }

    /** The columns of a query's result, and whether it returned a row. */
    record Described(List<SourceColumn> columns, boolean row) {
    }

    /** The columns of a query's result, as JDBC metadata reports them, and whether it returned a row (none read). */
    Described describeWithRow(Statement s) throws SQLException {
        if (scratch != null) {
            s = scratch.route(s, false, this::updateNow);
        }
        try (PreparedStatement ps = s.prepare(connection, binder)) {
            ps.setMaxRows(1);
            try (ResultSet rs = ps.executeQuery()) {
                ResultSetMetaData md = rs.getMetaData();
                List<SourceColumn> out = new ArrayList<>();
                for (int i = 1; i <= md.getColumnCount(); i++) {
                    out.add(new SourceColumn(md.getColumnLabel(i), md.getColumnType(i), md.getColumnTypeName(i),
                            md.getPrecision(i), md.getScale(i)));
                }
                return new Described(out, rs.next());
            }
        }
    }

    /** Whether a table exists, by JDBC metadata (names already folded). */
    boolean tableExists(TableName table) throws SQLException {
        String schema = table.schema() != null ? table.schema() : connection.getSchema();
        // the connection's current catalog for a one- or two-part name: a null catalog would match a table of the
        // same name in any catalog (Unity Catalog has many)
        String catalog = table.parts().size() == 3 ? table.parts().get(0) : connection.getCatalog();
        try (ResultSet rs = connection.getMetaData().getTables(catalog, schema, table.table(), null)) {
            return rs.next();
        }
    }

    /** How the database folds unquoted identifiers: as the dialect says, or else as JDBC metadata reports. */
    static UnaryOperator<String> folding(Connection c, dev.itersnap.spi.Dialect dialect) throws SQLException {
        UnaryOperator<String> own = dialect.identifierFolding();
        return own != null ? own : folding(c);
    }

    /** The comment of a table (JDBC metadata's REMARKS), or null. */
    String tableComment(TableName table) throws SQLException {
        String schema = table.schema() != null ? table.schema() : connection.getSchema();
        String catalog = table.parts().size() == 3 ? table.parts().get(0) : null;
        try (ResultSet rs = connection.getMetaData().getTables(catalog, schema, table.table(), null)) {
            while (rs.next()) { // '_' is a pattern character: only the exact name counts
                if (table.table().equals(rs.getString("TABLE_NAME"))) {
                    return rs.getString("REMARKS");
                }
            }
            return null;
        }
    }

    /** How the database folds unquoted identifiers, as JDBC metadata reports. */
    static UnaryOperator<String> folding(Connection c) throws SQLException {
        DatabaseMetaData md = c.getMetaData();
        if (md.storesUpperCaseIdentifiers()) {
            return s -> s.toUpperCase(Locale.ROOT);
        }
        if (md.storesLowerCaseIdentifiers()) {
            return s -> s.toLowerCase(Locale.ROOT);
        }
        return s -> s;
    }

    /**
     * Creates the run's scratch tables {@code deferred} when a statement first names them, the first {@code INSERT}
     * into one as the statement that creates it ({@link DeferredScratch}); null: none (any not created yet is not).
     */
    void deferScratch(DeferredScratch deferred) {
        this.scratch = deferred;
    }

    /**
     * Runs {@code check} immediately before every later write and commit on this connection (null: none). A run sets
     * its model lock's {@code verifyHeld} while it holds the lock: a run that has lost its lease (Delta Lake) stops
     * before its next statement, where each statement is its own commit (docs/semantics.md, "Runs").
     */
    void fence(Runnable check) {
        this.fence = check != null ? check : () -> { };
    }

    void commit(String step) {
        try {
            if (!connection.getAutoCommit()) {
                fence.run();
                connection.commit();
            }
            settledAt = writes;
        } catch (SQLException e) {
            throw failure(step, "COMMIT", e);
        }
    }

    /**
     * Whether a write on this connection may be uncommitted: one was attempted since the last commit or rollback made
     * here, outside auto-commit. A read that may fail ({@link #tryDescribeWithRow}) is only tried when not.
     */
    boolean uncommitted() {
        return writes != settledAt && !autoCommit();
    }

    /**
     * {@link #describeWithRow}, or null when the statement fails (a table it names does not exist): the failed
     * statement's transaction, which held no write ({@link #uncommitted} is false), is rolled back, so the database's
     * state and every read taken before still hold.
     */
    Described tryDescribeWithRow(Statement s) {
        if (uncommitted()) {
            throw new IllegalStateException("a read that may fail is tried after an uncommitted write");
        }
        try {
            return describeWithRow(s);
        } catch (SQLException | RuntimeException e) {
            rollbackTransaction(); // no write was in it: what was read before still holds
            return null;
        }
    }

    void rollbackQuietly() {
        writes++;
        settledAt = writes;
        rollbackTransaction();
    }

    /** Rolls back the open transaction, if any; a failure is ignored (the caller reports the original one). */
    private void rollbackTransaction() {
        try {
            if (!connection.isClosed() && !connection.getAutoCommit()) {
                connection.rollback();
            }
        } catch (SQLException ignored) {
            // the original failure is what the caller reports
        }
    }

    ItersnapException failure(String step, String sql, SQLException e) {
        String damaged = damage.apply(e, connection);
        if (damaged != null) { // not the statement's fault: the driver's SQLState (a lock timeout, say) would mislead
            return new ItersnapException(ErrorCode.DATABASE_ERROR, "model '" + model + "': step '" + step
                    + "' failed: " + damaged, step, sql, e);
        }
        return new ItersnapException(ErrorCode.DATABASE_ERROR, "model '" + model + "': step '" + step
                + "' failed: " + summary(e) + Jdbc.sqlState(e), step, sql, e);
    }

    /**
     * {@code " [SQLState X]"} for a message that quotes a driver's failure, or nothing when the driver gives no
     * SQLState (DuckDB: an error message never ends in {@code [SQLState null]}).
     */
    static String sqlState(SQLException e) {
        return e.getSQLState() == null ? "" : " [SQLState " + e.getSQLState() + "]";
    }

    /** What an error message quotes of a driver's failure ({@code Dialect.errorSummary}). */
    String summary(SQLException e) {
        return summary.apply(e);
    }

    /** The first line of a driver message, without a trailing "SQL statement:" that would dangle without its text. */
    static String firstLine(String s) {
        return dev.itersnap.spi.DriverMessages.firstLine(s);
    }
}
