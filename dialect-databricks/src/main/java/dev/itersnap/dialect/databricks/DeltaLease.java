package dev.itersnap.dialect.databricks;

import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.spi.AbstractSqlDialect;
import dev.itersnap.spi.ModelLock;
import dev.itersnap.spi.ResolvedModel;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * TEMPORARY minimal lease lock (a placeholder for the real one, written separately): one row per model in
 * {@code <metadata_schema>.itersnap_lease}, taken by a single MERGE (free, expired, or missing row) and retried until
 * the timeout. The lease expires after {@link #TTL} unless {@link #verifyHeld()} renews it; a lease younger than half
 * its TTL is still held without asking the database.
 */
final class DeltaLease implements ModelLock {
    static final Duration TTL = Duration.ofMinutes(2);

    private final DataSource ds;
    private final String table;
    private final String model;
    private final String owner;
    private long renewedAt;

    private DeltaLease(DataSource ds, String table, String model, String owner) {
        this.ds = ds;
        this.table = table;
        this.model = model;
        this.owner = owner;
        this.renewedAt = System.nanoTime();
    }

    static ModelLock acquire(DataSource ds, AbstractSqlDialect dialect, ResolvedModel m, Duration timeout,
                             Supplier<String> describeHolder) throws SQLException {
        String table = dialect.quote(m.metadataSchema()) + "." + dialect.quote(m.id("itersnap_lease"));
        String owner = UUID.randomUUID().toString();
        update(ds, "CREATE TABLE IF NOT EXISTS " + table + " (model STRING NOT NULL, owner STRING, "
                + "expires_at TIMESTAMP, fence BIGINT) USING DELTA");
        String take = "MERGE INTO " + table + " l USING (SELECT CAST(? AS STRING) AS model, CAST(? AS STRING) AS owner, "
                + "CAST(? AS INT) AS ttl) r ON l.model = r.model "
                + "WHEN MATCHED AND (l.owner IS NULL OR l.expires_at < current_timestamp()) THEN UPDATE SET "
                + "owner = r.owner, expires_at = timestampadd(SECOND, r.ttl, current_timestamp()), fence = l.fence + 1 "
                + "WHEN NOT MATCHED THEN INSERT (model, owner, expires_at, fence) "
                + "VALUES (r.model, r.owner, timestampadd(SECOND, r.ttl, current_timestamp()), 1)";
        long deadline = System.nanoTime() + timeout.toNanos();
        long pause = 200;
        while (true) {
            try {
                if (update(ds, take, m.name(), owner, (int) TTL.getSeconds()) == 1) {
                    return new DeltaLease(ds, table, m.name(), owner);
                }
            } catch (SQLException e) {
                if (!isConflict(e)) {
                    throw e;
                }
            }
            if (System.nanoTime() > deadline) {
                throw new ItersnapException(ErrorCode.LOCK_TIMEOUT, "model '" + m.name() + "' is locked by another "
                        + "run (" + describeHolder.get() + "); gave up after " + ModelLock.describe(timeout)
                        + " (lock_timeout). Wait for that run to finish, or raise lock_timeout");
            }
            try {
                Thread.sleep(Math.min(pause, Math.max(1, (deadline - System.nanoTime()) / 1_000_000)));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new ItersnapException(ErrorCode.LOCK_TIMEOUT, "model '" + m.name() + "': interrupted while "
                        + "waiting for the lock");
            }
            pause = Math.min(2000, pause * 2);
        }
    }

    private static boolean isConflict(SQLException e) {
        return e instanceof java.sql.SQLTransactionRollbackException
                || String.valueOf(e.getMessage()).contains("DELTA_CONCURRENT");
    }

    @Override
    public void verifyHeld() {
        if (System.nanoTime() - renewedAt < TTL.toNanos() / 2) {
            return; // not expired, so nobody can have taken it over
        }
        try {
            long now = System.nanoTime();
            int renewed = update(ds, "UPDATE " + table + " SET expires_at = timestampadd(SECOND, ?, "
                    + "current_timestamp()) WHERE model = ? AND owner = ? AND expires_at >= current_timestamp()",
                    (int) TTL.getSeconds(), model, owner);
            if (renewed != 1) {
                throw new ItersnapException(ErrorCode.LOCK_TIMEOUT, "model '" + model + "': the run's lease expired"
                        + " and may be held by another run; stopped before writing");
            }
            renewedAt = now;
        } catch (SQLException e) {
            throw new ItersnapException(ErrorCode.LOCK_TIMEOUT, "model '" + model + "': cannot renew the lease: "
                    + e.getMessage(), e);
        }
    }

    @Override
    public void close() {
        try {
            update(ds, "UPDATE " + table + " SET owner = NULL, expires_at = NULL WHERE model = ? AND owner = ?",
                    model, owner);
        } catch (SQLException | RuntimeException ignored) {
            // the lease lapses at expires_at
        }
    }

    private static int update(DataSource ds, String sql, Object... binds) throws SQLException {
        try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < binds.length; i++) {
                ps.setObject(i + 1, binds[i]);
            }
            return ps.executeUpdate();
        }
    }
}
