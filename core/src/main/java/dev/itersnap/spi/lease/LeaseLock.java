package dev.itersnap.spi.lease;

import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.spi.Dialect;
import dev.itersnap.spi.LockState;
import dev.itersnap.spi.MetadataSchema;
import dev.itersnap.spi.ModelLock;
import dev.itersnap.spi.ModelView;
import dev.itersnap.spi.SourceColumn;
import dev.itersnap.spi.Statement;
import dev.itersnap.spi.WriteConflicts;
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
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A model lock for databases without locks that a dead process releases (Delta Lake, warehouses): a lease row in
 * the metadata schema ({@link MetadataSchema.Lease}) with an owner, an expiry and a fence. A dialect's
 * {@link Dialect#lock} returns {@link #acquire}; it works through plain JDBC and {@link Statement} values, with the
 * dialect's table DDL and the database's epoch-millisecond conversions ({@link Clock}).
 *
 * <ul>
 *   <li><b>Acquire</b>: one MERGE ({@link Statements#acquire}) takes the row when it is missing, free, expired, or
 *   already ours; update count 1 means held. 0 rows or a write conflict (optimistic concurrency) means someone else
 *   holds it or raced us: back off with jitter and retry until the timeout. Every taking raises {@code fence}. When
 *   the first MERGE fails otherwise, the table is created ({@code IF NOT EXISTS}) and the MERGE tried once more.</li>
 *   <li><b>Heartbeat</b>: a daemon thread extends {@code expires_at} every TTL/3 with an UPDATE that matches only our
 *   owner and fence; 0 rows means the lease was taken over, and the lease is marked lost.</li>
 *   <li><b>{@link #verifyHeld()}</b>, before every write and commit of a run: no database access while the lease is
 *   not lost and valid for more than the safety margin (TTL/3, by the local monotonic clock from when the last
 *   successful acquisition or renewal was <em>sent</em>, not when its answer came back); otherwise one renewal, and
 *   {@code LOCK_TIMEOUT} if it fails.</li>
 *   <li><b>Close</b>: frees the row (owner and expiry NULL, fence kept) and stops the heartbeat.</li>
 * </ul>
 *
 * <p>Clock: times are the client's wall clock, bound as epoch milliseconds. A crashed holder's lease is taken over
 * once the taker's clock passes the expiry the holder wrote, so clocks of two clients may differ by less than the
 * safety margin (with the default TTL of 5 minutes: 100 s). Used by one run thread plus its heartbeat thread.
 */
public final class LeaseLock implements ModelLock {
    /**
     * How a database turns epoch milliseconds into a TIMESTAMP and back, as SQL expressions around an operand.
     *
     * @param toTimestamp epoch milliseconds to TIMESTAMP, e.g. Spark's {@code timestamp_millis(x)}
     * @param toMillis    TIMESTAMP to epoch milliseconds, e.g. Spark's {@code unix_millis(x)}
     */
    public record Clock(UnaryOperator<String> toTimestamp, UnaryOperator<String> toMillis) {
    }

    /**
     * A {@code describeHolder} that also hears how the acquisition's attempts go: what a run passes (the engine's
     * {@code LockAcquisition}), so that it says it waits for the lock ({@code WaitingForLock}) only once an attempt
     * has found the lease held by another run, not while its own attempt is slow (a Delta MERGE can take seconds on
     * a busy cluster). Called on the acquiring thread; a plain {@link Supplier} hears nothing.
     */
    public interface Attempts extends Supplier<String> {
        /** Before the first attempt: from now on a wait counts only once {@link #heldByAnother()} says so. */
        void attempting();

        /** An attempt came back without the lease: another run holds it, or took part in the same race. */
        void heldByAnother();
    }

    /** The lease's time to live unless a system property sets another ({@link #ttl(String)}). */
    public static final Duration DEFAULT_TTL = Duration.ofMinutes(5);
    /** Shortest TTL a system property may set: each renewal is a commit, of 1-2 s on Delta. */
    public static final Duration MIN_TTL = Duration.ofSeconds(15);

    private static final Logger LOG = LoggerFactory.getLogger(LeaseLock.class);
    private static final long FIRST_BACKOFF_MS = 200;
    private static final long MAX_BACKOFF_MS = 5_000;
    private static final int CONFLICT_RETRIES = 3;
    private static final int CREATE_ATTEMPTS = 10;

    private final DataSource dataSource;
    private final Statements sql;
    private final String owner;
    private final long fence;
    private final long ttlMillis;
    private final long marginNanos;
    private final ScheduledExecutorService heartbeat;

    // guarded by this: the run thread (verifyHeld, close) and the heartbeat thread
    private Connection connection;
    /**
     * Until when the lease is ours by the local monotonic clock: the time the last successful acquisition or renewal
     * was <em>sent</em>, plus the TTL. Counted from the request, not its answer: the row's expiry was computed when
     * the request was made, so a late answer (a slow commit, a long queue) must not move the end further out, or the
     * holder would believe it held a lease that another job may already have taken. Written under the monitor;
     * volatile for verifyHeld's check without it.
     */
    private volatile long validUntilNanos;
    private volatile String lostReason;
    private volatile boolean closed;

    private LeaseLock(DataSource dataSource, Connection connection, Statements sql, String owner, long fence,
                       Duration ttl, long validUntilNanos) {
        this.dataSource = dataSource;
        this.connection = connection;
        this.sql = sql;
        this.owner = owner;
        this.fence = fence;
        this.ttlMillis = ttl.toMillis();
        this.marginNanos = ttl.toNanos() / 3;
        this.validUntilNanos = validUntilNanos;
        String model = sql.model();
        this.heartbeat = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "itersnap-lease-" + model);
            t.setDaemon(true);
            return t;
        });
        long every = Math.max(1, ttl.toMillis() / 3);
        heartbeat.scheduleWithFixedDelay(this::beat, every, every, TimeUnit.MILLISECONDS);
    }

    /**
     * Takes the model's lease, waiting up to {@code timeout}, for a new owner ({@link #newOwner()}): what a dialect's
     * {@link Dialect#lock} returns.
     *
     * @param ttl   the lease's time to live (the heartbeat renews it every TTL/3)
     * @param clock the database's epoch-millisecond conversions
     */
    public static ModelLock acquire(DataSource ds, Dialect dialect, ModelView m, Duration timeout,
                                    Supplier<String> describeHolder, Duration ttl, Clock clock) throws SQLException {
        return acquire(ds, new Statements(dialect, m, clock), timeout, describeHolder, ttl, newOwner());
    }

    /** Takes the lease of {@code sql}'s model for {@code owner}, with this TTL. */
    public static LeaseLock acquire(DataSource ds, Statements sql, Duration timeout, Supplier<String> describeHolder,
                                    Duration ttl, String owner) throws SQLException {
        String model = sql.model();
        Attempts attempts = describeHolder instanceof Attempts a ? a : null;
        Connection c = ds.getConnection();
        try {
            c.setAutoCommit(true);
            if (attempts != null) {
                attempts.attempting();
            }
            long deadline = System.nanoTime() + timeout.toNanos();
            long backoff = FIRST_BACKOFF_MS;
            boolean created = false;
            while (true) {
                long start = System.nanoTime(); // the request's time: validity counts from here, not from the answer
                long now = System.currentTimeMillis();
                int taken;
                try {
                    taken = update(c, sql, sql.acquire(owner, now, now + ttl.toMillis()));
                } catch (SQLException | RuntimeException e) {
                    if (!isConflict(sql, e)) {
                        if (created) {
                            throw e;
                        }
                        // the first run of the metadata schema: create the table (each DDL costs a Delta commit or
                        // a catalog call, so not on every acquisition) and try again at once
                        createTable(c, sql, deadline);
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
                        return new LeaseLock(ds, c, sql, owner, row.fence(), ttl, start + ttl.toNanos());
                    }
                }
                if (attempts != null) {
                    attempts.heldByAnother();
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
    public long fence() {
        return fence;
    }

    /** The owner id written in the lease row. */
    public String owner() {
        return owner;
    }

    @Override
    public void verifyHeld() {
        String lost = lostReason;
        if (lost != null) {
            throw lostLease(lost, null);
        }
        if (!closed && validUntilNanos - System.nanoTime() > marginNanos) {
            return; // comfortably valid: no database access, and no wait for a renewal in flight
        }
        synchronized (this) {
            if (lostReason != null) { // found by a renewal this thread waited for
                throw lostLease(lostReason, null);
            }
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
                            update(connection(), sql, sql.release(owner, fence));
                            break;
                        } catch (SQLException | RuntimeException e) {
                            if (!isConflict(sql, e) || attempt >= CONFLICT_RETRIES) {
                                throw e;
                            }
                            pauseAfterConflict();
                        }
                    }
                } catch (SQLException | RuntimeException e) {
                    LOG.warn("[{}] lease: could not release it ({}); it lapses at its expiry", sql.model(),
                            dev.itersnap.core.Secrets.mask(e.toString()));
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
                    LOG.warn("[{}] lease lost: {}", sql.model(), lostReason);
                }
            } catch (SQLException | RuntimeException e) {
                LOG.warn("[{}] lease: heartbeat failed ({}); retrying in {}", sql.model(),
                        dev.itersnap.core.Secrets.mask(e.toString()),
                        ModelLock.describe(Duration.ofMillis(ttlMillis / 3)));
            }
        }
    }

    /** Extends the lease; false (and marked lost) when the row is no longer ours. Holds the monitor. */
    private boolean renew() throws SQLException {
        for (int attempt = 1; ; attempt++) {
            long start = System.nanoTime(); // before the expiry is computed and sent: validity counts from here
            try {
                long expires = System.currentTimeMillis() + ttlMillis;
                int n = update(connection(), sql, sql.renew(owner, fence, expires));
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
                if (!isConflict(sql, e)) {
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
        return new ItersnapException(ErrorCode.LOCK_TIMEOUT, "model '" + sql.model() + "' lost its lease: " + why
                + ". The run stopped before its next history write; run it again (the ledger keeps every batch "
                + "already applied)", cause);
    }

    private static ItersnapException timeout(Connection c, Statements sql, Duration timeout, Duration ttl,
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
        return new ItersnapException(ErrorCode.LOCK_TIMEOUT, "model '" + sql.model()
                + "' is locked by another run (" + lease + "; " + describeHolder.get() + "); gave up after "
                + ModelLock.describe(timeout) + " (lock_timeout). Wait for that run to finish, or raise lock_timeout; "
                + "a crashed run's lease lapses at its expiry (TTL " + ModelLock.describe(ttl) + ")");
    }

    /**
     * True when a failure is a lost race rather than an error, by the shared recognition: a write conflict
     * ({@link WriteConflicts#standard}) or a unique violation (two first acquisitions inserting the row).
     */
    public static boolean isConflict(Throwable e) {
        return WriteConflicts.standard(e) || uniqueViolation(e);
    }

    /** A lost race of this lease's database: its dialect's write conflict, or a unique violation. */
    private static boolean isConflict(Statements sql, Throwable e) {
        return sql.dialect.isWriteConflict(e) || uniqueViolation(e);
    }

    private static boolean uniqueViolation(Throwable e) {
        return WriteConflicts.anyInChain(e, t -> t instanceof SQLException se && "23505".equals(se.getSQLState()));
    }

    /** The lease's time to live: the system property {@code property}, or {@link #DEFAULT_TTL}. */
    public static Duration ttl(String property) {
        String value = System.getProperty(property);
        if (value == null || value.isBlank()) {
            return DEFAULT_TTL;
        }
        Duration ttl = parseDuration(value.strip());
        if (ttl == null || ttl.compareTo(MIN_TTL) < 0) {
            throw new ItersnapException(ErrorCode.INVALID_SETTING, "system property " + property + " is '"
                    + value + "': expected a duration of at least " + ModelLock.describe(MIN_TTL)
                    + " such as 5m, 90s or PT10M");
        }
        return ttl;
    }

    private static final Pattern DURATION = Pattern.compile("(?:(\\d+)h)?(?:(\\d+)m(?!s))?(?:(\\d+)s)?(?:(\\d+)ms)?");

    /** {@code 1h30m}, {@code 90s}, {@code 500ms} or ISO-8601 ({@code PT5M}); null if neither. */
    public static Duration parseDuration(String text) {
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
    public static String newOwner() {
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
    public record Row(String owner, Long expiresMillis, long fence) {
    }

    /**
     * Whether a live run holds the lease now ({@link Dialect#lockState}): the lease row read, its expiry compared with
     * this client's clock. A lease whose expiry passed is free (its run died, or lost it), and its owner is named.
     */
    public static LockState observe(Connection c, Statements sql) throws SQLException {
        Row row;
        try {
            row = read(c, sql);
        } catch (SQLException e) {
            if (!sql.tableExists(c)) {
                return new LockState(LockState.Held.FREE, null); // no lease table: no run ever held it
            }
            throw e;
        }
        if (row == null || row.owner() == null || row.expiresMillis() == null) {
            return new LockState(LockState.Held.FREE, null);
        }
        String until = Instant.ofEpochMilli(row.expiresMillis()).toString();
        return row.expiresMillis() > System.currentTimeMillis()
                ? new LockState(LockState.Held.HELD, "lease owner " + row.owner() + ", expires " + until)
                : new LockState(LockState.Held.FREE, "the lease of " + row.owner() + " expired at " + until);
    }

    /** The model's lease row, or null. */
    public static Row read(Connection c, Statements sql) throws SQLException {
        try (PreparedStatement ps = sql.read().prepare(c, sql.dialect.valueBinder()); ResultSet rs = ps.executeQuery()) {
            if (!rs.next()) {
                return null;
            }
            String holder = rs.getString(1);
            long expires = rs.getLong(2);
            Long expiresMillis = rs.wasNull() ? null : expires;
            return new Row(holder, expiresMillis, rs.getLong(3));
        }
    }

    /**
     * Creates the lease table. Two first runs may race on {@code CREATE ... IF NOT EXISTS}: the loser fails, and on
     * Delta Lake it fails for as long as the winner's table is half created (its location not empty, its log not yet
     * committed), so each statement is tried again after a pause, up to {@value #CREATE_ATTEMPTS} times (at least
     * twice, then until the deadline).
     */
    private static void createTable(Connection c, Statements sql, long deadline) throws SQLException {
        for (Statement s : sql.createTable()) {
            for (int attempt = 1; ; attempt++) {
                try {
                    update(c, sql, s);
                    break;
                } catch (SQLException | RuntimeException e) {
                    if (attempt >= CREATE_ATTEMPTS || (attempt >= 2 && System.nanoTime() - deadline > 0)) {
                        throw e;
                    }
                    pauseAfterConflict();
                }
            }
        }
    }

    private static int update(Connection c, Statements sql, Statement s) throws SQLException {
        try (PreparedStatement ps = s.prepare(c, sql.dialect.valueBinder())) {
            return ps.executeUpdate();
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

    /**
     * The lease's statements for one model: the lease table ({@link MetadataSchema#lease()}) rendered by the dialect,
     * times bound as epoch milliseconds and converted in SQL ({@link Clock}), so that neither the JVM's nor the
     * session's time zone plays a part.
     */
    public static final class Statements {
        private final Dialect dialect;
        private final String model;
        private final Clock clock;
        private final MetadataSchema.Lease lease;
        private final String text;

        public Statements(Dialect dialect, ModelView m, Clock clock) {
            this(dialect, m.metadata(), m.name(), clock);
        }

        /** The statements of model {@code model} in metadata schema {@code metadata} (no source needed). */
        public Statements(Dialect dialect, MetadataSchema metadata, String model, Clock clock) {
            this.dialect = dialect;
            this.model = model;
            this.clock = clock;
            this.lease = metadata.lease();
            this.text = dialect.columnType(new SourceColumn("text", java.sql.Types.VARCHAR, "VARCHAR", 256, 0));
        }

        String model() {
            return model;
        }

        private String id(String name) {
            return dialect.quote(name);
        }

        /** The lease table, qualified and quoted. */
        public String table() {
            return lease.spec().name().parts().stream().map(dialect::quote).collect(Collectors.joining("."));
        }

        /** Whether the lease table exists (JDBC metadata). */
        boolean tableExists(Connection c) throws SQLException {
            List<String> parts = lease.spec().name().parts();
            String catalog = parts.size() == 3 ? parts.get(0) : null;
            String schema = parts.size() >= 2 ? parts.get(parts.size() - 2) : null;
            try (ResultSet rs = c.getMetaData().getTables(catalog, schema, parts.get(parts.size() - 1), null)) {
                return rs.next();
            }
        }

        /** Creates the schema and the lease table if missing. */
        public List<Statement> createTable() {
            return dialect.createTable(lease.spec());
        }

        /**
         * Takes the lease when the model has no row, the row is free or expired, or {@code owner} already holds it (a
         * retry after an answer that got lost); every taking raises the fence. Update count 1: held; 0: someone else
         * holds it.
         */
        public Statement acquire(String owner, long nowMillis, long expiresMillis) {
            String l = "l.";
            String r = "r.";
            return Statement.builder("lock").sql("MERGE INTO " + table() + " l USING (SELECT CAST(").bind(model)
                    .sql(" AS " + text + ") AS " + id(lease.model()) + ", CAST(").bind(owner).sql(" AS " + text
                            + ") AS " + id(lease.owner()) + ", ").sql(millis(nowMillis)).sql(" AS " + id("now") + ", ")
                    .sql(millis(expiresMillis)).sql(" AS " + id(lease.expiresAt()) + ") r ON "
                            + l + id(lease.model()) + " = " + r + id(lease.model())
                            + " WHEN MATCHED AND (" + l + id(lease.owner()) + " IS NULL OR " + l + id(lease.expiresAt())
                            + " IS NULL OR " + l + id(lease.expiresAt()) + " < " + r + id("now") + " OR " + l
                            + id(lease.owner()) + " = " + r + id(lease.owner()) + ") THEN UPDATE SET "
                            + id(lease.owner()) + " = " + r + id(lease.owner()) + ", " + id(lease.expiresAt()) + " = "
                            + r + id(lease.expiresAt()) + ", " + id(lease.fence()) + " = COALESCE(" + l
                            + id(lease.fence()) + ", 0) + 1 WHEN NOT MATCHED THEN INSERT (" + id(lease.model()) + ", "
                            + id(lease.owner()) + ", " + id(lease.expiresAt()) + ", " + id(lease.fence()) + ") VALUES ("
                            + r + id(lease.model()) + ", " + r + id(lease.owner()) + ", " + r + id(lease.expiresAt())
                            + ", 1)").build();
        }

        /** Extends the lease if it is still ours. Update count 1: still held; 0: lost. */
        public Statement renew(String owner, long fence, long expiresMillis) {
            return Statement.builder("lock").sql("UPDATE " + table() + " SET " + id(lease.expiresAt()) + " = ")
                    .sql(millis(expiresMillis)).sql(" WHERE " + id(lease.model()) + " = ").bind(model)
                    .sql(" AND " + id(lease.owner()) + " = ").bind(owner).sql(" AND " + id(lease.fence()) + " = ")
                    .bind(fence).build();
        }

        /** Frees the lease if it is still ours; the fence stays. */
        public Statement release(String owner, long fence) {
            return Statement.builder("lock").sql("UPDATE " + table() + " SET " + id(lease.owner()) + " = NULL, "
                    + id(lease.expiresAt()) + " = NULL WHERE " + id(lease.model()) + " = ").bind(model)
                    .sql(" AND " + id(lease.owner()) + " = ").bind(owner).sql(" AND " + id(lease.fence()) + " = ")
                    .bind(fence).build();
        }

        /** The model's lease row: owner, expires_at (epoch ms or NULL), fence. */
        public Statement read() {
            return Statement.builder("lock").sql("SELECT " + id(lease.owner()) + ", "
                    + clock.toMillis().apply(id(lease.expiresAt())) + ", " + id(lease.fence()) + " FROM " + table()
                    + " WHERE " + id(lease.model()) + " = ").bind(model).build();
        }

        /** A bound epoch-millisecond value converted to a TIMESTAMP. */
        private Statement millis(long value) {
            String[] around = clock.toTimestamp().apply("\u0000").split("\u0000", -1);
            return Statement.builder("lock").sql(around[0]).bind(value).sql(around[1]).build();
        }
    }
}
