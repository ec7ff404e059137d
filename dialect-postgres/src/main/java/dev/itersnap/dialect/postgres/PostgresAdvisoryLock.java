package dev.itersnap.dialect.postgres;

import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.spi.LockState;
import dev.itersnap.spi.ModelLock;
import dev.itersnap.spi.ModelView;

import javax.sql.DataSource;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.function.Supplier;

/**
 * The model lock on PostgreSQL: a session-level advisory lock on a connection of its own, keyed by a hash of the
 * metadata schema and the model name. The server releases it when the session ends, so a crashed process cannot
 * leave the model locked. A free lock is taken by one statement ({@code pg_try_advisory_lock}); a run that finds it
 * held waits, bounded by the session's {@code lock_timeout} (set for the wait and reset after it).
 */
final class PostgresAdvisoryLock implements ModelLock {
    /** SQLState of a lock wait that hit lock_timeout. */
    private static final String LOCK_NOT_AVAILABLE = "55P03";

    private final Connection connection;
    private final long key;

    private PostgresAdvisoryLock(Connection connection, long key) {
        this.connection = connection;
        this.key = key;
    }

    static long key(ModelView m) {
        return key(m.metadata().schema(), m.name());
    }

    /** The lock's key: the first 8 bytes of SHA-256 of the (folded) metadata schema and the model name. */
    static long key(String metadataSchema, String model) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(("itersnap:" + metadataSchema + ":" + model)
                    .getBytes(StandardCharsets.UTF_8));
            long k = 0;
            for (int i = 0; i < 8; i++) {
                k = (k << 8) | (d[i] & 0xff);
            }
            return k;
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Whether a session holds the lock of {@code model} now, from {@code pg_locks} (a 64-bit advisory key is
     * {@code classid} = its high and {@code objid} = its low 32 bits, {@code objsubid} 1), read only: the server
     * releases a session's advisory locks when the session ends, so a granted lock has a live holder. The holder is
     * named from {@code pg_stat_activity} as far as the role may see it.
     */
    static LockState observe(Connection c, String metadataSchema, String model) throws SQLException {
        long key = key(metadataSchema, model);
        try (PreparedStatement ps = c.prepareStatement("SELECT l.pid, a.application_name, a.client_addr, "
                + "a.backend_start FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = "
                + "'advisory' AND l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = "
                + "current_database()) AND l.classid::bigint = ? AND l.objid::bigint = ? AND l.objsubid = 1")) {
            ps.setLong(1, key >>> 32);
            ps.setLong(2, key & 0xFFFFFFFFL);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return new LockState(LockState.Held.FREE, null);
                }
                String app = rs.getString(2);
                Object addr = rs.getObject(3);
                Object since = rs.getObject(4);
                return new LockState(LockState.Held.HELD, "session pid " + rs.getInt(1)
                        + (app == null || app.isEmpty() ? "" : " (" + app + ")")
                        + (addr == null ? "" : " from " + addr) + (since == null ? "" : ", connected since " + since));
            }
        }
    }

    static ModelLock acquire(DataSource ds, ModelView m, Duration timeout, Supplier<String> describeHolder)
            throws SQLException {
        long key = key(m);
        Connection c = ds.getConnection();
        try {
            c.setAutoCommit(true);
            // a free lock is taken by one statement; only a run that has to wait sets lock_timeout for the wait
            boolean locked;
            try (PreparedStatement ps = c.prepareStatement("SELECT pg_try_advisory_lock(?)")) {
                ps.setLong(1, key);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    locked = rs.getBoolean(1);
                }
            }
            if (!locked && !timeout.isZero()) {
                try (Statement st = c.createStatement()) {
                    st.execute("SET lock_timeout = " + Math.max(1, Math.min(Integer.MAX_VALUE, timeout.toMillis())));
                }
                try (PreparedStatement ps = c.prepareStatement("SELECT pg_advisory_lock(?)")) {
                    ps.setLong(1, key);
                    ps.executeQuery().close();
                    locked = true;
                } catch (SQLException e) {
                    if (!LOCK_NOT_AVAILABLE.equals(e.getSQLState())) {
                        throw e;
                    }
                    locked = false;
                }
                try (Statement st = c.createStatement()) {
                    st.execute("RESET lock_timeout");
                }
            }
            if (!locked) {
                throw new ItersnapException(ErrorCode.LOCK_TIMEOUT, "model '" + m.name() + "' is locked by another run ("
                        + describeHolder.get() + "); gave up after " + ModelLock.describe(timeout) + " (lock_timeout). Wait for that run "
                        + "to finish, or raise lock_timeout");
            }
            return new PostgresAdvisoryLock(c, key);
        } catch (SQLException | RuntimeException e) {
            try {
                c.close();
            } catch (SQLException ignored) {
                // the original failure matters
            }
            throw e;
        }
    }

    @Override
    public void close() {
        try (PreparedStatement ps = connection.prepareStatement("SELECT pg_advisory_unlock(?)")) {
            ps.setLong(1, key);
            ps.executeQuery().close();
        } catch (SQLException ignored) {
            // closing the session releases it anyway
        }
        try {
            connection.close();
        } catch (SQLException ignored) {
            // nothing more to release
        }
    }
}
