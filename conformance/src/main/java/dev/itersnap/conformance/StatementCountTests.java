package dev.itersnap.conformance;

import dev.itersnap.core.HardDeletes;
import dev.itersnap.core.ModelSettings;
import org.junit.jupiter.api.Test;

import java.time.LocalDate;
import java.util.List;
import java.util.Locale;

import static dev.itersnap.conformance.SnapshotFixture.date;
import static dev.itersnap.conformance.SnapshotFixture.ts;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * How many statements, and how many writes (INSERT, UPDATE, DELETE, MERGE: each at most one commit where every
 * statement commits on its own, as on Delta Lake), a run costs: a fixed part per run, a part per applied batch and a
 * part per replayed batch. Measured through a counting data source on full daily files with deletions by absence,
 * printed, and held to a budget so that a change that adds statements per batch shows up here.
 * {@code -Ditersnap.printStatements=true} also prints every statement of each measured run.
 */
public abstract class StatementCountTests extends ConformanceTestBase {

    /** Statements of one run, all connections (the model lock's included); writes among them. */
    public record Count(int statements, int writes) {
        Count minus(Count o) {
            return new Count(statements - o.statements, writes - o.writes);
        }

        Count times(int k) {
            return new Count(statements * k, writes * k);
        }

        @Override
        public String toString() {
            return statements + " statements (" + writes + " writes)";
        }
    }

    /** Most statements one applied batch may cost (the ledger entry included). */
    protected int budgetPerBatch() {
        return 7;
    }

    /** Most writes one applied batch may cost. */
    protected int writeBudgetPerBatch() {
        return 5;
    }

    private static final LocalDate D1 = date("2024-01-01");

    private static LocalDate day(int d) {
        return D1.plusDays(d - 1);
    }

    /**
     * A full daily file: keys 1..3, key {@code d % 3 + 1} changes on day d (and keeps its value after), key 4 present
     * on odd days only (absent: deleted; back: a new version).
     */
    private static void file(RawTable raw, int d) {
        for (int id = 1; id <= 4; id++) {
            if (id == 4 && d % 2 == 0) {
                continue;
            }
            int changed = 0;
            for (int e = 1; e <= d; e++) {
                if (id == e % 3 + 1) {
                    changed = e;
                }
            }
            raw.insert(id, changed == 0 ? "Active" : "S" + changed, "A",
                    changed == 0 ? ts("2023-12-31 09:00") : ts(day(changed) + " 09:00"), day(d));
        }
    }

    private static Count measure(SnapshotFixture f, ModelSettings m) {
        FaultInjectingDataSource counting = new FaultInjectingDataSource(f.dataSource());
        counting.failAt(0);
        f.engine(counting.dataSource(), null).run(m);
        List<String> sql = counting.statements().stream().filter(s -> !s.equals("COMMIT")).toList();
        if (Boolean.getBoolean("itersnap.printStatements")) {
            sql.forEach(s -> System.out.println("  " + s.replaceAll("\\s+", " ")));
        }
        int writes = (int) sql.stream().filter(StatementCountTests::isWrite).count();
        return new Count(sql.size(), writes);
    }

    private static boolean isWrite(String sql) {
        String s = sql.stripLeading().toUpperCase(Locale.ROOT);
        return s.startsWith("INSERT") || s.startsWith("UPDATE") || s.startsWith("DELETE") || s.startsWith("MERGE");
    }

    /** Applies files {@code days} in one run each, then delivers {@code late} and measures the run that finds it. */
    private Count lateRun(int late, int... days) {
        SnapshotFixture f = newFixture();
        RawTable raw = customers(f);
        ModelSettings m = model(raw).hardDeletes(HardDeletes.INVALIDATE).build();
        for (int d : days) {
            file(raw, d);
            f.run(m);
        }
        file(raw, late);
        Count c = measure(f, m);
        release(f);
        return c;
    }

    @Test
    void statementsPerRunPerBatchAndPerReplayedBatchStayWithinBudget() {
        RawTable raw = customers(fixture);
        ModelSettings m = model(raw).hardDeletes(HardDeletes.INVALIDATE).build();
        file(raw, 1);
        fixture.run(m);
        file(raw, 2);
        Count one = measure(fixture, m);
        file(raw, 3);
        file(raw, 4);
        Count two = measure(fixture, m);
        Count perBatch = two.minus(one);
        Count fixed = one.minus(perBatch);

        Count lateOf2 = lateRun(2, 1, 3);
        Count lateOf3 = lateRun(2, 1, 3, 4);
        Count perReplayed = lateOf3.minus(lateOf2);
        Count replayOverhead = lateOf2.minus(fixed).minus(perReplayed.times(2));

        System.out.printf("statements [%s]: per run %s; per applied batch %s; per replayed batch %s; roll back and "
                        + "replay overhead %s; a late file replaying 2 batches: %s%n", getClass().getSimpleName(),
                fixed, perBatch, perReplayed, replayOverhead, lateOf2);
        assertThat(perBatch.statements()).as("statements per applied batch").isLessThanOrEqualTo(budgetPerBatch());
        assertThat(perBatch.writes()).as("writes per applied batch").isLessThanOrEqualTo(writeBudgetPerBatch());
        assertThat(perReplayed.statements()).as("statements per replayed batch")
                .isLessThanOrEqualTo(budgetPerBatch());
        assertThat(replayOverhead.statements()).as("statements to detect the late batch and roll back")
                .isLessThanOrEqualTo(8);
    }
}
