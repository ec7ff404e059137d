package dev.itersnap.dialect.databricks;

import dev.itersnap.conformance.LeaseModels;
import dev.itersnap.conformance.RawTable;
import dev.itersnap.conformance.SnapshotFixture;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.RunResult;
import dev.itersnap.core.SnapshotEvent;
import dev.itersnap.core.SnapshotListener;
import dev.itersnap.spi.ModelLock;
import dev.itersnap.spi.ModelView;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.types.DataTypes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One writer even during a statement longer than the lease (issue 28): a run whose source query takes 2.5 times the
 * lease's TTL (a UDF that sleeps once, in the statement that stages the source) keeps its lease through the
 * statement, because the heartbeat's renewals run outside the session's statement window (SparkConnection); a second
 * job, in its own session like a separate job on the same tables, waits for the lease and takes it only after the
 * first run has finished.
 *
 * <p>Two forms. The lean one runs by default, at the lease itself (no engine run: a 25 s statement under a 10 s TTL
 * and a few lease statements; 31 s in the Spark 4.2 module's build, 65 s alone in a cold JVM, of which 6 s start
 * the session and 28 s create the lease table and take the lease): job 1 holds the lease through the statement and
 * job 2 gets it only after job 1 released it. The full
 * one ({@code -Ditersnap.spark.all=true}; 134-151 s on the 2-core build machine) is the engine run above, its second
 * job an engine run too, and compares the history and the ledger with one clean run in a schema of its own.
 *
 * <p>Before the fix the heartbeat waited behind the sleeping statement, the lease lapsed, the second job took it
 * about one TTL into the statement, and the first run found out only after its statement ended. Checked: with the
 * lease's connections taken from the run's own data source instead of {@code SparkDataSource.outsideWindow} in
 * {@code DatabricksDialect.lock}, the lean form fails (job 2 takes the lease during the statement, job 1's
 * {@code verifyHeld} reports it lost); the full form was checked with SparkConnection's outside-window branch
 * disabled and fails the same way.
 */
@SparkSelection("aStatementLongerThanTheLeaseDoesNotStopItsHeartbeat")
class SparkLeaseHeartbeatTest {
    private static final Duration TTL = Duration.ofSeconds(6);
    private static final long PAUSE_MS = 15_000;
    /**
     * The lean form's TTL and statement: a longer TTL than the full form's, so that a renewal (a Delta UPDATE, a few
     * seconds on a loaded 2-core machine) cannot outlast two thirds of it; the statement 2.5 TTLs long.
     */
    private static final Duration LEAN_TTL = Duration.ofSeconds(10);
    private static final long LEAN_PAUSE_MS = 25_000;
    private static final String SOURCE = "SELECT * FROM raw_customers WHERE itersnap_pause(id)";

    /** Set when the first run has taken its lease: the next source row it reads sleeps {@link #PAUSE_MS}. */
    private static final AtomicBoolean ARMED = new AtomicBoolean();
    /** Counted down when the sleep starts. Static: a UDF is serialized, local executors share the JVM. */
    private static final AtomicReference<CountDownLatch> PAUSING = new AtomicReference<>();

