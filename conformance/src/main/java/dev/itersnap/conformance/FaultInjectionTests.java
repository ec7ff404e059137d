package dev.itersnap.conformance;

import dev.itersnap.conformance.SnapshotFixture.LedgerEntry;
import dev.itersnap.conformance.SnapshotFixture.Version;
import dev.itersnap.core.BatchResult;
import dev.itersnap.core.HardDeletes;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.IterativeSnapshot;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.RunResult;
import org.junit.jupiter.api.Test;

import java.time.LocalDate;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;

import static dev.itersnap.conformance.SnapshotFixture.date;
import static dev.itersnap.conformance.SnapshotFixture.ts;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * Retry safety (SPEC §5) by fault injection, level 3 of the test pyramid: for a run that replays late batches, every
 * statement it executes (commits included, on both of its connections) is made to fail in turn. After each failure
 * the history must be exactly "all ledger batches applied" (no version from a batch the ledger does not hold), and a
 * rerun without faults must give exactly the history, ledger and error log of an uninterrupted run.
 */
public abstract class FaultInjectionTests extends ConformanceTestBase {
    private static final LocalDate A = date("2024-01-01");
    private static final LocalDate B = date("2024-01-02");
    private static final LocalDate C = date("2024-01-03");
    private static final LocalDate D = date("2024-01-04");

    /** What two equivalent runs leave behind: the full history rows, the ledger and the error log (no run ids). */
    record Outcome(List<Version> history, List<String> ledger, List<String> errors) {
    }

    /** Totals of one scenario, printed for the record. */
    record Injected(String scenario, int statements, int failedRuns, int absorbed, int leftRunning) {
    }

    /** A late batch B arrives after A, C and D were applied; C has duplicate keys and a NULL-sequence row waits. */
    @Test
    void lateBatchRunSurvivesAFailureAtEveryStatement() {
        Injected r = failEveryStatement("late batch", f -> {
            RawTable raw = customers(f);
            ModelSettings m = model(raw).build();
            raw.insert(1, "Active", "A", ts("2024-01-01 09:00"), A);
            raw.insert(2, "Active", "A", ts("2024-01-01 09:00"), A);
            raw.insert(3, "Active", "A", ts("2024-01-01 09:00"), A);
            raw.insert(1, "Gold", "A", ts("2024-01-03 09:00"), C);
            raw.insert(3, "Silver", "A", ts("2024-01-03 09:00"), C);
            raw.insert(3, "Bronze", "A", ts("2024-01-03 09:00"), C);
            f.run(m);
            raw.insert(2, "Gold", "B", ts("2024-01-04 09:00"), D);
            raw.insert(4, "Active", "A", ts("2024-01-04 09:00"), D);
            f.run(m);
            raw.insert(1, "Premium", "B", ts("2024-01-02 09:00"), B);
            raw.insert(2, "Premium", "A", ts("2024-01-02 09:00"), B);
            raw.insert(5, "Active", "A", ts("2024-01-02 09:00"), B);
            raw.insert(9, "Ghost", "A", ts("2024-01-02 09:00"), null);
            return m;
        });
        assertThat(r.failedRuns()).isPositive();
    }

    /**
     * As above with hard_deletes invalidate, and batch C aged out of the raw table before B arrives: the rollback and
     * the reproduction of C must commit together, or C is lost.
     */
    @Test
    void replayWithAnAgedOutBatchSurvivesAFailureAtEveryStatement() {
        Injected r = failEveryStatement("aged-out batch in replay range", f -> {
            RawTable raw = f.rawTable("raw_customers", "id INT", "status VARCHAR(20)", "op VARCHAR(1)",
                    "updated_at TIMESTAMP", "file_date DATE");
            ModelSettings m = model(raw).hardDeletes(HardDeletes.INVALIDATE).deleteWhen("op = 'D'").build();
            for (int id = 1; id <= 4; id++) {
                raw.insert(id, "Active", "I", ts("2024-01-01 09:00"), A);
            }
            f.run(m);
            raw.insert(1, "Gold", "I", ts("2024-01-03 09:00"), C);
            raw.insert(2, "Silver", "I", ts("2024-01-03 10:00"), C);
            raw.insert(3, "Active", "D", ts("2024-01-03 11:00"), C);
            f.run(m);
            raw.insert(1, "Gold", "I", ts("2024-01-03 09:00"), D);
            raw.insert(2, "Silver", "I", ts("2024-01-03 10:00"), D);
            raw.insert(5, "Active", "I", ts("2024-01-04 09:00"), D);
            f.run(m);
            raw.deleteWhere("file_date", C);
            raw.insert(1, "Premium", "I", ts("2024-01-02 09:00"), B);
            for (int id = 2; id <= 4; id++) {
                raw.insert(id, "Active", "I", ts("2024-01-01 09:00"), B);
            }
            return m;
        });
        assertThat(r.failedRuns()).isPositive();
    }

