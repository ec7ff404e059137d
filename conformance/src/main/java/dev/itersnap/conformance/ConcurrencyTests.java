package dev.itersnap.conformance;

import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.IterativeSnapshot;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.RunResult;
import dev.itersnap.core.SnapshotEvent;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import static dev.itersnap.conformance.SnapshotFixture.date;
import static dev.itersnap.conformance.SnapshotFixture.ts;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * One writer per model: concurrent runs of one model never interleave, the loser waits for the
 * lock, and after {@code lock_timeout} it fails with LOCK_TIMEOUT naming the model and the holder. The database of
 * each test is shared by every thread (each run opens its own connections).
 */
public abstract class ConcurrencyTests extends ConformanceTestBase {
    private static final int KEYS = 40;

    /** Delivers one daily file: every key, with a status that depends on the day (so every key changes). */
    private static void deliver(RawTable raw, LocalDate day) {
        int n = day.getDayOfMonth();
        for (int id = 1; id <= KEYS; id++) {
            raw.insert(id, "S" + ((id + n) % 3), "T" + (n % 2), day.atTime(9, 0).plusMinutes(id), day);
        }
    }

    /**
     * Two threads run the same model at once, three rounds, each round delivering new files (one of them late). Both
     * runs of a round succeed, one after the other (the events of the two runs never interleave), and the history
     * equals a serial run over the same files.
     */
    @Test
    @Timeout(120)
    void concurrentRunsOfOneModelRunInTurnAndGiveTheSerialResult() throws Exception {
        RawTable raw = customers(fixture);
        ModelSettings m = model(raw).build();
        RecordingListener events = new RecordingListener(e -> {
            if (e instanceof SnapshotEvent.RunStarted) {
                sleep(150); // hold the lock a little, so the other run has to wait for it
            }
        });
        List<List<LocalDate>> rounds = List.of(
                List.of(date("2024-01-01"), date("2024-01-03")),
                List.of(date("2024-01-02"), date("2024-01-05")),
                List.of(date("2024-01-04"), date("2024-01-06")));
        ExecutorService pool = Executors.newFixedThreadPool(2);
        List<RunResult> results = new ArrayList<>();
        try {
            for (List<LocalDate> round : rounds) {
                round.forEach(day -> deliver(raw, day));
                CyclicBarrier together = new CyclicBarrier(2);
                List<Future<RunResult>> futures = new ArrayList<>();
                for (int t = 0; t < 2; t++) {
                    IterativeSnapshot own = fixture.engine(events);
                    futures.add(pool.submit(() -> {
                        together.await(patience(10_000), TimeUnit.MILLISECONDS);
                        return own.run(m);
                    }));
                }
                for (Future<RunResult> f : futures) {
                    results.add(f.get(patience(60_000), TimeUnit.MILLISECONDS));
                }
            }
        } finally {
            pool.shutdownNow();
        }

        assertThat(results).hasSize(6);
        assertThat(results.stream().mapToInt(RunResult::batchesApplied).sum()).as("each round's files are applied by"
                + " exactly one of its two runs (late ones replayed)").isEqualTo(2 + 3 + 3);
        assertRunsNeverInterleave(events.all());

        SnapshotFixture serial = newFixture();
        RawTable s = customers(serial);
        rounds.stream().flatMap(List::stream).sorted().forEach(day -> deliver(s, day));
        serial.run(m);
        assertThat(fixture.history(TARGET)).isEqualTo(serial.history(TARGET));
        assertThat(fixture.runs(MODEL)).hasSize(6).allSatisfy(r -> assertThat(r.status()).isEqualTo("success"));
    }

    /**
     * Between a run's RunStarted and its RunFinished no event of another run may appear. A run waiting for the lock
     * says so (WaitingForLock, after two seconds) before it starts: that one may come while another run goes on.
     */
    private static void assertRunsNeverInterleave(List<SnapshotEvent> events) {
        String open = null;
        for (SnapshotEvent e : events) {
            if (e instanceof SnapshotEvent.WaitingForLock) {
                continue;
            }
            if (e instanceof SnapshotEvent.RunStarted) {
                assertThat(open).as("run %s started while run %s was still going", e.runId(), open).isNull();
                open = e.runId();
            } else {
                assertThat(e.runId()).as("event %s outside its run", e).isEqualTo(open);
                if (e instanceof SnapshotEvent.RunFinished || e instanceof SnapshotEvent.RunFailed) {
                    open = null;
                }
            }
        }
    }