    /**
     * The lean form, at the lease itself: job 1 holds the model's lease and runs a statement 2.5 TTLs long in its
     * session, while job 2, in its own session, waits for the lease. Job 1 must still hold its lease after the
     * statement ({@code verifyHeld}), and job 2 must get it only after job 1 released it.
     */
    @Test
    @Timeout(180)
    @SuppressWarnings("try") // the lease is held, not used
    void aStatementLongerThanTheLeaseDoesNotStopItsHeartbeat() throws Exception {
        long t0 = System.nanoTime();
        SparkSession root = SparkTestSession.get();
        long session = System.nanoTime() - t0;
        SparkSession session1 = root.newSession();
        SparkSession session2 = root.newSession();
        registerPause(session1, LEAN_PAUSE_MS);
        root.sql("CREATE SCHEMA lease_hb_lean");
        DataSource job1 = SparkTestDatabase.on(session1, "lease_hb_lean");
        DataSource job2 = SparkTestDatabase.on(session2, "lease_hb_lean");
        ModelView model = LeaseModels.leaseModel("customers", ModelSettings.DEFAULT_METADATA_SCHEMA,
                x -> x.toLowerCase(Locale.ROOT));
        DatabricksDialect dialect = new DatabricksDialect(LEAN_TTL);
        List<String> timeline = new CopyOnWriteArrayList<>();
        List<Throwable> failures = new CopyOnWriteArrayList<>();
        Thread waiter = new Thread(() -> {
            try (ModelLock taken = dialect.lock(job2, model, Duration.ofMinutes(2), () -> "job 1")) {
                timeline.add("job2 took the lease");
            } catch (Throwable e) {
                failures.add(e);
            }
        }, "itersnap-job2");
        waiter.setDaemon(true);
        long statement;
        long ready;
        try (ModelLock lease = dialect.lock(job1, model, Duration.ofMinutes(1), () -> "")) {
            // as before a run's first write: an acquisition that creates the lease table in a cold JVM can take
            // most of the TTL, and the check renews what is left if that is less than the margin
            lease.verifyHeld();
            ready = System.nanoTime() - t0;
            ARMED.set(true);
            long s0 = System.nanoTime();
            Thread pause = new Thread(() -> {
                try (Connection c = job1.getConnection(); java.sql.Statement st = c.createStatement();
                     ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM range(1) WHERE itersnap_pause(CAST(id AS INT))")) {
                    rs.next();
                } catch (Throwable e) {
                    failures.add(e);
                }
            }, "itersnap-job1-statement");
            pause.start();
            assertThat(PAUSING.get().await(60, TimeUnit.SECONDS)).as("the long statement started").isTrue();
            waiter.start(); // job 2 waits from the statement's start
            pause.join(TimeUnit.MINUTES.toMillis(2));
            statement = System.nanoTime() - s0;
            timeline.add("job1 statement ended");
            lease.verifyHeld();
            timeline.add("job1 still holds its lease, releases it");
        }
        waiter.join(TimeUnit.MINUTES.toMillis(2));
        System.out.printf("[lease heartbeat, lean] %s; session ready after %.1f s, lease held after %.1f s, "
                        + "statement %.1f s, test %.1f s%n", timeline, session / 1e9, ready / 1e9, statement / 1e9,
                (System.nanoTime() - t0) / 1e9);
        assertThat(failures).isEmpty();
        assertThat(Duration.ofNanos(statement)).isGreaterThan(Duration.ofMillis(LEAN_PAUSE_MS));
        assertThat(timeline).as("job 2 takes the lease only after job 1 released it").containsExactly(
                "job1 statement ended", "job1 still holds its lease, releases it", "job2 took the lease");
    }

    /** Registers {@code itersnap_pause} in {@code session}: the first row read once {@link #ARMED} sleeps. */
    private static void registerPause(SparkSession session, long pauseMs) {
        PAUSING.set(new CountDownLatch(1));
        session.udf().register("itersnap_pause", (UDF1<Integer, Boolean>) id -> {
            if (ARMED.compareAndSet(true, false)) {
                PAUSING.get().countDown();
                Thread.sleep(pauseMs);
            }
            return true;
        }, DataTypes.BooleanType);
    }

