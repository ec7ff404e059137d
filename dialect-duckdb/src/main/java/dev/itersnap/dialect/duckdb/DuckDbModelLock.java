package dev.itersnap.dialect.duckdb;

import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.spi.Dialect;
import dev.itersnap.spi.LockState;
import dev.itersnap.spi.MetadataSchema;
import dev.itersnap.spi.ModelLock;
import dev.itersnap.spi.ModelView;
import dev.itersnap.spi.Statement;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * The model lock on DuckDB: the model's row of the lock table, updated in a transaction that stays open, uncommitted,
 * on a connection of its own for the whole run.
 *
 * <p>What it guarantees: DuckDB lets one process at a time open a database file for writing (it locks the file), so
 * every run that can write the model's tables runs in that process, on connections to that one database instance
 * (in memory: {@code jdbc:duckdb:memory:NAME}, which connections of one process share). DuckDB's concurrency control
 * is optimistic: a second transaction that updates a row another open transaction updated fails at once with a write
 * conflict. The lock is that conflict: a second run's update of the row fails, and it tries again after a pause (50 ms
 * growing to 1 s) until {@code lock_timeout}. The update is never committed, so nothing of it reaches the file: the
 * lock is released when the run ends (rolled back), when its connection closes, and when the process dies. Not
 * covered: a database file on a file system without working file locks (some network file systems), where DuckDB
 * itself cannot keep a second process from writing.
 *
 * <p>The open transaction keeps DuckDB from checkpointing its write-ahead log while a run holds the lock; the next
 * commit after the run (or closing the database) checkpoints it.
 */
final class DuckDbModelLock implements ModelLock {
    private static final long FIRST_PAUSE_MS = 50;
    private static final long MAX_PAUSE_MS = 1_000;

    private final Connection connection;

    private DuckDbModelLock(Connection connection) {
        this.connection = connection;
    }

    /** Takes the lock of {@code m} (its row of {@link MetadataSchema#lock()}, created with the table on first use). */
    static ModelLock acquire(DataSource ds, Dialect dialect, ModelView m, Duration timeout,
                             Supplier<String> describeHolder) throws SQLException {
        Sql sql = new Sql(dialect, m.metadata());
        Connection c = ds.getConnection();
        try {
            String unshared = unsharedDatabase(c);
            if (unshared != null) {
                throw new ItersnapException(ErrorCode.INVALID_SETTING, "model '" + m.name() + "': " + unshared);
            }
            c.setAutoCommit(true);
            addRow(c, dialect, sql, m);
            c.setAutoCommit(false);
            long deadline = System.nanoTime() + timeout.toNanos();
            long pause = FIRST_PAUSE_MS;
            while (true) {
                try (PreparedStatement ps = c.prepareStatement("UPDATE " + sql.table + " SET " + sql.holder
                        + " = ?, " + sql.acquiredAt + " = CAST(now() AS TIMESTAMP) WHERE " + sql.model + " = ?")) {
                    ps.setString(1, "pid " + ProcessHandle.current().pid() + ", thread "
                            + Thread.currentThread().getName());
                    ps.setString(2, m.name());
                    ps.executeUpdate();
                    return new DuckDbModelLock(c);
                } catch (SQLException e) {
                    c.rollback();
                    if (!dialect.isWriteConflict(e)) {
                        throw e;
                    }
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new ItersnapException(ErrorCode.LOCK_TIMEOUT, "model '" + m.name()
                            + "' is locked by another run (" + describeHolder.get() + "); gave up after "
                            + ModelLock.describe(timeout) + " (lock_timeout). Wait for that run to finish, or raise "
                            + "lock_timeout");
                }
                sleep(Math.min(left / 1_000_000 + 1, ThreadLocalRandom.current().nextLong(pause / 2, pause + 1)));
                pause = Math.min(pause * 2, MAX_PAUSE_MS);
            }
        } catch (SQLException | RuntimeException e) {
            closeQuietly(c);
            throw e;
        }
    }