    /**
     * While one run holds the model (its listener sleeps in RunStarted), a second run with lock_timeout 200 ms gives
     * up with LOCK_TIMEOUT, naming the model and the holder (its run id and thread). The holder then finishes, and a
     * later run gets the lock.
     */
    @Test
    @Timeout(60)
    void runWaitingLongerThanLockTimeoutFailsNamingTheModelAndTheHolder() throws Exception {
        RawTable raw = customers(fixture);
        deliver(raw, date("2024-01-01"));
        ModelSettings m = model(raw).build();
        ModelSettings impatient = model(raw).lockTimeout(Duration.ofMillis(200)).build();
        CountDownLatch holding = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        RecordingListener holderEvents = new RecordingListener(e -> {
            if (e instanceof SnapshotEvent.RunStarted) {
                holding.countDown();
                await(release);
            }
        });
        List<RunResult> held = new java.util.concurrent.CopyOnWriteArrayList<>();
        List<Throwable> holderFailure = new java.util.concurrent.CopyOnWriteArrayList<>();
        Thread holder = runThread("itersnap-lock-holder", holderEvents, m, held, holderFailure);
        holder.start();
        try {
            assertThat(holding.await(patience(30_000), TimeUnit.MILLISECONDS)).as("the holder started its run").isTrue();
            String holderRun = holderEvents.of(SnapshotEvent.RunStarted.class).get(0).runId();

            long start = System.nanoTime();
            ItersnapException e = catchThrowableOfType(ItersnapException.class,
                    () -> fixture.engine(null).run(impatient));
            long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

            assertThat(e).as("the second run must give up").isNotNull();
            assertThat(e.code()).isEqualTo(ErrorCode.LOCK_TIMEOUT);
            assertThat(e.getMessage()).contains(MODEL).contains(holderRun).contains("itersnap-lock-holder");
            assertThat(waitedMs).as("waited about lock_timeout").isBetween(150L, patience(10_000));
        } finally {
            release.countDown();
            holder.join(patience(30_000));
        }
        assertThat(holderFailure).isEmpty();
        assertThat(held).singleElement().satisfies(r -> assertThat(r.batchesApplied()).isEqualTo(1));
        deliver(raw, date("2024-01-02")); // a run with nothing new takes no lock: one with a batch does
        assertThat(fixture.engine(null).run(impatient).batchesApplied()).as("the lock is free again").isEqualTo(1);
        assertThat(fixture.versions(TARGET, "id", 1)).hasSize(2);
    }

    /**
     * A run that waits for the lock says so once, after about two seconds, naming the run that holds it
     * ({@code WaitingForLock}), and goes on waiting: when the holder finishes, it takes the lock and runs. A run that
     * gets the lock at once says nothing of the kind.
     */
    @Test
    @Timeout(90)
    void runWaitingForTheLockSaysSoOnceNamingTheHolder() throws Exception {
        RawTable raw = customers(fixture);
        deliver(raw, date("2024-01-01"));
        ModelSettings m = model(raw).lockTimeout(Duration.ofSeconds(60)).build();
        CountDownLatch holding = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        RecordingListener holderEvents = new RecordingListener(e -> {
            if (e instanceof SnapshotEvent.RunStarted) {
                holding.countDown();
                await(release);
            }
        });
        CountDownLatch told = new CountDownLatch(1);
        RecordingListener waiterEvents = new RecordingListener(e -> {
            if (e instanceof SnapshotEvent.WaitingForLock) {
                told.countDown();
            }
        });
        List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
        List<RunResult> waited = new java.util.concurrent.CopyOnWriteArrayList<>();
        Thread holder = runThread("itersnap-lock-holder", holderEvents, m, new ArrayList<>(), failures);
        Thread waiter = runThread("itersnap-lock-waiter", waiterEvents, m, waited, failures);
        holder.start();
        try {
            assertThat(holding.await(patience(30_000), TimeUnit.MILLISECONDS)).as("the holder started its run").isTrue();
            String holderRun = holderEvents.of(SnapshotEvent.RunStarted.class).get(0).runId();
            long start = System.nanoTime();
            waiter.start();
            assertThat(told.await(patience(20_000), TimeUnit.MILLISECONDS)).as("the waiter said it waits").isTrue();
            long toldAfterMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertThat(toldAfterMs).as("after about two seconds").isBetween(1_500L, patience(15_000));
            SnapshotEvent.WaitingForLock w = waiterEvents.of(SnapshotEvent.WaitingForLock.class).get(0);
            assertThat(w.model()).isEqualTo(MODEL);
            assertThat(w.holder()).contains(holderRun);
            assertThat(w.waited()).isGreaterThanOrEqualTo(Duration.ofMillis(1_500));
            assertThat(waiterEvents.of(SnapshotEvent.RunStarted.class)).as("still waiting").isEmpty();
        } finally {
            release.countDown();
            holder.join(patience(30_000));
            waiter.join(patience(60_000));
        }
        assertThat(failures).isEmpty();
        assertThat(waited).singleElement().satisfies(r -> assertThat(r.batchesApplied()).isZero());
        assertThat(waiterEvents.of(SnapshotEvent.WaitingForLock.class)).as("said once").hasSize(1);
        assertThat(waiterEvents.all().get(0)).as("before the run started").isInstanceOf(
                SnapshotEvent.WaitingForLock.class);
        assertThat(holderEvents.of(SnapshotEvent.WaitingForLock.class)).as("the holder never waited").isEmpty();
    }