    @Test
    @Timeout(300)
    void aStatementLongerThanTheLeaseKeepsItAndTheWaitingJobRunsAfterward() throws Exception {
        long t0 = System.nanoTime();
        SparkSession root = SparkTestSession.get();
        SparkSession session1 = root.newSession();
        SparkSession session2 = root.newSession();
        registerPause(session1, PAUSE_MS);
        session2.udf().register("itersnap_pause", (UDF1<Integer, Boolean>) id -> true, DataTypes.BooleanType);
        assertThat(PAUSE_MS).isGreaterThan(2 * TTL.toMillis());

        root.sql("CREATE SCHEMA lease_hb");
        SparkTestDatabase types = new SparkTestDatabase();
        SnapshotFixture job1 = new SnapshotFixture(SparkTestDatabase.on(session1, "lease_hb"), types::type)
                .dialect(new DatabricksDialect(TTL));
        SnapshotFixture job2 = new SnapshotFixture(SparkTestDatabase.on(session2, "lease_hb"), types::type)
                .dialect(new DatabricksDialect(TTL));
        deliver(customers(job1));
        ModelSettings m = model(SOURCE);

        List<String> timeline = new CopyOnWriteArrayList<>();
        List<Object> outcomes = new CopyOnWriteArrayList<>();
        Thread first = job(job1, m, "job1", timeline, outcomes, e -> {
            if (e instanceof SnapshotEvent.RunStarted) {
                ARMED.set(true); // under the lease: the source is read next
            }
        });
        first.start();
        assertThat(PAUSING.get().await(120, TimeUnit.SECONDS)).as("the first run's long statement started").isTrue();
        long pause = System.nanoTime();
        timeline.add("job1 statement started");
        Thread second = job(job2, m, "job2", timeline, outcomes, e -> { });
        second.start();
        first.join(TimeUnit.MINUTES.toMillis(3));
        second.join(TimeUnit.MINUTES.toMillis(3));
        System.out.printf("[lease heartbeat] %s; the long statement started %d s in%n", timeline,
                (pause - t0) / 1_000_000_000);

        assertThat(timeline).as("the second job takes the lease only after the first run finished").containsExactly(
                "job1 RunStarted", "job1 statement started", "job1 RunFinished", "job2 RunStarted", "job2 RunFinished");
        assertThat(outcomes).hasSize(2).allSatisfy(o -> assertThat(o).isInstanceOf(RunResult.class));
        RunResult r1 = (RunResult) outcomes.stream().filter(o -> ((RunResult) o).batchesApplied() > 0).findFirst()
                .orElseThrow();
        assertThat(r1.batchesApplied()).isEqualTo(2);
        assertThat(r1.duration()).isGreaterThan(Duration.ofMillis(PAUSE_MS));
        assertThat(outcomes.stream().mapToInt(o -> ((RunResult) o).batchesApplied()).sum())
                .as("the waiting job found nothing left to apply").isEqualTo(2);

        // one clean run over the same rows, in a schema of its own
        long clean = System.nanoTime();
        root.sql("CREATE SCHEMA lease_hb_clean");
        SnapshotFixture alone = new SnapshotFixture(SparkTestDatabase.on(root.newSession(), "lease_hb_clean"),
                types::type).dialect(new DatabricksDialect(TTL));
        deliver(customers(alone));
        alone.run(model("SELECT * FROM raw_customers"));
        assertThat(job1.history("snap_customers")).isEqualTo(alone.history("snap_customers"));
        assertThat(job1.ledgerCounts("customers")).isEqualTo(alone.ledgerCounts("customers"));
        System.out.printf("[lease heartbeat] test %d s, of which the clean run %d s%n",
                (System.nanoTime() - t0) / 1_000_000_000, (System.nanoTime() - clean) / 1_000_000_000);
    }

    private static RawTable customers(SnapshotFixture f) {
        return f.rawTable("raw_customers", "id INT", "status VARCHAR(20)", "tier VARCHAR(20)", "updated_at TIMESTAMP",
                "file_date DATE");
    }

    /** Two daily files of five keys; every key changes its status on the second day. */
    private static void deliver(RawTable raw) {
        List<Object[]> rows = new ArrayList<>();
        for (LocalDate day : List.of(LocalDate.parse("2024-01-01"), LocalDate.parse("2024-01-02"))) {
            int n = day.getDayOfMonth();
            for (int id = 1; id <= 5; id++) {
                rows.add(new Object[] {id, "S" + ((id + n) % 3), "T" + (id % 2), day.atTime(9, 0).plusMinutes(id),
                        day});
            }
        }
        raw.insertAll(rows);
    }

    private static ModelSettings model(String source) {
        return ModelSettings.builder("customers").target("snap_customers").source(source).uniqueKey("id")
                .updatedAt("updated_at").sequenceBy("file_date").lockTimeout(Duration.ofMinutes(3)).build();
    }

    /** A thread running {@code m} once with {@code f}'s engine, noting its run's start and end in {@code timeline}. */
    private static Thread job(SnapshotFixture f, ModelSettings m, String name, List<String> timeline,
                              List<Object> outcomes, SnapshotListener also) {
        SnapshotListener listener = e -> {
            if (e instanceof SnapshotEvent.RunStarted || e instanceof SnapshotEvent.RunFinished
                    || e instanceof SnapshotEvent.RunFailed) {
                timeline.add(name + " " + e.getClass().getSimpleName());
            }
            also.onEvent(e);
        };
        Thread t = new Thread(() -> {
            try {
                outcomes.add(f.engine(listener).run(m));
            } catch (Throwable e) {
                outcomes.add(e);
                e.printStackTrace();
            }
        }, "itersnap-" + name);
        t.setDaemon(true);
        return t;
    }
}