    /**
     * Refuses an unnamed in-memory database ({@code jdbc:duckdb:}, {@code jdbc:duckdb::memory:}), which DuckDB gives
     * every connection of its own: a run's lock and its work would each see a database of their own, and the history
     * would be written where nothing reads it again. Checked before the run writes anything.
     *
     * @return what is wrong, or null when the connections of the data source share the database
     */
    static String unsharedDatabase(Connection c) throws SQLException {
        String url = c.getMetaData().getURL();
        String database = url == null ? "" : url.split("[?;]", 2)[0];
        if (database.equals("jdbc:duckdb:") || database.equals("jdbc:duckdb::memory:")) {
            return database + " gives every connection an in-memory database of its own, and a run uses two "
                    + "connections (and the history would be gone with them): use a database file "
                    + "(jdbc:duckdb:/path/file.duckdb) or a named in-memory database (jdbc:duckdb:memory:NAME)";
        }
        return null;
    }

    /**
     * Adds the model's row to the lock table, creating the table on first use. Two first runs may race: a creation or
     * an insert that loses a write conflict is tried again; two rows of one model (DuckDB tables here have no primary
     * key) lock the same way, since the update takes every row of the model.
     */
    private static void addRow(Connection c, Dialect dialect, Sql sql, ModelView m) throws SQLException {
        String insert = "INSERT INTO " + sql.table + " (" + sql.model + ") SELECT ? WHERE NOT EXISTS (SELECT 1 FROM "
                + sql.table + " WHERE " + sql.model + " = ?)";
        for (int attempt = 1; ; attempt++) {
            try (PreparedStatement ps = c.prepareStatement(insert)) {
                ps.setString(1, m.name());
                ps.setString(2, m.name());
                ps.executeUpdate();
                return;
            } catch (SQLException e) {
                if (attempt == 5) {
                    throw e;
                }
                if (!dialect.isWriteConflict(e)) {
                    for (Statement s : dialect.createTable(m.metadata().lock().spec())) {
                        try (PreparedStatement ps = s.prepare(c, dialect.valueBinder())) {
                            ps.executeUpdate();
                        } catch (SQLException raced) {
                            e.addSuppressed(raced);
                        }
                    }
                } else {
                    sleep(ThreadLocalRandom.current().nextLong(10, 60));
                }
            }
        }
    }

    /**
     * Whether a live run holds the lock of {@code model}: the row updated in a transaction rolled back at once. A
     * write conflict means an open transaction of another connection holds it; nothing is written either way.
     */
    static LockState observe(Connection c, Dialect dialect, MetadataSchema metadata, String model)
            throws SQLException {
        Sql sql = new Sql(dialect, metadata);
        boolean autoCommit = c.getAutoCommit();
        try {
            c.setAutoCommit(false);
            try (PreparedStatement ps = c.prepareStatement("UPDATE " + sql.table + " SET " + sql.holder + " = "
                    + sql.holder + " WHERE " + sql.model + " = ?")) {
                ps.setString(1, model);
                ps.executeUpdate();
                return new LockState(LockState.Held.FREE, null);
            } catch (SQLException e) {
                if (dialect.isWriteConflict(e)) {
                    return new LockState(LockState.Held.HELD, null);
                }
                if (e.getMessage() != null && e.getMessage().contains("does not exist")) {
                    return new LockState(LockState.Held.FREE, null); // no lock table: no run ever held it
                }
                throw e;
            }
        } finally {
            c.rollback();
            c.setAutoCommit(autoCommit);
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ItersnapException(ErrorCode.LOCK_TIMEOUT, "interrupted while waiting for a model lock", e);
        }
    }

    private static void closeQuietly(Connection c) {
        try {
            c.close();
        } catch (SQLException ignored) {
            // the original failure matters
        }
    }

    @Override
    public void close() {
        try {
            connection.rollback();
        } catch (SQLException ignored) {
            // closing the connection releases the lock anyway
        }
        closeQuietly(connection);
    }

    /** The lock table's quoted names. */
    private static final class Sql {
        final String table;
        final String model;
        final String holder;
        final String acquiredAt;

        Sql(Dialect dialect, MetadataSchema metadata) {
            MetadataSchema.Lock lock = metadata.lock();
            table = lock.spec().name().parts().stream().map(dialect::quote).collect(Collectors.joining("."));
            model = dialect.quote(lock.model());
            holder = dialect.quote(lock.holder());
            acquiredAt = dialect.quote(lock.acquiredAt());
        }
    }
}