    /**
     * A run that finds nothing new takes no lock, so it must not take "nothing new" from a model another run is
     * writing: here the other run has applied and recorded its batch (its ledger entry committed, where each batch
     * commits) and is held before it finishes. The second run sees that run still running, waits for the lock (it says
     * so), and starts only after the holder finished, finding its batch applied. Once nothing runs, a run with nothing
     * new finishes while the lock is free and adds its row, complete.
     */
    @Test
    @Timeout(90)
    void aRunWithNothingNewDoesNotDecideSoWhileAnotherRunIsApplyingABatch() throws Exception {
        RawTable raw = customers(fixture);
        deliver(raw, date("2024-01-01"));
        ModelSettings m = model(raw).lockTimeout(Duration.ofSeconds(60)).build();
        fixture.run(m);
        deliver(raw, date("2024-01-02"));
        CountDownLatch applied = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        List<String> order = new java.util.concurrent.CopyOnWriteArrayList<>();
        RecordingListener holderEvents = new RecordingListener(e -> {
            if (e instanceof SnapshotEvent.RunFinished) {
                order.add("holder finished");
            }
            if (e instanceof SnapshotEvent.BatchApplied) {
                applied.countDown();
                await(release);
            }
        });
        CountDownLatch told = new CountDownLatch(1);
        RecordingListener waiterEvents = new RecordingListener(e -> {
            if (e instanceof SnapshotEvent.WaitingForLock) {
                told.countDown();
            }
            if (e instanceof SnapshotEvent.RunStarted) {
                order.add("second started");
            }
        });
        List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
        List<RunResult> waited = new java.util.concurrent.CopyOnWriteArrayList<>();
        Thread holder = runThread("itersnap-lock-holder", holderEvents, m, new ArrayList<>(), failures);
        Thread second = runThread("itersnap-second-run", waiterEvents, m, waited, failures);
        holder.start();
        try {
            assertThat(applied.await(patience(30_000), TimeUnit.MILLISECONDS)).as("the holder applied its batch")
                    .isTrue();
            second.start();
            assertThat(told.await(patience(20_000), TimeUnit.MILLISECONDS)).as("the second run waits for the lock")
                    .isTrue();
            assertThat(waited).as("nothing decided while the holder runs").isEmpty();
        } finally {
            release.countDown();
            holder.join(patience(30_000));
            second.join(patience(60_000));
        }
        assertThat(failures).isEmpty();
        assertThat(order).containsExactly("holder finished", "second started");
        assertThat(waited).singleElement().satisfies(r -> assertThat(r.batchesApplied()).isZero());

        RunResult idle = fixture.engine(null).run(m);
        assertThat(idle.batchesApplied()).isZero();
        assertThat(fixture.runs(MODEL)).hasSize(4).allSatisfy(r -> {
            assertThat(r.status()).isEqualTo("success");
            assertThat(r.finishedAt()).isNotNull();
        });
        assertThat(fixture.versions(TARGET, "id", 1)).hasSize(2);
    }

