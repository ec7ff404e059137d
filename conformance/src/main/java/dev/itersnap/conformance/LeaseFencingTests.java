package dev.itersnap.conformance;

import dev.itersnap.conformance.FaultInjectionTests.Outcome;
import dev.itersnap.conformance.FaultInjectionTests.UnderTest;
import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.HardDeletes;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.RunResult;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.LocalDateTime;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

import static dev.itersnap.conformance.SnapshotFixture.date;
import static dev.itersnap.conformance.SnapshotFixture.ts;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * Fencing by fault injection, for databases whose model lock is a lease ({@code LeaseLock}: Delta Lake): a run loses
 * its lease right before each of its writes in turn, the way a lease is lost in production, and must stop before
 * that write; the run that took the lease over must then leave exactly what one clean run leaves.
 *
 * <p>For each scenario the run under test is first run cleanly, counting its statements (the lease's own aside);
 * every statement after the lease was taken that changes something (INSERT, UPDATE, DELETE, MERGE and DDL, the
 * points {@link FaultInjectionTests} fails with {@code EXECUTED_THEN_FAIL}) is a point. For each point, on a fresh
 * copy of the scenario, right after the statement before the point returns:
 * <ol>
 *   <li>the holder is cut off from the lease table (its renewals, the heartbeat's and its own, fail) for longer
 *   than the TTL, so its lease lapses by every clock;</li>
 *   <li>a second job runs the same operation to the end: it takes the lapsed lease (a higher fence), recovers what
 *   the first run left and applies everything;</li>
 *   <li>the first run goes on (at odd points still cut off, at even points with the lease table reachable again, so
 *   its renewal finds the row another owner's) and must fail with {@code LOCK_TIMEOUT} "lost its lease" before its
 *   next write: after the loss no statement of it that changes something reaches the database but the failure
 *   record of its own run-log row.</li>
 * </ol>
 * History (every column), ledger, error log, archive, column registry and pending table must then equal the clean
 * run's, and a further run must change none of them.
 */
public abstract class LeaseFencingTests extends ConformanceTestBase {
    private static final LocalDate A = date("2024-01-01");
    private static final LocalDate B = date("2024-01-02");
    private static final LocalDate C = date("2024-01-03");

    /**
     * The TTL of the lease the database's dialect takes ({@link TestDatabase#dialect()} must take a lease of this
     * TTL): each point waits one TTL for the lease to lapse, so a short one (H2: a few hundred milliseconds).
     */
    protected abstract Duration leaseTtl();

    /**
     * Whether this database's build loses the lease before write point {@code point} (from 1) of {@code points}.
     * Default: every point; a slow database samples.
     */
    protected boolean losesBefore(int point, int points) {
        return true;
    }

    /** A late batch with an aged-out batch in the replay range: rollback, pending table, archive, replay. */
    @Test
    void aReplayThatLosesItsLeaseBeforeAnyWriteStopsThereAndTheNewHolderFinishesIt() {
        Swept s = loseBeforeEveryWrite("replay with an aged-out batch", FaultInjectionTests::agedOutBatchInReplayRange);
        assertThat(s.points()).isGreaterThan(0);
    }

    /**
     * A model's first run (history, archive and registry created, batches applied, rows set aside): the points
     * include its DDL.
     */
    @Test
    void aFirstRunThatLosesItsLeaseBeforeAnyWriteStopsThereAndTheNewHolderFinishesIt() {
        Swept s = loseBeforeEveryWrite("first run", f -> {
            RawTable raw = customers(f);
            ModelSettings m = model(raw).hardDeletes(HardDeletes.NEW_RECORD).build();
            raw.insert(1, "Active", "A", ts("2024-01-01 09:00"), A);
            raw.insert(2, "Active", "A", ts("2024-01-01 09:00"), A);
            raw.insert(1, "Gold", "A", ts("2024-01-02 09:00"), B);
            raw.insert(2, "Silver", "A", ts("2024-01-03 09:00"), C);
            raw.insert(2, "Bronze", "A", ts("2024-01-03 09:00"), C);
            raw.insert(9, "Ghost", "A", ts("2024-01-02 09:00"), null);
            return UnderTest.run(m);
        });
        assertThat(s.points()).isGreaterThan(0);
    }

    /** What a sweep did, printed for the record. */
    record Swept(String scenario, int statements, int points, Map<String, Integer> byKind) {
    }

    private Swept loseBeforeEveryWrite(String scenario, Function<SnapshotFixture, UnderTest> prepare) {
        long t0 = System.nanoTime();
        SnapshotFixture clean = newFixture();
        UnderTest t = prepare.apply(clean);
        ModelSettings m = t.model();
        FaultInjectingDataSource counting = new FaultInjectingDataSource(clean.dataSource());
        Recorder cleanRun = new Recorder(-1, null);
        counting.hook(cleanRun);
        FaultInjectionTests.perform(clean.engine(counting.dataSource(), null), t);
        Outcome expected = FaultInjectionTests.outcome(clean, m);
        release(clean);
        List<String> script = cleanRun.work();
        assertThat(cleanRun.acquiredAfter).as(scenario + ": the run took a lease").isGreaterThanOrEqualTo(0);

        List<Integer> writes = new ArrayList<>();
        for (int k = cleanRun.acquiredAfter + 1; k <= script.size(); k++) {
            if (FaultInjectionTests.changes(script.get(k - 1))) {
                writes.add(k);
            }
        }
        assertThat(writes).as(scenario + ": writes under the lease").isNotEmpty();
        Map<String, Integer> byKind = new LinkedHashMap<>();
        int points = 0;
        for (int i = 0; i < writes.size(); i++) {
            if (!losesBefore(i + 1, writes.size())) {
                continue;
            }
            points++;
            int k = writes.get(i);
            String sql = script.get(k - 1);
            byKind.merge(kind(sql), 1, Integer::sum);
            boolean heal = points % 2 == 0;
            String where = scenario + ", lease lost before statement " + k + "/" + script.size() + " (write point "
                    + (i + 1) + "/" + writes.size() + (heal ? ", lease table reachable again" : ", still cut off")
                    + "): " + FaultInjectionTests.describe(script, k);
            losePoint(where, prepare, m, t, k, heal, expected);
        }
        Swept swept = new Swept(scenario, script.size(), points, byKind);
        System.out.printf("lease fencing [%s]: lease lost before %d of %d write points %s (run under test: %d "
                        + "statements besides the lease's), %.1f s%n", scenario, points, writes.size(), byKind,
                script.size(), (System.nanoTime() - t0) / 1e9);
        return swept;
    }

    private void losePoint(String where, Function<SnapshotFixture, UnderTest> prepare, ModelSettings m, UnderTest t,
                           int k, boolean heal, Outcome expected) {
        SnapshotFixture f = newFixture();
        prepare.apply(f);
        FaultInjectingDataSource wrapper = new FaultInjectingDataSource(f.dataSource());
        AtomicReference<Object> secondJob = new AtomicReference<>();
        Recorder first = new Recorder(k, () -> {
            // the holder's lease lapses: cut off from the lease table for longer than the TTL
            sleep(leaseTtl().plusMillis(100));
            Thread job = new Thread(() -> {
                try {
                    secondJob.set(FaultInjectionTests.perform(f.engine(null), t));
                } catch (Throwable e) {
                    secondJob.set(e);
                }
            }, "itersnap-second-job");
            job.start();
            try {
                job.join(Duration.ofMinutes(5).toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return heal;
        });
        wrapper.hook(first);
        ItersnapException failure = null;
        try {
            FaultInjectionTests.perform(f.engine(wrapper.dataSource(), null), t);
        } catch (ItersnapException e) {
            failure = e;
        }
        assertThat(first.lost).as(where + ": the lease was taken away").isTrue();
        if (!(secondJob.get() instanceof RunResult)) {
            fail(where + ": the second job failed: " + secondJob.get(), secondJob.get() instanceof Throwable e ? e
                    : null);
        }
        if (failure == null) {
            fail(where + ": the run that lost its lease reported success");
        }
        assertThat(failure.code()).as(where + ": " + failure.getMessage()).isEqualTo(ErrorCode.LOCK_TIMEOUT);
        assertThat(failure.getMessage()).as(where).contains("lost its lease");
        // after the loss only the failure record of the run's own run-log row: an UPDATE, after an INSERT when the
        // lease was lost before the run had written its row (a run that fails before it starts is logged too)
        List<String> changed = first.afterLoss().stream().filter(FaultInjectionTests::changes)
                .map(sql -> kind(sql) + (runLog(sql) ? " run log" : ": " + sql)).toList();
        boolean rowWritten = first.work().subList(0, k - 1).stream()
                .anyMatch(sql -> kind(sql).equals("INSERT") && runLog(sql));
        assertThat(changed).as(where + ": statements that change something, run after the lease was lost")
                .isEqualTo(rowWritten ? List.of("UPDATE run log") : List.of("INSERT run log", "UPDATE run log"));
        FaultInjectionTests.assertOutcome(where + ", after the second job", expected,
                FaultInjectionTests.outcome(f, m));
        // the second job found the first's row running and closed it at its own start (when everything the first
        // committed was in the tables); the first's failure record, written later, leaves that end: a known-at read
        // must not count what the first wrote from a moment after the second job's end
        String second = ((RunResult) secondJob.get()).runId();
        List<SnapshotFixture.RunEntry> runs = f.runs(m.name());
        LocalDateTime secondStart = runs.stream().filter(r -> r.runId().equals(second)).findFirst()
                .map(r -> moment(r.startedAt())).orElseThrow();
        for (SnapshotFixture.RunEntry r : runs) {
            if (!r.runId().equals(second) && moment(r.startedAt()).isBefore(secondStart)) {
                assertThat(r.finishedAt()).as(where + ": run %s's end", r.runId()).isNotNull();
                assertThat(moment(r.finishedAt())).as(where + ": run %s (%s, %s) ends by the start of the run that "
                        + "found it unfinished", r.runId(), r.status(), r.errorMessage()).isBeforeOrEqualTo(secondStart);
            }
        }
        try {
            FaultInjectionTests.perform(f.engine(null), t);
        } catch (ItersnapException e) {
            fail(where + ": a further run failed: " + e.getMessage(), e);
        }
        FaultInjectionTests.assertOutcome(where + ", after a further run", expected, FaultInjectionTests.outcome(f, m));
        release(f);
    }

    private static LocalDateTime moment(Object v) {
        return v instanceof LocalDateTime t ? t : v instanceof java.sql.Timestamp t ? t.toLocalDateTime()
                : v instanceof java.time.OffsetDateTime o ? o.toLocalDateTime()
                : LocalDateTime.parse(v.toString().trim().replace(' ', 'T'));
    }

    /** A statement on the run log (the failure record is the one write a run makes after its lease is gone). */
    private static boolean runLog(String sql) {
        return sql.toLowerCase(Locale.ROOT).contains("itersnap_runs");
    }

    private static boolean lease(String sql) {
        return sql != null && sql.toLowerCase(Locale.ROOT).contains("itersnap_lease");
    }

    private static String kind(String sql) {
        String s = sql.stripLeading().toUpperCase(Locale.ROOT);
        int space = s.indexOf(' ');
        return space < 0 ? s : s.substring(0, space);
    }

    private static void sleep(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** What the loss does once the holder is cut off; returns whether the lease table is reachable again after. */
    @FunctionalInterface
    private interface Loss {
        boolean happen();
    }

    /**
     * The statements of one run through the wrapper, its lease's aside (the heartbeat's on its own thread, the
     * acquisition's and the renewals' on the run's), counted on the run's thread. With a point {@code k}, the loss
     * happens right after the last statement before the k-th has returned, once the lease is held; from then on the
     * holder's lease statements fail while it is cut off, and every other statement is recorded as after the loss.
     */
    private static final class Recorder implements FaultInjectingDataSource.StatementHook {
        private final int point;
        private final Loss loss;
        private final List<String> work = new ArrayList<>();
        private final List<String> afterLoss = new ArrayList<>();
        private Thread runThread;
        /** How many work statements ran before the lease was taken (-1: not yet). */
        int acquiredAfter = -1;
        volatile boolean cutOff;
        volatile boolean lost;

        Recorder(int point, Loss loss) {
            this.point = point;
            this.loss = loss;
        }

        @Override
        public void on(String sql, boolean after) {
            if (lease(sql)) {
                if (cutOff && !after) {
                    throw new IllegalStateException("injected: the lease table cannot be reached");
                }
                if (after) {
                    noteLease(sql);
                }
                return;
            }
            synchronized (this) {
                if (runThread == null) {
                    runThread = Thread.currentThread();
                }
                if (Thread.currentThread() != runThread) {
                    return;
                }
                if (!after) {
                    work.add(sql);
                    if (lost) {
                        afterLoss.add(sql);
                    }
                    return;
                }
            }
            maybeLose();
        }

        private void noteLease(String sql) {
            synchronized (this) {
                if (Thread.currentThread() != runThread) {
                    return; // the heartbeat's
                }
                // the acquisition reads the row it has just taken: the lease is held from here on
                if (acquiredAfter < 0 && sql.stripLeading().toUpperCase(Locale.ROOT).startsWith("SELECT")) {
                    acquiredAfter = work.size();
                }
            }
            maybeLose();
        }

        private void maybeLose() {
            synchronized (this) {
                if (loss == null || lost || acquiredAfter < 0 || work.size() != point - 1) {
                    return;
                }
                lost = true;
                cutOff = true;
            }
            boolean heal = loss.happen();
            cutOff = !heal;
        }

        synchronized List<String> work() {
            return List.copyOf(work);
        }

        synchronized List<String> afterLoss() {
            return List.copyOf(afterLoss);
        }
    }
}