    /** hard_deletes new_record: the replay removes and re-creates deletion records and a returning key. */
    @Test
    void newRecordReplaySurvivesAFailureAtEveryStatement() {
        Injected r = failEveryStatement("hard_deletes new_record", f -> {
            RawTable raw = customers(f);
            ModelSettings m = model(raw).hardDeletes(HardDeletes.NEW_RECORD).build();
            raw.insert(1, "Active", "A", ts("2024-01-01 09:00"), A);
            raw.insert(2, "Active", "A", ts("2024-01-01 09:00"), A);
            raw.insert(3, "Active", "A", ts("2024-01-01 09:00"), A);
            f.run(m);
            raw.insert(1, "Gold", "A", ts("2024-01-03 09:00"), C);
            raw.insert(3, "Active", "A", ts("2024-01-01 09:00"), C);
            f.run(m);
            raw.insert(1, "Gold", "A", ts("2024-01-03 09:00"), D);
            raw.insert(2, "Silver", "A", ts("2024-01-03 15:00"), D);
            f.run(m);
            raw.insert(1, "Premium", "A", ts("2024-01-02 09:00"), B);
            raw.insert(2, "Active", "A", ts("2024-01-01 09:00"), B);
            raw.insert(3, "Active", "B", ts("2024-01-02 09:00"), B);
            return m;
        });
        assertThat(r.failedRuns()).isPositive();
    }

    /** A run that adds a column (DDL) and replays a late batch from before the column's introduction. */
    @Test
    void schemaChangeWithReplaySurvivesAFailureAtEveryStatement() {
        Injected r = failEveryStatement("schema change and replay", f -> {
            RawTable raw = f.rawTable("raw_customers", "id INT", "status VARCHAR(20)", "updated_at TIMESTAMP",
                    "file_date DATE");
            ModelSettings m = model(raw).build();
            raw.insert(1, "Active", ts("2024-01-01 09:00"), A);
            raw.insert(2, "Active", ts("2024-01-01 09:00"), A);
            f.run(m);
            raw.insert(1, "Gold", ts("2024-01-03 09:00"), C);
            f.run(m);
            raw.addColumn("tier VARCHAR(20)");
            raw.insert(1, "Gold", ts("2024-01-03 09:00"), D, "T1");
            raw.insert(2, "Silver", ts("2024-01-04 09:00"), D, "T2");
            raw.insert(1, "Premium", ts("2024-01-02 09:00"), B, null);
            return m;
        });
        assertThat(r.failedRuns()).isPositive();
    }