    /**
     * A run decides before it takes the lock; another run that applies the same batch and finishes in between changes
     * the run log, so the first run's row is added only after it found that out (the row added with the check of the
     * run log, or the check read after it): it decides again under the lock, finds the batch applied and applies
     * nothing. Applying what it decided would apply the batch twice.
     */
    @Test
    @Timeout(90)
    void aRunThatDecidedBeforeTheLockDecidesAgainWhenAnotherRunFinishedMeanwhile() {
        RawTable raw = customers(fixture);
        deliver(raw, date("2024-01-01"));
        ModelSettings m = model(raw).build();
        fixture.run(m);
        deliver(raw, date("2024-01-02"));
        FaultInjectingDataSource first = new FaultInjectingDataSource(fixture.dataSource());
        List<RunResult> between = new java.util.concurrent.CopyOnWriteArrayList<>();
        first.hook((sql, after) -> {
            String s = sql == null ? "" : sql.toLowerCase(java.util.Locale.ROOT);
            boolean locks = s.contains("advisory_lock") || s.contains("itersnap_lock") || s.contains("itersnap_lease");
            if (!after && locks && between.isEmpty()) {
                // the first run has decided (to apply 2024-01-02) and is about to take the lock: another run takes
                // it first, applies that batch and finishes
                between.add(fixture.engine(null).run(m));
            }
        });
        RunResult decidedEarly = fixture.engine(first.dataSource(), null).run(m);

        assertThat(between).as("the run in between").singleElement()
                .satisfies(r -> assertThat(r.batchesApplied()).isEqualTo(1));
        assertThat(decidedEarly.batchesApplied()).as("the batch the other run applied, not applied again").isZero();
        assertThat(fixture.ledger(MODEL)).hasSize(2);
        assertThat(fixture.versions(TARGET, "id", 1)).hasSize(2);
        assertThat(fixture.runs(MODEL)).hasSize(3).allSatisfy(r -> assertThat(r.status()).isEqualTo("success"));
    }

    /** A run that fails releases the lock: the next run, with a short lock_timeout, gets it at once. */
    @Test
    @Timeout(60)
    void failedRunReleasesTheLock() {
        RawTable raw = customers(fixture);
        deliver(raw, date("2024-01-01"));
        ModelSettings m = model(raw).lockTimeout(Duration.ofMillis(200)).build();
        fixture.run(m);
        catchThrowableOfType(ItersnapException.class, () -> fixture.engine(null).replayFrom(m, "not a date"));

        deliver(raw, date("2024-01-02"));
        assertThat(fixture.run(m).batchesApplied()).isEqualTo(1);
    }

    /** The lock is per model: while one model is held, another model on the same database runs unhindered. */
    @Test
    @Timeout(60)
    void runsOfDifferentModelsDoNotWaitForEachOther() throws Exception {
        RawTable raw = customers(fixture);
        deliver(raw, date("2024-01-01"));
        ModelSettings customers = model(raw).build();
        RawTable orders = fixture.rawTable("raw_orders", "id INT", "status VARCHAR(20)", "updated_at TIMESTAMP",
                "batch_id INT");
        orders.insert(1, "open", ts("2024-01-01 09:00"), 1);
        ModelSettings ordersModel = ModelSettings.builder("orders").target("snap_orders").source(orders.selectAll())
                .uniqueKey("id").updatedAt("updated_at").sequenceBy("batch_id").lockTimeout(Duration.ofMillis(500))
                .build();
        CountDownLatch holding = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Consumer<SnapshotEvent> hold = e -> {
            if (e instanceof SnapshotEvent.RunStarted) {
                holding.countDown();
                await(release);
            }
        };
        Thread holder = new Thread(() -> fixture.engine(new RecordingListener(hold)).run(customers),
                "itersnap-customers-holder");
        holder.start();
        try {
            assertThat(holding.await(patience(30_000), TimeUnit.MILLISECONDS)).isTrue();
            long start = System.nanoTime();
            RunResult r = fixture.engine(null).run(ordersModel);
            long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertThat(r.batchesApplied()).isEqualTo(1);
            assertThat(tookMs).as("the other model's run did not wait for the held one").isLessThan(patience(5_000));
            System.out.println("run of another model while customers was held took " + tookMs + " ms");
        } finally {
            release.countDown();
            holder.join(patience(30_000));
        }
        assertThat(fixture.history("snap_orders")).hasSize(1);
        assertThat(fixture.history(TARGET)).hasSize(KEYS);
    }

