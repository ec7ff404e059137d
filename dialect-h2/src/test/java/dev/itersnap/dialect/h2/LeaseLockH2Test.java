package dev.itersnap.dialect.h2;

import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.conformance.LeaseModels;
import dev.itersnap.conformance.SwitchableDataSource;
import dev.itersnap.spi.lease.LeaseLock;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.Locale;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * LeaseLock's logic on a real database (H2: its MERGE returns the update count the way Delta's num_affected_rows
 * does), with TTLs of a few seconds. The lease is the model lock of databases without row locks (Delta Lake); the
 * Delta statements themselves are proven in the Databricks module's LeaseLockDeltaTest.
 */
class LeaseLockH2Test {
    private static final Duration TTL = Duration.ofSeconds(2);

    private static final AtomicLong DATABASES = new AtomicLong();

    /** H2's epoch-millisecond conversions. */
    private static final LeaseLock.Clock CLOCK = H2Dialect.LEASE_CLOCK;

    private final DataSource ds = h2();
    private final LeaseLock.Statements sql = new LeaseLock.Statements(new H2Dialect(),
            LeaseModels.leaseModel("customers", "itersnap_metadata", x -> x.toUpperCase(Locale.ROOT)), CLOCK);

    /** A fresh in-memory H2 database. */
    private static DataSource h2() {
        JdbcDataSource h2 = new JdbcDataSource();
        h2.setURL("jdbc:h2:mem:lease_" + DATABASES.incrementAndGet() + ";DB_CLOSE_DELAY=-1");
        return h2;
    }

    private LeaseLock acquire(DataSource source, Duration timeout, Duration ttl) throws SQLException {
        return LeaseLock.acquire(source, sql, timeout, () -> "run r-1 started 06:00", ttl, LeaseLock.newOwner());
    }

    private LeaseLock.Row row() throws SQLException {
        try (Connection c = ds.getConnection()) {
            return LeaseLock.read(c, sql);
        }
    }

    @Test
    void firstAcquisitionCreatesTheLeaseRowWithFenceOneAndCloseFreesIt() throws SQLException {
        long before = System.currentTimeMillis();
        LeaseLock lease = acquire(ds, Duration.ZERO, TTL);
        LeaseLock.Row held = row();
        assertThat(held.owner()).isEqualTo(lease.owner()).matches("[^/]+/\\d+/[0-9a-f-]{36}");
        assertThat(held.fence()).isEqualTo(1);
        assertThat(lease.fence()).isEqualTo(1);
        assertThat(held.expiresMillis()).isBetween(before + TTL.toMillis(), System.currentTimeMillis() + TTL.toMillis());

        lease.close();
        assertThat(row()).isEqualTo(new LeaseLock.Row(null, null, 1));
        lease.close(); // twice: nothing happens, nothing thrown

        try (LeaseLock next = acquire(ds, Duration.ZERO, TTL)) {
            assertThat(next.fence()).isEqualTo(2); // a freed lease is taken at once; every acquisition raises the fence
        }
    }