    /**
     * A crash at every statement of the late-batch run with an aged-out batch: nothing after the fault reaches the
     * database (no rollback, no "failed" in the run log), so the next run finds the previous one still "running" and
     * must recover before it goes on.
     */
    @Test
    void replayWithAnAgedOutBatchSurvivesACrashAtEveryStatement() {
        Injected r = failEveryStatement("crash, aged-out batch in replay range", true, f -> {
            RawTable raw = f.rawTable("raw_customers", "id INT", "status VARCHAR(20)", "op VARCHAR(1)",
                    "updated_at TIMESTAMP", "file_date DATE");
            ModelSettings m = model(raw).hardDeletes(HardDeletes.NEW_RECORD).deleteWhen("op = 'D'").build();
            for (int id = 1; id <= 4; id++) {
                raw.insert(id, "Active", "I", ts("2024-01-01 09:00"), A);
            }
            f.run(m);
            raw.insert(1, "Gold", "I", ts("2024-01-03 09:00"), C);
            raw.insert(2, "Silver", "I", ts("2024-01-03 10:00"), C);
            raw.insert(3, "Active", "D", ts("2024-01-03 11:00"), C);
            f.run(m);
            raw.insert(1, "Gold", "I", ts("2024-01-03 09:00"), D);
            raw.insert(2, "Silver", "I", ts("2024-01-03 10:00"), D);
            raw.insert(5, "Active", "I", ts("2024-01-04 09:00"), D);
            f.run(m);
            raw.deleteWhere("file_date", C);
            raw.insert(1, "Premium", "I", ts("2024-01-02 09:00"), B);
            for (int id = 2; id <= 4; id++) {
                raw.insert(id, "Active", "I", ts("2024-01-01 09:00"), B);
            }
            raw.insert(9, "Ghost", "I", ts("2024-01-02 09:00"), null);
            return m;
        });
        assertThat(r.failedRuns()).isPositive();
        assertThat(r.leftRunning()).as("crashes leave the run 'running', so recovery is exercised").isPositive();
    }

    /**
     * Retry safety on one database, for databases where preparing a fresh copy of the scenario per fault point costs
     * too much (a Delta commit takes seconds): A, C and D applied, C aged out of the raw table, B late; the late run
     * gives the expected history. From there the deliberate replay from B, which must leave that same history, is the
     * run under test: it fails at statement k ({@link #injectAt} chooses which), a plain run follows (the retry an
     * orchestrator makes), and history, ledger and error log must equal the expected ones before k + 1 is tried.
     */
    @Test
    void replayOnOneDatabaseSurvivesAFailureAtEveryStatementInTurn() {
        Function<SnapshotFixture, RawTable> raw = f -> f.rawTable("raw_customers", "id INT", "status VARCHAR(20)",
                "op VARCHAR(1)", "updated_at TIMESTAMP", "file_date DATE");
        java.util.function.BiConsumer<RawTable, LocalDate> file = (r, day) -> {
            if (day.equals(A)) {
                for (int id = 1; id <= 3; id++) {
                    r.insert(id, "Active", "I", ts("2024-01-01 09:00"), A);
                }
            } else if (day.equals(B)) {
                r.insert(1, "Premium", "I", ts("2024-01-02 09:00"), B);
                r.insert(3, "Silver", "I", ts("2024-01-02 09:00"), B);
            } else if (day.equals(C)) {
                r.insert(1, "Gold", "I", ts("2024-01-03 09:00"), C);
                r.insert(2, "Active", "D", ts("2024-01-03 10:00"), C);
                r.insert(3, "Silver", "I", ts("2024-01-02 09:00"), C);
            } else {
                r.insert(1, "Gold", "I", ts("2024-01-03 09:00"), D);
                r.insert(4, "Active", "I", ts("2024-01-04 09:00"), D);
            }
        };
        RawTable rawTable = raw.apply(fixture);
        ModelSettings m = model(rawTable).hardDeletes(HardDeletes.NEW_RECORD).deleteWhen("op = 'D'").build();
        for (LocalDate day : List.of(A, C, D)) {
            file.accept(rawTable, day);
        }
        fixture.run(m);
        rawTable.deleteWhere("file_date", C);
        file.accept(rawTable, B);
        RunResult late = fixture.run(m);
        assertThat(late.batches()).extracting(BatchResult::reproduced).containsExactly(false, true, false);
        SnapshotFixture inOrder = newFixture();
        RawTable all = raw.apply(inOrder);
        for (LocalDate day : List.of(A, B, C, D)) {
            file.accept(all, day);
        }
        inOrder.run(m);
        assertThat(fixture.essence(m.target().toString())).as("late file with an aged-out batch vs in order")
                .isEqualTo(inOrder.essence(m.target().toString()));
        release(inOrder);
        Outcome expected = outcome(fixture, m);

        FaultInjectingDataSource faults = new FaultInjectingDataSource(fixture.dataSource());
        IterativeSnapshot engine = fixture.engine(faults.dataSource(), null);
        faults.failAt(0);
        engine.replayFrom(m, B);
        List<String> script = faults.statements();
        assertThat(outcome(fixture, m)).as("a clean replay leaves the history as it was").isEqualTo(expected);
        int points = 0;
        int failed = 0;
        for (int k = 1; k <= script.size(); k++) {
            if (!injectAt(k, script)) {
                continue;
            }
            points++;
            String where = "replay failing at statement " + k + "/" + script.size() + ": " + describe(script, k);
            faults.failAt(k);
            try {
                engine.replayFrom(m, B);
            } catch (ItersnapException e) {
                failed++;
            }
            assertThat(faults.injected()).as(where + ": fault fired").isTrue();
            try {
                fixture.run(m);
            } catch (ItersnapException e) {
                fail(where + ": the rerun without faults failed: " + e.getMessage(), e);
            }
            Outcome actual = outcome(fixture, m);
            assertThat(actual.history()).as(where + ": history after rerun").isEqualTo(expected.history());
            assertThat(actual.ledger()).as(where + ": ledger after rerun").isEqualTo(expected.ledger());
            assertThat(actual.errors()).as(where + ": error log after rerun").isEqualTo(expected.errors());
        }
        System.out.printf("fault injection [replay on one database]: %d of %d statements injected, %d runs failed%n",
                points, script.size(), failed);
        assertThat(failed).isPositive();
    }