    /**
     * The first runs of two models race on an empty database (both create the metadata schema and tables): both
     * succeed and each model gets its own history and ledger.
     */
    @Test
    @Timeout(60)
    void firstRunsOfTwoModelsRaceOnAnEmptyDatabase() throws Exception {
        RawTable raw = customers(fixture);
        deliver(raw, date("2024-01-01"));
        ModelSettings one = model(raw).build();
        ModelSettings two = ModelSettings.builder("customers_copy").target("snap_customers_copy")
                .source(raw.selectAll()).uniqueKey("id").updatedAt("updated_at").sequenceBy("file_date").build();
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            CyclicBarrier together = new CyclicBarrier(2);
            Future<RunResult> a = pool.submit(() -> {
                together.await(patience(10_000), TimeUnit.MILLISECONDS);
                return fixture.engine(null).run(one);
            });
            Future<RunResult> b = pool.submit(() -> {
                together.await(patience(10_000), TimeUnit.MILLISECONDS);
                return fixture.engine(null).run(two);
            });
            assertThat(a.get(patience(30_000), TimeUnit.MILLISECONDS).batchesApplied()).isEqualTo(1);
            assertThat(b.get(patience(30_000), TimeUnit.MILLISECONDS).batchesApplied()).isEqualTo(1);
        } finally {
            pool.shutdownNow();
        }
        assertThat(fixture.history(TARGET)).hasSize(KEYS);
        assertThat(fixture.history("snap_customers_copy")).hasSize(KEYS);
        assertThat(fixture.ledger(MODEL)).hasSize(1);
        assertThat(fixture.ledger("customers_copy")).hasSize(1);
    }

    /**
     * Model names are identifiers, so case-insensitive: "CUSTOMERS" is the model "customers". It shares its lock (a
     * run of "CUSTOMERS" cannot start while "customers" is held between two batches), its ledger (afterwards it finds
     * nothing new) and its scratch tables, so the two can never mix their work.
     */
    @Test
    @Timeout(60)
    void modelNamesDifferingOnlyInCaseAreOneModel() throws Exception {
        RawTable raw = customers(fixture);
        deliver(raw, date("2024-01-01"));
        deliver(raw, date("2024-01-02"));
        ModelSettings lower = model(raw).build();
        ModelSettings upper = ModelSettings.builder("CUSTOMERS").target(TARGET).source(raw.selectAll())
                .uniqueKey("id").updatedAt("updated_at").sequenceBy("file_date").lockTimeout(Duration.ofMillis(200))
                .build();
        assertThat(upper.name()).isEqualTo(lower.name());
        CountDownLatch between = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        RecordingListener hold = new RecordingListener(e -> {
            if (e instanceof SnapshotEvent.BatchApplied && between.getCount() > 0) {
                between.countDown();
                await(release);
            }
        });
        List<Throwable> failures = new ArrayList<>();
        Thread first = new Thread(() -> {
            try {
                fixture.engine(hold).run(lower);
            } catch (Throwable t) {
                failures.add(t);
            }
        }, "itersnap-lower");
        first.start();
        ItersnapException locked;
        try {
            assertThat(between.await(patience(30_000), TimeUnit.MILLISECONDS)).isTrue();
            locked = catchThrowableOfType(ItersnapException.class, () -> fixture.engine(null).run(upper));
        } finally {
            release.countDown();
            first.join(patience(30_000));
        }
        assertThat(failures).isEmpty();
        assertThat(locked).as("'CUSTOMERS' waits for the lock of 'customers'").isNotNull();
        assertThat(locked.code()).isEqualTo(ErrorCode.LOCK_TIMEOUT);
        assertThat(fixture.engine(null).run(upper).batchesApplied()).as("one ledger").isZero();

        SnapshotFixture serial = newFixture();
        RawTable s = customers(serial);
        deliver(s, date("2024-01-01"));
        deliver(s, date("2024-01-02"));
        serial.run(lower);
        assertThat(fixture.essence(TARGET)).isEqualTo(serial.essence(TARGET));
    }

    /**
     * A wait bound of this suite (given for an in-process database) as this database needs it; a database where one
     * run takes tens of seconds (Spark) scales it up. Default: unchanged.
     */
    protected long patience(long millis) {
        return millis;
    }

    /**
     * A thread (not started) named {@code name} that runs {@code m} once with {@code events} as its listener and adds
     * the result to {@code results}, or what it threw to {@code failures}.
     */
    private Thread runThread(String name, RecordingListener events, ModelSettings m, List<RunResult> results,
                             List<Throwable> failures) {
        return new Thread(() -> {
            try {
                results.add(fixture.engine(events).run(m));
            } catch (Throwable t) {
                failures.add(t);
            }
        }, name);
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void await(CountDownLatch latch) {
        try {
            latch.await(patience(30_000), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
