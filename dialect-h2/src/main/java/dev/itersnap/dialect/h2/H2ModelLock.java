package dev.itersnap.dialect.h2;

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
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * The model lock on H2: a row of the lock table held with {@code SELECT ... FOR UPDATE} in a transaction that stays
 * open, on a connection of its own, for the whole run. H2 releases it when the connection closes, so a crashed
 * process cannot leave the model locked. The wait is bounded by H2's session {@code LOCK_TIMEOUT}. Taking it makes
 * the database's commits durable first ({@link H2Durability}).
 */
final class H2ModelLock implements ModelLock {
    /** H2's error code for a lock wait that timed out. */
    private static final int LOCK_TIMEOUT_1 = 50200;

    private final Connection connection;

    private H2ModelLock(Connection connection) {
        this.connection = connection;
    }

    /**
     * Takes the lock of {@code m} (its row of {@link MetadataSchema#lock()}, created with the table on first use).
     */
    static ModelLock acquire(DataSource ds, Dialect dialect, ModelView m, Duration timeout,
                             Supplier<String> describeHolder) throws SQLException {
        MetadataSchema.Lock table = m.metadata().lock();
        String lockTable = table.spec().name().parts().stream().map(dialect::quote).collect(Collectors.joining("."));
        String modelColumn = dialect.quote(table.model());
        Connection c = ds.getConnection();
        try {
            c.setAutoCommit(true);
            String addRow = "INSERT INTO " + lockTable + " (" + modelColumn + ") SELECT ? WHERE NOT EXISTS (SELECT 1 FROM "
                    + lockTable + " WHERE " + modelColumn + " = ?)";
            for (int attempt = 1; ; attempt++) {
                try {
                    addRow(c, addRow, m.name());
                    break;
                } catch (SQLException e) {
                    if (attempt == 3) {
                        throw e;
                    }
                    // the first run of the metadata schema: create the table, then add the row. A concurrent first
                    // run may be creating it at the same moment: a failed creation is retried with the row
                    for (Statement s : dialect.createTable(table.spec())) {
                        try (PreparedStatement ps = s.prepare(c)) {
                            ps.executeUpdate();
                        } catch (SQLException raced) {
                            e.addSuppressed(raced);
                        }
                    }
                }
            }
            // before the lock's transaction (the command commits) and before the run writes anything
            H2Durability.requireDurableCommits(c, m.name());
            c.setAutoCommit(false);
            try (java.sql.Statement st = c.createStatement()) {
                st.execute("SET LOCK_TIMEOUT " + Math.min(Integer.MAX_VALUE, timeout.toMillis()));
            }
            try (PreparedStatement ps = c.prepareStatement("SELECT " + modelColumn + " FROM " + lockTable + " WHERE "
                    + modelColumn + " = ? FOR UPDATE")) {
                ps.setString(1, m.name());
                ps.executeQuery().close();
            } catch (SQLException e) {
                if (e.getErrorCode() == LOCK_TIMEOUT_1 || "HYT00".equals(e.getSQLState())) {
                    throw new ItersnapException(ErrorCode.LOCK_TIMEOUT, "model '" + m.name()
                            + "' is locked by another run (" + describeHolder.get() + "); gave up after " + ModelLock.describe(timeout)
                            + " (lock_timeout). Wait for that run to finish, or raise lock_timeout", e);
                }
                throw e;
            }
            return new H2ModelLock(c);
        } catch (SQLException | RuntimeException e) {
            try {
                c.close();
            } catch (SQLException ignored) {
                // the original failure matters
            }
            throw e;
        }
    }

    /**
     * Whether a live session holds the lock of {@code model}: its row read with {@code FOR UPDATE SKIP LOCKED} in one
     * statement (autocommit: a row this read locks is released as the statement ends; otherwise rolled back at
     * once), so it neither waits nor writes. No lock table or no row: no run ever held it.
     */
    static LockState observe(Connection c, Dialect dialect, MetadataSchema metadata, String model)
            throws SQLException {
        MetadataSchema.Lock table = metadata.lock();
        String lockTable = table.spec().name().parts().stream().map(dialect::quote).collect(Collectors.joining("."));
        String modelColumn = dialect.quote(table.model());
        String where = " FROM " + lockTable + " WHERE " + modelColumn + " = ?";
        try {
            if (!exists(c, "SELECT 1" + where, model)) {
                return new LockState(LockState.Held.FREE, null);
            }
            boolean taken = !exists(c, "SELECT " + modelColumn + where + " FOR UPDATE SKIP LOCKED", model);
            return new LockState(taken ? LockState.Held.HELD : LockState.Held.FREE, null);
        } catch (SQLException e) {
            if (e.getErrorCode() == 42102 || e.getErrorCode() == 90079) { // no such table, no such schema
                return new LockState(LockState.Held.FREE, null);
            }
            throw e;
        } finally {
            if (!c.getAutoCommit()) {
                c.rollback();
            }
        }
    }

    private static boolean exists(Connection c, String sql, String model) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, model);
            try (java.sql.ResultSet rs = ps.executeQuery()) {
                return rs.next();
            }
        }
    }

    /** Adds the model's row to the lock table; a row a concurrent first run added meanwhile is no failure. */
    private static void addRow(Connection c, String sql, String model) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, model);
            ps.setString(2, model);
            ps.executeUpdate();
        } catch (SQLException e) {
            if (!"23505".equals(e.getSQLState())) {
                throw e;
            }
        }
    }

    @Override
    public void close() {
        try {
            connection.rollback();
        } catch (SQLException ignored) {
            // closing the connection releases the lock anyway
        }
        try {
            connection.close();
        } catch (SQLException ignored) {
            // nothing more to release
        }
    }
}