    /**
     * Whether {@link #replayOnOneDatabaseSurvivesAFailureAtEveryStatementInTurn} fails statement {@code k} (from 1) of
     * the run under test, whose statements are {@code script} ({@code COMMIT} for commits). Default: every statement.
     * On a database where every statement commits on its own, a failure at a read leaves the state a failure at the
     * next write leaves, so the writes (INSERT, UPDATE, DELETE, MERGE) cover every state a failure can leave; a slow
     * database may choose fewer (see {@link #isWrite}).
     */
    protected boolean injectAt(int k, List<String> script) {
        return true;
    }

    /** True for INSERT, UPDATE, DELETE and MERGE statements. */
    protected static boolean isWrite(String sql) {
        String s = sql.stripLeading().toUpperCase(java.util.Locale.ROOT);
        return s.startsWith("INSERT") || s.startsWith("UPDATE") || s.startsWith("DELETE") || s.startsWith("MERGE");
    }

    // ------------------------------------------------------------------ the harness

    private Injected failEveryStatement(String scenario, Function<SnapshotFixture, ModelSettings> prepare) {
        return failEveryStatement(scenario, false, prepare);
    }

    /**
     * Counts the statements of the run under test on a clean database, then for every k fails statement k on a fresh
     * copy of the scenario, checks the state left behind, reruns without faults and compares with the clean run.
     *
     * @param prepare brings a fresh database to the moment before the run under test and returns the model
     */
    private Injected failEveryStatement(String scenario, boolean crash,
                                        Function<SnapshotFixture, ModelSettings> prepare) {
        SnapshotFixture clean = newFixture();
        ModelSettings m = prepare.apply(clean);
        FaultInjectingDataSource counting = new FaultInjectingDataSource(clean.dataSource());
        IterativeSnapshot countingEngine = clean.engine(counting.dataSource(), null);
        boolean transactional = countingEngine.dialect().capabilities().transactionalDml();
        counting.failAt(0);
        countingEngine.run(m);
        int statements = counting.count();
        List<String> script = counting.statements();
        Outcome expected = outcome(clean, m);
        release(clean);
        assertThat(statements).as("the run under test executes statements").isGreaterThan(10);

        int failedRuns = 0;
        int absorbed = 0;
        int leftRunning = 0;
        for (int k = 1; k <= statements; k++) {
            SnapshotFixture f = newFixture();
            prepare.apply(f);
            FaultInjectingDataSource faults = new FaultInjectingDataSource(f.dataSource());
            IterativeSnapshot faulty = f.engine(faults.dataSource(), null);
            if (crash) {
                faults.crashAt(k);
            } else {
                faults.failAt(k);
            }
            String where = scenario + ", fault at statement " + k + "/" + statements + ": " + describe(script, k);
            boolean succeeded;
            try {
                faulty.run(m);
                succeeded = true;
                absorbed++;
            } catch (ItersnapException e) {
                succeeded = false;
                failedRuns++;
            }
            if (succeeded) {
                // the engine may absorb a fault it can afford (a retried CREATE ... IF NOT EXISTS, a lock release that
                // the closing connection does anyway), but then the run must have done its whole job already
                Outcome now = outcome(f, m);
                assertThat(now.history()).as(where + ": the run reported success despite the fault, history")
                        .isEqualTo(expected.history());
                assertThat(now.ledger()).as(where + ": the run reported success despite the fault, ledger")
                        .isEqualTo(expected.ledger());
            }
            assertThat(faults.injected()).as(where + ": fault fired").isTrue();
            List<SnapshotFixture.RunEntry> runs = f.runs(m.name());
            if (!runs.isEmpty() && "running".equals(runs.get(runs.size() - 1).status())) {
                leftRunning++;
            }
            if (transactional) {
                // without transactional DML a failed run may leave unrecorded writes; the rerun's recovery (below)
                // must undo them, which the comparison after the rerun proves
                assertHistoryMatchesLedger(f, m, where);
            }

            try {
                f.run(m);
            } catch (ItersnapException e) {
                fail(where + ": the rerun without faults failed: " + e.getMessage(), e);
            }
            Outcome actual = outcome(f, m);
            assertThat(actual.history()).as(where + ": history after rerun").isEqualTo(expected.history());
            assertThat(actual.ledger()).as(where + ": ledger after rerun").isEqualTo(expected.ledger());
            assertThat(actual.errors()).as(where + ": error log after rerun").isEqualTo(expected.errors());
            release(f);
        }
        Injected result = new Injected(scenario, statements, failedRuns, absorbed, leftRunning);
        System.out.printf("fault injection [%s]: %d fault points injected (%d statements incl. commits), %d runs "
                + "failed, %d faults absorbed by a run that still did its whole job, %d runs left 'running' for "
                + "recovery%n", scenario, statements, statements, failedRuns, absorbed, leftRunning);
        return result;
    }

