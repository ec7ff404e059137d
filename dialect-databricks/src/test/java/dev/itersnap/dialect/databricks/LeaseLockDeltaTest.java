package dev.itersnap.dialect.databricks;

import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.conformance.SwitchableDataSource;
import dev.itersnap.spi.lease.LeaseLock;
import dev.itersnap.spi.NamedMarkers;
import dev.itersnap.spi.Statement;

import java.io.IOException;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The exact statements the lease emits on Databricks ({@link LeaseLock.Statements} of {@link DatabricksDialect}), run on a
 * local SparkSession with Delta Lake: update counts 1 and 0 where the lease logic expects them, and Delta's
 * write conflict recognised by {@link LeaseLock#isConflict}. The logic around them is tested in
 * LeaseLockH2Test (H2 module).
 */
class LeaseLockDeltaTest {
    private static final long TTL_MS = 300_000;
    private static SparkSession spark;
    private static LeaseLock.Statements sql;

    @BeforeAll
    static void session() throws IOException {
        // a session of the module's one SparkContext (one per JVM; its settings must not depend on test order), set
        // like SparkDataSource's: Delta 4.4.0's parser drops parameter markers (delta-io/delta#7640)
        spark = bindingSession(SparkTestSession.get());
        sql = LeaseFixture.deltaLease("customers", "lease_meta");
        run(spark, Statement.of("test", "DROP SCHEMA IF EXISTS `lease_meta` CASCADE"));
    }

    /** A new session of {@code root}'s application that binds parameters in the analyzer (as SparkDataSource does). */
    private static SparkSession bindingSession(SparkSession root) {
        SparkSession s = root.newSession();
        s.conf().set("spark.sql.legacy.parameterSubstitution.constantsOnly", "true");
        s.conf().set("spark.sql.session.timeZone", "UTC");
        return s;
    }

    /** Runs a statement as itersnap's Spark path does: named markers, each value bound by name. */
    static Dataset<Row> run(SparkSession s, Statement st) {
        if (st.values().isEmpty()) {
            return s.sql(st.sql());
        }
        Map<String, Object> args = new HashMap<>();
        for (int i = 1; i <= st.values().size(); i++) {
            args.put(NamedMarkers.name(i), st.values().get(i - 1));
        }
        return s.sql(st.sql(NamedMarkers::marker), args);
    }

    /** num_affected_rows of a MERGE or UPDATE. */
    static long count(SparkSession s, Statement st) {
        return run(s, st).first().getLong(0);
    }

    static LeaseLock.Row row() {
        List<Row> rows = run(spark, sql.read()).collectAsList();
        assertThat(rows).hasSizeLessThanOrEqualTo(1);
        if (rows.isEmpty()) {
            return null;
        }
        Row r = rows.get(0);
        return new LeaseLock.Row(r.getString(0), r.isNullAt(1) ? null : r.getLong(1), r.getLong(2));
    }

    @Test
    void leaseStatementsCountOneWhenHeldAndZeroWhenNot() throws Exception {
        long t0 = System.nanoTime();
        sql.createTable().forEach(st -> run(spark, st));
        sql.createTable().forEach(st -> run(spark, st)); // idempotent
        assertThat(run(spark, Statement.of("test", "DESCRIBE DETAIL " + sql.table())).first()
                .<String>getAs("format")).isEqualTo("delta");

        // two first acquisitions race on the missing row: one holds it, the other gets 0 rows or a write conflict
        List<Object> outcomes = race("A", "B");
        System.out.println("[lease] race on a missing row: " + outcomes);
        assertThat(outcomes.stream().filter(o -> Long.valueOf(1).equals(o))).hasSize(1);
        for (Object o : outcomes) {
            if (o instanceof Throwable e) {
                assertThat(LeaseLock.isConflict(e)).as(e.toString()).isTrue();
                // over JDBC only the message survives, e.g. [DELTA_CONCURRENT_APPEND.WITHOUT_HINT] ...
                assertThat(LeaseLock.isConflict(new SQLException(e.getMessage()))).as(e.getMessage()).isTrue();
            }
        }
        LeaseLock.Row first = row();
        String holder = first.owner();
        String other = holder.equals("A") ? "B" : "A";
        assertThat(first.fence()).isEqualTo(1);
        long now = System.currentTimeMillis();
        assertThat(first.expiresMillis()).isBetween(now + TTL_MS - 120_000, now + TTL_MS);

        assertThat(count(spark, sql.acquire(other, now, now + TTL_MS))).as("held: refused").isZero();
        assertThat(count(spark, sql.acquire(holder, now, now + TTL_MS))).as("same owner: re-entered").isEqualTo(1);
        assertThat(row().fence()).isEqualTo(2);

        assertThat(count(spark, sql.renew(holder, 2, now + TTL_MS + 1000))).as("heartbeat").isEqualTo(1);
        assertThat(row().expiresMillis()).isEqualTo(now + TTL_MS + 1000);
        assertThat(count(spark, sql.renew(holder, 1, now + TTL_MS))).as("stale fence").isZero();
        assertThat(count(spark, sql.renew(other, 2, now + TTL_MS))).as("not the owner").isZero();

        // the other run's clock passes the expiry: it takes over, with a higher fence
        long later = now + TTL_MS + 2000;
        assertThat(count(spark, sql.acquire(other, later, later + TTL_MS))).as("takeover after expiry").isEqualTo(1);
        assertThat(row()).isEqualTo(new LeaseLock.Row(other, later + TTL_MS, 3));
        assertThat(count(spark, sql.renew(holder, 2, later + TTL_MS))).as("old holder is fenced").isZero();
        assertThat(count(spark, sql.release(holder, 2))).as("old holder cannot free it").isZero();

        assertThat(count(spark, sql.release(other, 3))).as("release").isEqualTo(1);
        assertThat(row()).isEqualTo(new LeaseLock.Row(null, null, 3));
        assertThat(count(spark, sql.acquire(holder, later, later + TTL_MS))).as("a free row is taken").isEqualTo(1);
        assertThat(row().fence()).isEqualTo(4);
        assertThat(run(spark, Statement.of("test", "SELECT COUNT(*) FROM " + sql.table())).first().getLong(0))
                .isEqualTo(1);
        System.out.printf("[lease] Delta statements: %d s%n", (System.nanoTime() - t0) / 1_000_000_000);
    }

    /**
     * LeaseLock itself on Delta, over JDBC calls on Spark sessions: it creates the table on first use, refuses a
     * second owner until its timeout, and a holder cut off from the database is taken over after its TTL, with a
     * higher fence, and finds out at its next verifyHeld.
     */
    @Test
    void theLeaseClassTakesRefusesAndIsTakenOverOnDelta() throws Exception {
        long t0 = System.nanoTime();
        LeaseLock.Statements orders = LeaseFixture.deltaLease("orders", "lease_e2e");
        run(spark, Statement.of("test", "DROP SCHEMA IF EXISTS `lease_e2e` CASCADE"));
        javax.sql.DataSource ds = SparkDataSource.of(spark);
        SwitchableDataSource network = new SwitchableDataSource(ds);
        Duration ttl = Duration.ofSeconds(20);

        LeaseLock holder = LeaseLock.acquire(network, orders, Duration.ZERO, () -> "", ttl, LeaseLock.newOwner());
        assertThat(holder.fence()).isEqualTo(1);
        assertThatThrownBy(() -> LeaseLock.acquire(ds, orders, Duration.ofSeconds(2), () -> "run r-9", ttl,
                LeaseLock.newOwner())).isInstanceOfSatisfying(ItersnapException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.LOCK_TIMEOUT))
                .hasMessageContaining("lease owner " + holder.owner() + ", expires 20")
                .hasMessageContaining("fence 1; run r-9)");
        holder.verifyHeld();

        network.down(); // the holder's heartbeats fail from now on; its lease lapses 20 s after its last renewal
        long cut = System.nanoTime();
        try (LeaseLock taker = LeaseLock.acquire(ds, orders, Duration.ofSeconds(60), () -> "", ttl,
                LeaseLock.newOwner())) {
            System.out.printf("[lease] takeover on Delta %d s after the holder was cut off%n",
                    (System.nanoTime() - cut) / 1_000_000_000);
            assertThat(taker.fence()).isEqualTo(2);
            network.up();
            assertThatThrownBy(holder::verifyHeld).isInstanceOf(ItersnapException.class)
                    .hasMessageContaining("lost its lease");
            holder.close(); // lost: leaves the taker's row alone
            taker.verifyHeld();
            try (java.sql.Connection c = ds.getConnection()) {
                assertThat(LeaseLock.read(c, orders).owner()).isEqualTo(taker.owner());
            }
        }
        try (java.sql.Connection c = ds.getConnection()) {
            assertThat(LeaseLock.read(c, orders)).isEqualTo(new LeaseLock.Row(null, null, 2));
        }
        System.out.printf("[lease] LeaseLock on Delta: %d s%n", (System.nanoTime() - t0) / 1_000_000_000);
    }

    /** Both owners run the acquiring MERGE at once, each in its own session; each gets a count or an exception. */
    private static List<Object> race(String... owners) throws Exception {
        CyclicBarrier barrier = new CyclicBarrier(owners.length);
        ExecutorService pool = Executors.newFixedThreadPool(owners.length);
        try {
            List<Future<Object>> results = new ArrayList<>();
            for (String owner : owners) {
                SparkSession own = bindingSession(spark);
                results.add(pool.submit(() -> {
                    long now = System.currentTimeMillis();
                    Statement st = sql.acquire(owner, now, now + TTL_MS);
                    barrier.await();
                    try {
                        return count(own, st);
                    } catch (RuntimeException e) {
                        return e;
                    }
                }));
            }
            List<Object> out = new ArrayList<>();
            for (Future<Object> f : results) {
                out.add(f.get());
            }
            return out;
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * Many first acquisitions of a new model's lease at once, on a metadata schema that does not exist yet, each on
     * its own session as separate jobs would be: the lease table is created once (its creation races are tolerated),
     * the model gets one row, never two, and no two of them ever hold the lease at the same time. The lease table has
     * neither deletion vectors nor row tracking, so two inserts of the first row conflict instead of both committing
     * (Databricks' row-level concurrency would let them both succeed).
     */
    @Test
    void manyFirstAcquisitionsOfANewModelNeverGiveTwoHolders() throws Exception {
        String schema = "lease_race";
        run(spark, Statement.of("test", "DROP SCHEMA IF EXISTS `" + schema + "` CASCADE"));
        LeaseLock.Statements race = LeaseFixture.deltaLease("orders", schema);
        int runs = 4;
        java.util.concurrent.atomic.AtomicInteger holding = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicInteger most = new java.util.concurrent.atomic.AtomicInteger();
        CyclicBarrier start = new CyclicBarrier(runs);
        ExecutorService pool = Executors.newFixedThreadPool(runs);
        List<Future<Long>> fences = new ArrayList<>();
        for (int i = 0; i < runs; i++) {
            String owner = "run-" + i;
            SparkDataSource ds = SparkDataSource.of(SparkTestSession.get().newSession());
            fences.add(pool.submit(() -> {
                start.await();
                try (LeaseLock lease = LeaseLock.acquire(ds, race, Duration.ofMinutes(4), () -> "test",
                        Duration.ofMinutes(2), owner)) {
                    most.accumulateAndGet(holding.incrementAndGet(), Math::max);
                    Thread.sleep(200);
                    holding.decrementAndGet();
                    return lease.fence();
                }
            }));
        }
        List<Long> taken = new ArrayList<>();
        for (Future<Long> f : fences) {
            taken.add(f.get());
        }
        pool.shutdown();
        assertThat(most.get()).as("holders at once").isEqualTo(1);
        assertThat(taken).containsExactlyInAnyOrder(1L, 2L, 3L, 4L);
        assertThat(run(spark, Statement.of("test", "SELECT count(*) FROM " + race.table() + " WHERE model = 'orders'"))
                .first().getLong(0)).as("rows of the model").isEqualTo(1);
        Map<String, String> props = new HashMap<>();
        run(spark, Statement.of("test", "SHOW TBLPROPERTIES " + race.table())).collectAsList()
                .forEach(r -> props.put(r.getString(0), r.getString(1)));
        assertThat(props).containsEntry("delta.enableDeletionVectors", "false")
                .containsEntry("delta.enableRowTracking", "false");
    }
}
