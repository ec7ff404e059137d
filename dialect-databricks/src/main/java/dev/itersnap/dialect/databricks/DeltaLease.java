package dev.itersnap.dialect.databricks;

import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.spi.AbstractSqlDialect;
import dev.itersnap.spi.ModelLock;
import dev.itersnap.spi.ResolvedModel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.net.InetAddress;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ConcurrentModificationException;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The model lock on Delta Lake: a lease row with an owner, an expiry and a fence, since Delta has neither sessions
 * that hold locks nor multi-statement transactions.
 *
 * <ul>
 *   <li><b>Acquire</b>: one MERGE ({@link LeaseSql#acquire}) takes the row when it is missing, free, expired, or
 *   already ours; update count 1 means held. 0 rows or a write conflict (Delta's optimistic concurrency) means
 *   someone else holds it or raced us: back off with jitter and retry until the timeout. Every taking raises
 *   {@code fence}. When the first MERGE fails otherwise, the table is created ({@code IF NOT EXISTS}) and the MERGE
 *   tried once more.</li>
 *   <li><b>Heartbeat</b>: a daemon thread extends {@code expires_at} every TTL/3 with an UPDATE that matches only our
 *   owner and fence; 0 rows means the lease was taken over, and the lease is marked lost.</li>
 *   <li><b>{@link #verifyHeld()}</b>, before every history write: no database access while the lease is lost-free and
 *   valid for more than the safety margin (TTL/3, by the local monotonic clock from the start of the last
 *   successful renewal); otherwise one renewal, and {@code LOCK_TIMEOUT} if it fails.</li>
 *   <li><b>Close</b>: frees the row (owner and expiry NULL, fence kept) and stops the heartbeat.</li>
 * </ul>
 *
 * <p>Clock: times are the client's wall clock, bound as epoch milliseconds. A crashed holder's lease is taken over
 * once the taker's clock passes the expiry the holder wrote, so clocks of two clients may differ by less than the
 * safety margin (with the default TTL of 5 minutes: 100 s). Used by one run thread plus its heartbeat thread.
 */
final class DeltaLease implements ModelLock {
    /** System property overriding the lease's time to live, e.g. {@code 5m}, {@code 90s}, {@code PT10M}. */
    static final String TTL_PROPERTY = "itersnap.databricks.leaseTtl";
    static final Duration DEFAULT_TTL = Duration.ofMinutes(5);
    /** Shortest TTL the system property may set: each renewal is a Delta commit of 1-2 s. */
    static final Duration MIN_TTL = Duration.ofSeconds(15);

    private static final Logger LOG = LoggerFactory.getLogger(DeltaLease.class);
    private static final long FIRST_BACKOFF_MS = 200;
    private static final long MAX_BACKOFF_MS = 5_000;
    private static final int CONFLICT_RETRIES = 3;

    private final DataSource dataSource;
    private final LeaseSql sql;
    private final String owner;
    private final long fence;
    private final long ttlMillis;
    private final long marginNanos;
    private final ScheduledExecutorService heartbeat;

    // guarded by this: the run thread (verifyHeld, close) and the heartbeat thread
    private Connection connection;
    private long validUntilNanos;
    private volatile String lostReason;
    private volatile boolean closed;

    private DeltaLease(DataSource dataSource, Connection connection, LeaseSql sql, String owner, long fence,
                       Duration ttl, long validUntilNanos) {
        this.dataSource = dataSource;
        this.connection = connection;
        this.sql = sql;
        this.owner = owner;
        this.fence = fence;
        this.ttlMillis = ttl.toMillis();
        this.marginNanos = ttl.toNanos() / 3;
        this.validUntilNanos = validUntilNanos;
        String model = sql.m().name();
        this.heartbeat = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "itersnap-lease-" + model);
            t.setDaemon(true);
            return t;
        });
        long every = Math.max(1, ttl.toMillis() / 3);
        heartbeat.scheduleWithFixedDelay(this::beat, every, every, TimeUnit.MILLISECONDS);
    }

    /**
     * Takes the model's lease on Delta, waiting up to {@code timeout}; {@code DatabricksDialect.lock} calls this. The
     * lease table's identifiers go through {@code dialect.quote}; the TTL is {@link #DEFAULT_TTL} unless the system
     * property {@value #TTL_PROPERTY} sets another.
     */
    static ModelLock acquire(DataSource ds, AbstractSqlDialect dialect, ResolvedModel m, Duration timeout,
                             Supplier<String> describeHolder) throws SQLException {
        return acquire(ds, dialect, m, timeout, describeHolder, ttl());
    }

    /** As {@link #acquire(DataSource, AbstractSqlDialect, ResolvedModel, Duration, Supplier)}, with this TTL. */
    static ModelLock acquire(DataSource ds, AbstractSqlDialect dialect, ResolvedModel m, Duration timeout,
                             Supplier<String> describeHolder, Duration ttl) throws SQLException {
        return acquire(ds, new LeaseSql(dialect::quote, m, LeaseSql.DELTA), timeout, describeHolder, ttl, newOwner());
    }

    /** Takes the lease described by {@code sql} for {@code owner}, with this TTL. */
    static DeltaLease acquire(DataSource ds, LeaseSql sql, Duration timeout, Supplier<String> describeHolder,
                              Duration ttl, String owner) throws SQLException {
        String model = sql.m().name();
        Connection c = ds.getConnection();
        try {
            c.setAutoCommit(true);
            long deadline = System.nanoTime() + timeout.toNanos();
            long backoff = FIRST_BACKOFF_MS;
            boolean created = false;
            while (true) {
                long start = System.nanoTime();
                long now = System.currentTimeMillis();
                int taken;
                try {
                    taken = update(c, sql.acquire(owner, now, now + ttl.toMillis()));
                } catch (SQLException | RuntimeException e) {
                    if (!isConflict(e)) {
                        if (created) {
                            throw e;
                        }
                        // the first run of the metadata schema: create the table (each DDL costs a Delta commit or
                        // a catalog call, so not on every acquisition) and try again at once
                        createTable(c, sql);
                        created = true;
                        continue;
                    }
                    LOG.debug("[{}] lease: acquisition lost a write conflict, retrying: {}", model, e.toString());
                    taken = 0;
                }
                if (taken != 0) { // 1; or a driver that does not report MERGE counts (-1): the row tells
                    Row row = read(c, sql);
                    if (row != null && owner.equals(row.owner())) {
                        LOG.debug("[{}] lease taken by {} (fence {}, TTL {})", model, owner, row.fence(),
                                ModelLock.describe(ttl));
                        return new DeltaLease(ds, c, sql, owner, row.fence(), ttl, start + ttl.toNanos());
                    }
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw timeout(c, sql, timeout, ttl, describeHolder);
                }
                long pause = Math.min(TimeUnit.NANOSECONDS.toMillis(left) + 1,
                        ThreadLocalRandom.current().nextLong(backoff / 2, backoff + backoff / 2 + 1));
                try {
                    Thread.sleep(pause);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new ItersnapException(ErrorCode.LOCK_TIMEOUT, "model '" + model
                            + "': interrupted while waiting for its lease", e);
                }
                backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
            }
        } catch (SQLException | RuntimeException e) {
            closeQuietly(c);
            throw e;
        }
    }

    /** This lease's fence: raised by every acquisition of the model's lease. */
    long fence() {
        return fence;
    }

    /** The owner id written in the lease row. */
    String owner() {
        return owner;
    }

    @Override
    public void verifyHeld() {
        String lost = lostReason;
        if (lost != null) {
            throw lostLease(lost, null);
        }
        synchronized (this) {
            if (closed) {
                throw lostLease("the lease was released", null);
            }
            long left = validUntilNanos - System.nanoTime();
            if (left > marginNanos) {
                return; // comfortably valid: no database access, no commit
            }
            try {
                if (!renew()) {
                    throw lostLease(lostReason, null);
                }
            } catch (SQLException | RuntimeException e) {
                if (e instanceof ItersnapException ie) {
                    throw ie;
                }
                throw lostLease("it could not be renewed (" + e + ") and "
                        + (left > 0 ? "expires in " + TimeUnit.NANOSECONDS.toMillis(left) + " ms" : "has expired")
                        + ", less than the safety margin of " + ModelLock.describe(Duration.ofNanos(marginNanos)), e);
            }
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        heartbeat.shutdown(); // no interrupt: a renewal in flight finishes, then we take the monitor
        synchronized (this) {
            closed = true;
            if (lostReason == null) {
                try {
                    for (int attempt = 1; ; attempt++) {
                        try {
                            update(connection(), sql.release(owner, fence));
                            break;
                        } catch (SQLException | RuntimeException e) {
                            if (!isConflict(e) || attempt >= CONFLICT_RETRIES) {
                                throw e;
                            }
                            pauseAfterConflict();
                        }
                    }
                } catch (SQLException | RuntimeException e) {
                    LOG.warn("[{}] lease: could not release it ({}); it lapses at its expiry", sql.m().name(),
                            e.toString());
                }
            }
            closeQuietly(connection);
            connection = null;
        }
        try {
            heartbeat.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** One heartbeat: renews unless closed or lost; never throws (the executor would stop scheduling). */
    private void beat() {
        synchronized (this) {
            if (closed || lostReason != null) {
                return;
            }
            try {
                if (!renew()) {
                    LOG.warn("[{}] lease lost: {}", sql.m().name(), lostReason);
                }
            } catch (SQLException | RuntimeException e) {
                LOG.warn("[{}] lease: heartbeat failed ({}); retrying in {}", sql.m().name(), e.toString(),
                        ModelLock.describe(Duration.ofMillis(ttlMillis / 3)));
            }
        }
    }

    /** Extends the lease; false (and marked lost) when the row is no longer ours. Holds the monitor. */
    private boolean renew() throws SQLException {
        for (int attempt = 1; ; attempt++) {
            long start = System.nanoTime();
            try {
                long expires = System.currentTimeMillis() + ttlMillis;
                int n = update(connection(), sql.renew(owner, fence, expires));
                if (n != 0 && n != 1) { // a driver that does not report UPDATE counts: the row tells
                    Row row = read(connection(), sql);
                    n = row != null && owner.equals(row.owner()) && row.fence() == fence
                            && Long.valueOf(expires).equals(row.expiresMillis()) ? 1 : 0;
                }
                if (n == 1) {
                    validUntilNanos = start + TimeUnit.MILLISECONDS.toNanos(ttlMillis);
                    return true;
                }
                lostReason = "its lease row no longer has owner " + owner + " and fence " + fence
                        + " (it expired and another run took it over, or it was freed)";
                return false;
            } catch (SQLException | RuntimeException e) {
                if (!isConflict(e)) {
                    closeQuietly(connection); // a broken connection is reopened by the next attempt
                    connection = null;
                    throw e;
                }
                if (attempt >= CONFLICT_RETRIES) {
                    throw e;
                }
                pauseAfterConflict();
            }
        }
    }

    private Connection connection() throws SQLException {
        if (connection == null) {
            connection = dataSource.getConnection();
            connection.setAutoCommit(true);
        }
        return connection;
    }

    private ItersnapException lostLease(String why, Throwable cause) {
        return new ItersnapException(ErrorCode.LOCK_TIMEOUT, "model '" + sql.m().name() + "' lost its lease: " + why
                + ". The run stopped before its next history write; run it again (the ledger keeps every batch "
                + "already applied)", cause);
    }

    private static ItersnapException timeout(Connection c, LeaseSql sql, Duration timeout, Duration ttl,
                                             Supplier<String> describeHolder) {
        String lease;
        try {
            Row row = read(c, sql);
            lease = row == null || row.owner() == null ? "lease free at the last attempt"
                    : "lease owner " + row.owner() + ", expires " + (row.expiresMillis() == null ? "never"
                    : Instant.ofEpochMilli(row.expiresMillis())) + ", fence " + row.fence();
        } catch (SQLException | RuntimeException e) {
            lease = "lease row unreadable: " + e;
        }
        return new ItersnapException(ErrorCode.LOCK_TIMEOUT, "model '" + sql.m().name()
                + "' is locked by another run (" + lease + "; " + describeHolder.get() + "); gave up after "
                + ModelLock.describe(timeout) + " (lock_timeout). Wait for that run to finish, or raise lock_timeout; "
                + "a crashed run's lease lapses at its expiry (TTL " + ModelLock.describe(ttl) + ")");
    }

    /**
     * True when a failure is a lost race rather than an error: Delta's optimistic-concurrency conflicts (a
     * {@link ConcurrentModificationException} in the cause chain on a SparkSession; the {@code DELTA_CONCURRENT_...}
     * error class in the message over JDBC), a unique violation or a serialization failure.
     */
    static boolean isConflict(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof ConcurrentModificationException) {
                return true;
            }
            String msg = t.getMessage();
            if (msg != null && (msg.contains("DELTA_CONCURRENT") || msg.contains("ConcurrentAppend")
                    || msg.contains("ConcurrentDelete") || msg.contains("ConcurrentTransaction"))) {
                return true;
            }
            if (t instanceof SQLException se && se.getSQLState() != null
                    && (se.getSQLState().equals("23505") || se.getSQLState().equals("40001"))) {
                return true;
            }
        }
        return false;
    }

    /** The lease's time to live: the system property {@value #TTL_PROPERTY}, or {@link #DEFAULT_TTL}. */
    static Duration ttl() {
        String value = System.getProperty(TTL_PROPERTY);
        if (value == null || value.isBlank()) {
            return DEFAULT_TTL;
        }
        Duration ttl = parseDuration(value.strip());
        if (ttl == null || ttl.compareTo(MIN_TTL) < 0) {
            throw new ItersnapException(ErrorCode.INVALID_SETTING, "system property " + TTL_PROPERTY + " is '"
                    + value + "': expected a duration of at least " + ModelLock.describe(MIN_TTL)
                    + " such as 5m, 90s or PT10M");
        }
        return ttl;
    }

    private static final Pattern DURATION = Pattern.compile("(?:(\\d+)h)?(?:(\\d+)m(?!s))?(?:(\\d+)s)?(?:(\\d+)ms)?");

    /** {@code 1h30m}, {@code 90s}, {@code 500ms} or ISO-8601 ({@code PT5M}); null if neither. */
    static Duration parseDuration(String text) {
        if (text.toUpperCase(Locale.ROOT).startsWith("PT")) {
            try {
                return Duration.parse(text);
            } catch (RuntimeException e) {
                return null;
            }
        }
        Matcher mt = DURATION.matcher(text.toLowerCase(Locale.ROOT));
        if (text.isEmpty() || !mt.matches()) {
            return null;
        }
        Duration d = Duration.ZERO;
        long[] unit = {3_600_000, 60_000, 1_000, 1};
        for (int g = 1; g <= 4; g++) {
            if (mt.group(g) != null) {
                d = d.plusMillis(Long.parseLong(mt.group(g)) * unit[g - 1]);
            }
        }
        return d;
    }

    /** A unique lease owner: host, process id and a random UUID (two runs in one JVM differ). */
    static String newOwner() {
        String host = System.getenv("HOSTNAME");
        if (host == null || host.isBlank()) {
            try {
                host = InetAddress.getLocalHost().getHostName();
            } catch (Exception e) {
                host = "unknown-host";
            }
        }
        return host + "/" + ProcessHandle.current().pid() + "/" + UUID.randomUUID();
    }

    /** The lease row: owner (NULL when free), expiry in epoch ms (NULL when free), fence. */
    record Row(String owner, Long expiresMillis, long fence) {
    }

    static Row read(Connection c, LeaseSql sql) throws SQLException {
        LeaseSql.Statement s = sql.read();
        try (PreparedStatement ps = prepare(c, s); ResultSet rs = ps.executeQuery()) {
            if (!rs.next()) {
                return null;
            }
            String holder = rs.getString(1);
            long expires = rs.getLong(2);
            Long expiresMillis = rs.wasNull() ? null : expires;
            return new Row(holder, expiresMillis, rs.getLong(3));
        }
    }

    private static void createTable(Connection c, LeaseSql sql) throws SQLException {
        for (LeaseSql.Statement s : new LeaseSql.Statement[] {sql.createSchema(), sql.createTable()}) {
            try {
                update(c, s);
            } catch (SQLException | RuntimeException e) {
                update(c, s); // two first runs may race on CREATE ... IF NOT EXISTS; the second attempt sees it
            }
        }
    }

    private static int update(Connection c, LeaseSql.Statement s) throws SQLException {
        try (PreparedStatement ps = prepare(c, s)) {
            return ps.executeUpdate();
        }
    }

    private static PreparedStatement prepare(Connection c, LeaseSql.Statement s) throws SQLException {
        PreparedStatement ps = c.prepareStatement(s.sql());
        try {
            for (int i = 0; i < s.binds().size(); i++) {
                Object v = s.binds().get(i);
                if (v instanceof Long l) {
                    ps.setLong(i + 1, l);
                } else {
                    ps.setString(i + 1, (String) v);
                }
            }
            return ps;
        } catch (SQLException | RuntimeException e) {
            ps.close();
            throw e;
        }
    }

    private static void pauseAfterConflict() {
        try {
            Thread.sleep(ThreadLocalRandom.current().nextLong(50, 250));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void closeQuietly(Connection c) {
        if (c == null) {
            return;
        }
        try {
            c.close();
        } catch (SQLException ignored) {
            // nothing more to release
        }
    }
}