    private static String describe(List<String> script, int k) {
        String sql = script.get(k - 1);
        if (sql == null) {
            return "(unknown statement)";
        }
        String flat = sql.replaceAll("\\s+", " ");
        return flat.length() > 160 ? flat.substring(0, 160) + "..." : flat;
    }

    private static Outcome outcome(SnapshotFixture f, ModelSettings m) {
        List<String> ledger = f.ledger(m.name()).stream().map(LedgerEntry::withoutRun).sorted().toList();
        List<String> errors = f.errors(m.name()).stream().map(SnapshotFixture.ErrorEntry::withoutRun).sorted()
                .toList();
        return new Outcome(f.history(m.target().toString()), ledger, errors);
    }

    /**
     * SPEC §4: a failed run leaves the history as after the last batch in the ledger. Every version must have been
     * opened, and closed, by a batch the ledger holds.
     */
    private static void assertHistoryMatchesLedger(SnapshotFixture f, ModelSettings m, String where) {
        if (!f.tableExists(m.target().toString())) {
            return;
        }
        Set<String> ledger = new HashSet<>();
        f.ledger(m.name()).forEach(e -> ledger.add(e.sequence()));
        List<String> unrecorded = new ArrayList<>();
        for (Version v : f.history(m.target().toString())) {
            for (Object seq : new Object[] {v.openedSeq(), v.closedSeq()}) {
                if (seq != null && !ledger.contains(seq.toString())) {
                    unrecorded.add(seq + " in " + v);
                }
            }
        }
        assertThat(unrecorded).as(where + ": versions written by batches the ledger does not hold (ledger %s)",
                ledger).isEmpty();
    }
}