    @Test
    void aHeldLeaseIsRefusedAndTheTimeoutNamesTheHolder() throws SQLException {
        try (LeaseLock holder = acquire(ds, Duration.ZERO, Duration.ofSeconds(30))) {
            long t0 = System.nanoTime();
            assertThatThrownBy(() -> acquire(ds, Duration.ofMillis(1500), TTL))
                    .isInstanceOfSatisfying(ItersnapException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.LOCK_TIMEOUT))
                    .hasMessageContaining("model 'customers' is locked by another run (lease owner " + holder.owner()
                            + ", expires 20")
                    .hasMessageContaining("fence 1; run r-1 started 06:00); gave up after 1500ms (lock_timeout)")
                    .hasMessageContaining("lapses at its expiry (TTL 2s)");
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).isGreaterThanOrEqualTo(Duration.ofMillis(1500));
            assertThat(row().owner()).isEqualTo(holder.owner());
            assertThat(row().fence()).isEqualTo(1);
        }
    }

    /**
     * Two runs in one JVM get different owners, so the second is refused. The same owner may take its lease again (an
     * acquisition whose answer was lost and is retried): the fence goes up, and the older handle, now stale, finds
     * out at its next renewal and stops.
     */
    @Test
    void reentryOnlyForTheSameOwnerAndItFencesTheOlderHandle() throws Exception {
        String owner = LeaseLock.newOwner();
        LeaseLock first = LeaseLock.acquire(ds, sql, Duration.ZERO, () -> "", TTL, owner);
        assertThatThrownBy(() -> acquire(ds, Duration.ZERO, TTL)).isInstanceOf(ItersnapException.class)
                .hasMessageContaining("gave up after 0ms");
        LeaseLock again = LeaseLock.acquire(ds, sql, Duration.ZERO, () -> "", TTL, owner);
        assertThat(again.fence()).isEqualTo(2);
        Thread.sleep(TTL.toMillis() / 3 + 600); // one heartbeat of the first handle: its fence is stale
        assertThatThrownBy(first::verifyHeld).isInstanceOfSatisfying(ItersnapException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.LOCK_TIMEOUT))
                .hasMessageContaining("model 'customers' lost its lease: its lease row no longer has owner " + owner
                        + " and fence 1");
        first.close(); // lost: does not free the row, which is the newer handle's
        assertThat(row().owner()).isEqualTo(owner);
        again.verifyHeld();
        again.close();
        assertThat(row().owner()).isNull();
    }

    /** Threads race for one model's lease, several rounds each: never two holders, every one gets it in turn. */
    @Test
    void concurrentAcquirersHoldTheLeaseOneAtATime() throws Exception {
        int threads = 6;
        int rounds = 3;
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger maxInside = new AtomicInteger();
        Set<Long> fences = Collections.newSetFromMap(new ConcurrentHashMap<>());
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<Integer>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                done.add(pool.submit(() -> {
                    for (int r = 0; r < rounds; r++) {
                        try (LeaseLock lease = acquire(ds, Duration.ofSeconds(60), Duration.ofSeconds(10))) {
                            maxInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
                            fences.add(lease.fence());
                            Thread.sleep(30);
                            lease.verifyHeld();
                            inside.decrementAndGet();
                        }
                    }
                    return rounds;
                }));
            }
            int held = 0;
            for (Future<Integer> f : done) {
                held += f.get();
            }
            assertThat(held).isEqualTo(threads * rounds);
        } finally {
            pool.shutdownNow();
        }
        assertThat(maxInside.get()).isEqualTo(1);
        assertThat(new TreeSet<>(fences)).hasSize(threads * rounds).first().isEqualTo(1L);
        assertThat(row()).isEqualTo(new LeaseLock.Row(null, null, threads * rounds));
        try (Connection c = ds.getConnection(); var rs = c.createStatement().executeQuery(
                "SELECT COUNT(*) FROM \"ITERSNAP_METADATA\".\"ITERSNAP_LEASE\"")) {
            rs.next();
            assertThat(rs.getInt(1)).isEqualTo(1); // one row per model, even when the first acquisitions raced
        }
    }

    /**
     * A holder cut off from the database (its heartbeats fail) stops writing before its lease lapses; once it lapses
     * another run takes it over with a higher fence, and when the first holder is back its verifyHeld fails.
     */
    @Test
    void aCutOffHolderStopsBeforeTheTakeoverAndIsFencedAfterIt() throws Exception {
        SwitchableDataSource network = new SwitchableDataSource(ds);
        long requestedWall = System.currentTimeMillis();
        LeaseLock cutOff = acquire(network, Duration.ZERO, TTL);
        long acquired = System.nanoTime();
        network.down();
        cutOff.verifyHeld(); // still comfortably valid: no database access needed

        Thread.sleep(Math.max(0, TTL.toMillis() - TTL.toMillis() / 3 + 100 - (System.nanoTime() - acquired) / 1_000_000));
        assertThatThrownBy(cutOff::verifyHeld).isInstanceOfSatisfying(ItersnapException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.LOCK_TIMEOUT))
                .hasMessageContaining("lost its lease: it could not be renewed")
                .hasMessageContaining("network is down");

        long t0 = System.nanoTime();
        try (LeaseLock taker = acquire(ds, Duration.ofSeconds(10), TTL)) {
            // not before the expiry, which counts from the request by the clients' wall clocks (the lease's clock; the
            // row stores milliseconds): measured by the monotonic clock instead, a step of the machine's wall clock
            // during the test (seen here once: 160 ms) would look like an early takeover
            assertThat(System.currentTimeMillis()).isGreaterThanOrEqualTo(requestedWall + TTL.toMillis() - 2);
            assertThat(taker.fence()).isEqualTo(2);
            System.out.printf("[lease] takeover after %d ms of waiting%n", (System.nanoTime() - t0) / 1_000_000);
            network.up();
            assertThatThrownBy(cutOff::verifyHeld).hasMessageContaining("lost its lease: its lease row no longer has "
                    + "owner " + cutOff.owner() + " and fence 1");
            cutOff.close(); // never throws, does not free the taker's lease
            assertThat(row().owner()).isEqualTo(taker.owner());
            taker.verifyHeld();
        }
    }

    /**
     * A lease's validity counts from when its request was sent, not from when the answer came back: the row's expiry
     * is the request's time plus the TTL. Here the acquisition's write answers 1.5 s late with a 2 s TTL and then the
     * holder is cut off (no renewal lands). Just after the row's expiry the holder must not believe it still holds
     * the lease (counted from the answer it would, for 1.5 s more), and another run takes it over.
     */
    @Test
    void validityCountsFromTheRequestNotFromALateAnswer() throws Exception {
        acquire(ds, Duration.ZERO, TTL).close(); // the lease table exists: the acquisition is one late MERGE
        SwitchableDataSource network = new SwitchableDataSource(lateAnswers(ds, 1500));
        long sent = System.nanoTime();
        LeaseLock holder = acquire(network, Duration.ZERO, TTL);
        long answered = System.nanoTime();
        assertThat(Duration.ofNanos(answered - sent)).isGreaterThanOrEqualTo(Duration.ofMillis(1500));
        network.down();
        Thread.sleep(Math.max(0, TTL.toMillis() + 100 - (System.nanoTime() - sent) / 1_000_000));
        assertThat(System.nanoTime() - answered).as("still inside what a count from the answer would give, less its "
                + "margin").isLessThan(TTL.toNanos() - TTL.toNanos() / 3);
        assertThatThrownBy(holder::verifyHeld).isInstanceOfSatisfying(ItersnapException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.LOCK_TIMEOUT))
                .hasMessageContaining("lost its lease: it could not be renewed").hasMessageContaining("has expired");
        try (LeaseLock taker = acquire(ds, Duration.ZERO, TTL)) { // the row's expiry has passed: taken at once
            assertThat(taker.fence()).isEqualTo(3);
            network.up();
            assertThatThrownBy(holder::verifyHeld).hasMessageContaining("its lease row no longer has owner "
                    + holder.owner() + " and fence 2");
            holder.close();
            assertThat(row().owner()).isEqualTo(taker.owner());
        }
    }

    /** {@code target} whose writes (executeUpdate) take effect at once and answer {@code lateMillis} later. */
    private static DataSource lateAnswers(DataSource target, long lateMillis) {
        return (DataSource) java.lang.reflect.Proxy.newProxyInstance(LeaseLockH2Test.class.getClassLoader(),
                new Class<?>[] {DataSource.class}, (p, m, args) -> {
                    Object r = invoke(target, m, args);
                    if (!(r instanceof Connection c)) {
                        return r;
                    }
                    return java.lang.reflect.Proxy.newProxyInstance(LeaseLockH2Test.class.getClassLoader(),
                            new Class<?>[] {Connection.class}, (pc, mc, ac) -> {
                                Object rc = invoke(c, mc, ac);
                                if (!(rc instanceof java.sql.PreparedStatement ps)) {
                                    return rc;
                                }
                                return java.lang.reflect.Proxy.newProxyInstance(
                                        LeaseLockH2Test.class.getClassLoader(),
                                        new Class<?>[] {java.sql.PreparedStatement.class}, (pp, mp, ap) -> {
                                            Object rp = invoke(ps, mp, ap);
                                            if (mp.getName().equals("executeUpdate")) {
                                                Thread.sleep(lateMillis);
                                            }
                                            return rp;
                                        });
                            });
                });
    }

    private static Object invoke(Object target, java.lang.reflect.Method m, Object[] args) throws Throwable {
        try {
            return m.invoke(target, args);
        } catch (java.lang.reflect.InvocationTargetException e) {
            throw e.getCause();
        }
    }

    /** A crashed holder never renews nor releases: its lease is taken over once it expires, not before. */
    @Test
    void aCrashedHoldersLeaseIsTakenOverAfterItExpires() throws Exception {
        long now = System.currentTimeMillis();
        try (Connection c = ds.getConnection()) {
            LeaseLock.acquire(ds, sql, Duration.ZERO, () -> "", TTL, "crashed/1/x").close();
            var s = sql.acquire("crashed/1/x", now, now + 1500); // what the crashed run wrote last
            try (var ps = s.prepare(c)) {
                assertThat(ps.executeUpdate()).isEqualTo(1);
            }
        }
        assertThatThrownBy(() -> acquire(ds, Duration.ZERO, TTL)).hasMessageContaining("lease owner crashed/1/x");
        try (LeaseLock taker = acquire(ds, Duration.ofSeconds(10), TTL)) {
            assertThat(System.currentTimeMillis()).isGreaterThan(now + 1500);
            assertThat(taker.fence()).isEqualTo(3);
        }
    }

    /** The heartbeat keeps a run that outlasts its TTL several times over; nobody else gets in meanwhile. */
    @Test
    void theHeartbeatKeepsALongHolderAlivePastItsTtl() throws Exception {
        try (LeaseLock lease = acquire(ds, Duration.ZERO, TTL)) {
            long firstExpiry = row().expiresMillis();
            long end = System.nanoTime() + 3 * TTL.toNanos();
            int refused = 0;
            while (System.nanoTime() < end) {
                lease.verifyHeld();
                try {
                    acquire(ds, Duration.ZERO, TTL).close();
                } catch (ItersnapException e) {
                    refused++;
                }
                Thread.sleep(200);
            }
            assertThat(refused).isGreaterThan(10);
            LeaseLock.Row row = row();
            assertThat(row.owner()).isEqualTo(lease.owner());
            assertThat(row.fence()).isEqualTo(1);
            assertThat(row.expiresMillis()).isGreaterThan(firstExpiry + TTL.toMillis());
        }
    }

    @Test
    void observeSaysHeldOnlyWhileALiveOwnerHoldsAnUnexpiredLease() throws SQLException {
        try (Connection c = ds.getConnection()) {
            assertThat(LeaseLock.observe(c, sql)).isEqualTo(new dev.itersnap.spi.LockState(
                    dev.itersnap.spi.LockState.Held.FREE, null)); // no lease table yet: never held
        }
        LeaseLock lease = acquire(ds, Duration.ZERO, TTL);
        try (Connection c = ds.getConnection()) {
            dev.itersnap.spi.LockState held = LeaseLock.observe(c, sql);
            assertThat(held.held()).isEqualTo(dev.itersnap.spi.LockState.Held.HELD);
            assertThat(held.holder()).startsWith("lease owner " + lease.owner() + ", expires ");
        }
        lease.close();
        try (Connection c = ds.getConnection()) {
            assertThat(LeaseLock.observe(c, sql).held()).isEqualTo(dev.itersnap.spi.LockState.Held.FREE);
            long now = System.currentTimeMillis();
            try (var ps = sql.acquire("crashed/1/x", now - 5000, now - 1000).prepare(c)) { // a dead run's lease
                ps.executeUpdate();
            }
            dev.itersnap.spi.LockState left = LeaseLock.observe(c, sql);
            assertThat(left.held()).isEqualTo(dev.itersnap.spi.LockState.Held.FREE);
            assertThat(left.holder()).startsWith("the lease of crashed/1/x expired at ");
        }
    }
}
