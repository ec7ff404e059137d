package dev.itersnap.conformance;

import dev.itersnap.IterativeSnapshot;
import dev.itersnap.conformance.FaultInjectingDataSource.Call;
import dev.itersnap.conformance.FaultInjectingDataSource.Mode;
import dev.itersnap.conformance.SnapshotFixture.LedgerEntry;
import dev.itersnap.conformance.SnapshotFixture.Version;
import dev.itersnap.conformance.TestDatabase.ColumnType;
import dev.itersnap.core.BatchResult;
import dev.itersnap.core.HardDeletes;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.RunResult;
import dev.itersnap.core.UntrackedColumns;
import org.junit.jupiter.api.Test;

import java.time.LocalDate;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;

import static dev.itersnap.conformance.SnapshotFixture.date;
import static dev.itersnap.conformance.SnapshotFixture.ts;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * Retry safety by fault injection, level 3 of the test pyramid: for a run under test (a replay of late
 * batches, a first run, a full refresh, a run that widens a column), every call it makes of a chosen kind is made to
 * fail in turn, each on a fresh copy of the scenario:
 * <ul>
 *   <li>{@link Fault#FAIL}: a statement (commits included, on both of its connections) fails instead of running;</li>
 *   <li>{@link Fault#EXECUTED_THEN_FAIL}: a statement runs, then the client gets an error (a lost acknowledgement;
 *   injected at writes, DDL and commits, since a read that ran leaves the state of a read that did not);</li>
 *   <li>{@link Fault#CRASH}: a statement fails and so does every later call, like a process that died;</li>
 *   <li>{@link Fault#CONNECTION}, {@link Fault#PREPARE}, {@link Fault#NEXT}: taking a connection (the lock's
 *   included), preparing a statement, reading the next row of a result fails.</li>
 * </ul>
 * After each failure the history must be exactly "all ledger batches applied" (no version from a batch the ledger
 * does not hold; on transactional databases); in some scenarios the rerun is made to fail once more, at the first
 * write of its recovery; then a rerun without faults (the same operation, as an orchestrator retries it) must leave
 * exactly what an uninterrupted run leaves: history (every column), ledger, error log, archive, column registry and an
 * empty pending table; and one more {@code replayFrom} the first batch must again leave what it leaves after the
 * uninterrupted run (a stale archive or registry would show there).
 */
public abstract class FaultInjectionTests extends ConformanceTestBase {
    private static final LocalDate A = date("2024-01-01");
    private static final LocalDate B = date("2024-01-02");
    private static final LocalDate C = date("2024-01-03");
    private static final LocalDate D = date("2024-01-04");

    /** The kinds of fault a scenario is put through. */
    public enum Fault {
        FAIL(Call.STATEMENT, Mode.FAIL), EXECUTED_THEN_FAIL(Call.STATEMENT, Mode.EXECUTED_THEN_FAIL),
        CRASH(Call.STATEMENT, Mode.CRASH), CONNECTION(Call.CONNECTION, Mode.FAIL), PREPARE(Call.PREPARE, Mode.FAIL),
        NEXT(Call.NEXT, Mode.FAIL);

        final Call call;
        final Mode mode;

        Fault(Call call, Mode mode) {
            this.call = call;
            this.mode = mode;
        }
    }

    /** The operation under test (and of the rerun that follows a failure). */
    protected enum Operation { RUN, RUN_ACCEPTING_LOGIC_CHANGE, FULL_REFRESH }

    /** What a scenario's preparation returns: the model and the operation under test. */
    protected record UnderTest(ModelSettings model, Operation operation) {
        static UnderTest run(ModelSettings m) {
            return new UnderTest(m, Operation.RUN);
        }
    }

    /**
     * What two equivalent runs leave behind: the full history rows, the ledger and the error log (no run ids), the
     * archive, the column registry, the rows of the pending table (-1 when there is none) and the superseded versions
     * a repair keeps ({@code keep_superseded}: every row but a retention's marks, without the superseding run's id and
     * time), so that a failure during a repair loses no superseded version and copies none twice.
     */
    record Outcome(List<Version> history, List<String> ledger, List<String> errors, List<String> archive,
                   List<String> registry, long pending, List<String> superseded) {
        /**
         * The same without the superseded versions: where the operation repeated is itself a repair (a full refresh,
         * a replay), which supersedes the versions the first attempt left.
         */
        Outcome withoutSuperseded() {
            return new Outcome(history, ledger, errors, archive, registry, pending, List.of());
        }
    }

    /** Totals of one scenario, printed for the record. */
    record Injected(String scenario, Map<Fault, Integer> points, int failedRuns, int absorbed, int leftRunning,
                    int secondFaults) {
    }

    /** A late batch B arrives after A, C and D were applied; C has duplicate keys and a NULL-sequence row waits. */
    @Test
    void lateBatchRunSurvivesAFailureAtEveryStatement() {
        Injected r = failEveryPoint("late batch", List.of(Fault.FAIL, Fault.EXECUTED_THEN_FAIL, Fault.CONNECTION),
                false, f -> {
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
                    return UnderTest.run(m);
                });
        assertThat(r.failedRuns()).isPositive();
    }

    /**
     * As above with hard_deletes invalidate, and batch C aged out of the raw table before B arrives: the rollback and
     * the reproduction of C must commit together, or C is lost. Every rerun is made to fail once more at the first
     * write of its recovery (where the failure left one to do).
     */
    @Test
    void replayWithAnAgedOutBatchSurvivesAFailureAtEveryStatement() {
        Injected r = failEveryPoint("aged-out batch in replay range", List.of(Fault.FAIL, Fault.EXECUTED_THEN_FAIL),
                true, FaultInjectionTests::agedOutBatchInReplayRange);
        assertThat(r.failedRuns()).isPositive();
    }

    static UnderTest agedOutBatchInReplayRange(SnapshotFixture f) {
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
        return UnderTest.run(m);
    }

    /**
     * {@code sequence_by: [file_date, file_no]}: files 1, 3 and 10 of one day are applied, file 3 ages out of the
     * source, and file 2 arrives late: the roll back, the reproduction of file 3 from the history and the archive (its
     * rows keep file 3's own date and number) and the replay survive a failure anywhere.
     */
    @Test
    void sequenceByListLateBatchWithAnAgedOutBatchSurvivesAFailureAtEveryStatement() {
        Injected r = failEveryPoint("sequence_by list with an aged-out batch", List.of(Fault.FAIL,
                Fault.EXECUTED_THEN_FAIL), false, f -> {
                    RawTable raw = f.rawTable("raw_files", "id INT", "status VARCHAR(20)", "updated_at TIMESTAMP",
                            "file_date DATE", "file_no INT");
                    ModelSettings m = ModelSettings.builder(MODEL).target(TARGET).source(raw.selectAll())
                            .uniqueKey("id").updatedAt("updated_at").sequenceBy(List.of("file_date", "file_no"))
                            .hardDeletes(HardDeletes.INVALIDATE).build();
                    for (int id = 1; id <= 3; id++) {
                        raw.insert(id, "Active", ts("2024-01-01 09:00"), A, 1);
                    }
                    raw.insert(1, "Gold", ts("2024-01-01 12:00"), A, 3);
                    raw.insert(2, "Active", ts("2024-01-01 09:00"), A, 3);
                    raw.insert(1, "Gold", ts("2024-01-01 12:00"), A, 10);
                    raw.insert(2, "Silver", ts("2024-01-01 18:00"), A, 10);
                    raw.insert(4, "Active", ts("2024-01-01 18:00"), A, 10);
                    f.run(m);
                    raw.deleteWhere("file_no", 3);
                    raw.insert(1, "Premium", ts("2024-01-01 10:00"), A, 2);
                    raw.insert(2, "Active", ts("2024-01-01 09:00"), A, 2);
                    raw.insert(3, "Active", ts("2024-01-01 09:00"), A, 2);
                    return UnderTest.run(m);
                });
        assertThat(r.failedRuns()).isPositive();
    }

    /**
     * A restated batch (docs/semantics.md "Restated batches"): B, applied, is re-sent with a row corrected, a row
     * removed and a row added, while A aged out of the source (not a restatement); the run replays from B for every
     * key. Every rerun is made to fail once more at the first write of its recovery.
     */
    @Test
    void restatementReplaySurvivesAFailureAtEveryStatement() {
        Injected r = failEveryPoint("restated batch", List.of(Fault.FAIL, Fault.EXECUTED_THEN_FAIL, Fault.CONNECTION),
                true, f -> {
                    RawTable raw = customers(f);
                    // every applied batch compared on every run: the restatement is found whatever the sweep's turn
                    ModelSettings m = model(raw).hardDeletes(HardDeletes.INVALIDATE)
                            .restatementLookback(ModelSettings.MAX_RESTATEMENT_BATCHES).build();
                    for (LocalDate day : List.of(A, B, C, D)) {
                        for (int id = 1; id <= 3; id++) {
                            boolean changed = id == day.getDayOfMonth() % 3 + 1;
                            raw.insert(id, changed ? "S" + day.getDayOfMonth() : "Active", "A",
                                    changed ? day.atTime(9, 0) : ts("2023-12-31 09:00"), day);
                        }
                        f.run(m);
                    }
                    raw.deleteWhere("file_date", A);
                    raw.deleteWhere("file_date", B);
                    raw.insert(1, "Active", "A", ts("2023-12-31 09:00"), B);
                    raw.insert(3, "Corrected", "C", ts("2024-01-02 10:00"), B); // key 2 removed, key 3 corrected
                    raw.insert(4, "Active", "A", ts("2024-01-02 08:00"), B); // added
                    raw.insert(9, "Ghost", "A", ts("2024-01-02 09:00"), null);
                    return UnderTest.run(m);
                });
        assertThat(r.failedRuns()).isPositive();
    }

    /**
     * A CDC feed whose sequence is also updated_at (AUTO CDC's users example): the updates of 5 arrive after the
     * DELETE at 6 and are replayed.
     */
    @Test
    void cdcFeedLateBatchSurvivesAFailureAtEveryStatement() {
        Injected r = failEveryPoint("CDC feed, sequence_by = updated_at", List.of(Fault.FAIL,
                Fault.EXECUTED_THEN_FAIL), false, f -> {
                    RawTable raw = f.rawTable("raw_users", "userId INT", "name VARCHAR(20)", "city VARCHAR(20)",
                            "operation VARCHAR(10)", "sequenceNum INT");
                    ModelSettings m = ModelSettings.builder(MODEL).target(TARGET).source(raw.selectAll())
                            .uniqueKey("userId").updatedAt("sequenceNum").sequenceBy("sequenceNum")
                            .deleteWhen("operation = 'DELETE'").build();
                    raw.insert(124, "Raul", "Oaxaca", "INSERT", 1);
                    raw.insert(123, "Isabel", "Monterrey", "INSERT", 1);
                    raw.insert(125, "Mercedes", "Tijuana", "INSERT", 2);
                    raw.insert(126, "Lily", "Cancun", "INSERT", 2);
                    raw.insert(123, null, null, "DELETE", 6);
                    raw.insert(125, "Mercedes", "Guadalajara", "UPDATE", 6);
                    f.run(m);
                    raw.insert(125, "Mercedes", "Mexicali", "UPDATE", 5);
                    raw.insert(123, "Isabel", "Chihuahua", "UPDATE", 5);
                    return UnderTest.run(m);
                });
        assertThat(r.failedRuns()).isPositive();
    }

    /**
     * A partial-update feed ({@code ignore_null_updates}): a late batch changes what the NULLs of the batch after it
     * stand for, and the replay that fills them again survives a failure anywhere.
     */
    @Test
    void ignoreNullUpdatesLateBatchSurvivesAFailureAtEveryStatement() {
        Injected r = failEveryPoint("ignore_null_updates with a late batch", List.of(Fault.FAIL,
                Fault.EXECUTED_THEN_FAIL), false, f -> {
                    RawTable raw = usersFeed(f);
                    ModelSettings m = usersModel(raw).ignoreNullUpdates(true).build();
                    raw.insert(1, "Ana", "Lima", 1);
                    raw.insert(2, "Bo", "Oslo", 1);
                    raw.insert(1, null, "Cusco", 3);
                    raw.insert(2, "Bob", null, 3);
                    f.run(m);
                    raw.insert(1, "Anna", null, 2);
                    raw.insert(2, null, "Bergen", 2);
                    return UnderTest.run(m);
                });
        assertThat(r.failedRuns()).isPositive();
    }

    /**
     * {@code untracked_columns: overwrite}: a late batch lands inside versions whose untracked column later batches
     * overwrote in place (one closed since by a tracked change, one split by the late batch's own tracked change); the
     * roll back restores the values from the archive and the replay overwrites them again, surviving a failure
     * anywhere.
     */
    @Test
    void overwrittenUntrackedColumnsLateBatchSurvivesAFailureAtEveryStatement() {
        Injected r = failEveryPoint("untracked_columns overwrite with a late batch", List.of(Fault.FAIL,
                Fault.EXECUTED_THEN_FAIL), false, f -> {
                    RawTable raw = usersFeed(f);
                    ModelSettings m = usersModel(raw).checkCols("name").untrackedColumns(UntrackedColumns.OVERWRITE)
                            .build();
                    raw.insert(1, "Ana", "Lima", 1);
                    raw.insert(2, "Bo", "Oslo", 1);
                    raw.insert(3, "Cy", "Rome", 1);
                    raw.insert(1, "Ana", "Cusco", 3);
                    raw.insert(2, "Bob", "Bergen", 3);
                    raw.insert(3, "Cy", "Milan", 3);
                    raw.insert(1, "Ana", "Quito", 4);
                    f.run(m);
                    raw.insert(1, "Ana", "Lima", 2);
                    raw.insert(2, "Bo", "Trondheim", 2);
                    raw.insert(3, "Cyd", "Turin", 2); // a tracked change inside a version row 3 overwrote
                    return UnderTest.run(m);
                });
        assertThat(r.failedRuns()).isPositive();
    }

    /** A users feed whose one sequence number orders and dates the events (the shape of AUTO CDC's example). */
    private static RawTable usersFeed(SnapshotFixture f) {
        return f.rawTable("raw_users", "userId INT", "name VARCHAR(20)", "city VARCHAR(20)", "sequenceNum INT");
    }

    private static ModelSettings.Builder usersModel(RawTable raw) {
        return ModelSettings.builder(MODEL).target(TARGET).source(raw.selectAll()).uniqueKey("userId")
                .updatedAt("sequenceNum").sequenceBy("sequenceNum");
    }

    /**
     * valid_to_current set on a history whose open versions carry NULL, in the run that also replays a late batch
     * under new_record: the conversion and the replay survive a failure anywhere, and the rerun converts what is left.
     */
    @Test
    void validToCurrentConversionAndLateBatchSurviveAFailureAtEveryStatement() {
        Injected r = failEveryPoint("valid_to_current set with a late batch", List.of(Fault.FAIL,
                Fault.EXECUTED_THEN_FAIL), false, f -> {
                    RawTable raw = customers(f);
                    ModelSettings plain = model(raw).hardDeletes(HardDeletes.NEW_RECORD).build();
                    raw.insert(1, "Active", "A", ts("2024-01-01 09:00"), A);
                    raw.insert(2, "Active", "A", ts("2024-01-01 09:00"), A);
                    raw.insert(1, "Gold", "A", ts("2024-01-03 09:00"), C);
                    f.run(plain);
                    raw.insert(1, "Premium", "B", ts("2024-01-02 09:00"), B);
                    raw.insert(2, "Silver", "A", ts("2024-01-02 09:00"), B);
                    return new UnderTest(model(raw).hardDeletes(HardDeletes.NEW_RECORD).validToCurrent("9999-12-31")
                            .build(), Operation.RUN_ACCEPTING_LOGIC_CHANGE);
                });
        assertThat(r.failedRuns()).isPositive();
    }

    /** hard_deletes new_record: the replay removes and re-creates deletion records and a returning key. */
    @Test
    void newRecordReplaySurvivesAFailureAtEveryStatement() {
        Injected r = failEveryPoint("hard_deletes new_record", List.of(Fault.FAIL, Fault.EXECUTED_THEN_FAIL,
                Fault.PREPARE), false, f -> {
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
                    return UnderTest.run(m);
                });
        assertThat(r.failedRuns()).isPositive();
    }

    /** A run that adds a column (DDL) and replays a late batch from before the column's introduction. */
    @Test
    void schemaChangeWithReplaySurvivesAFailureAtEveryStatement() {
        Injected r = failEveryPoint("schema change and replay", List.of(Fault.FAIL, Fault.EXECUTED_THEN_FAIL,
                Fault.NEXT), false, f -> {
                    RawTable raw = f.rawTable("raw_customers", "id INT", "status VARCHAR(20)",
                            "updated_at TIMESTAMP", "file_date DATE");
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
                    return UnderTest.run(m);
                });
        assertThat(r.failedRuns()).isPositive();
    }

    /**
     * A late batch whose replay reaches back before a column left the source: the column's values are carried from the
     * history (without transactions they are saved before the roll back), so a failure or a crash anywhere, and a
     * recovery failed once more, must lose none of them.
     */
    @Test
    void replayCarryingADroppedColumnSurvivesAFailureAtEveryStatement() {
        Injected r = failEveryPoint("replay carrying a dropped column", List.of(Fault.FAIL, Fault.EXECUTED_THEN_FAIL,
                Fault.CRASH), true, f -> {
                    RawTable raw = f.rawTable("raw_customers", "id INT", "status VARCHAR(20)", "email VARCHAR(40)",
                            "updated_at TIMESTAMP", "file_date DATE");
                    ModelSettings m = model(raw).build();
                    raw.insert(1, "Active", "a1", ts("2024-01-01 09:00"), A);
                    raw.insert(2, "Active", "b1", ts("2024-01-01 09:00"), A);
                    f.run(m);
                    raw.insert(1, "Active", "a2", ts("2024-01-02 09:00"), B);
                    raw.insert(2, "Active", "b1", ts("2024-01-01 09:00"), B);
                    f.run(m);
                    raw.insert(1, "Gold", "a2", ts("2024-01-04 09:00"), D);
                    raw.insert(2, "Active", "b2", ts("2024-01-04 09:00"), D);
                    f.run(m);
                    raw.dropColumn("email");
                    raw.insert(2, "Silver", ts("2024-01-03 09:00"), C);
                    return UnderTest.run(m);
                });
        assertThat(r.failedRuns()).isPositive();
    }

    /**
     * A crash at every statement of the late-batch run with an aged-out batch: nothing after the fault reaches the
     * database (no rollback, no "failed" in the run log), so the next run finds the previous one still "running" and
     * must recover before it goes on; that recovery is made to fail once more at its first write.
     */
    @Test
    void replayWithAnAgedOutBatchSurvivesACrashAtEveryStatement() {
        Injected r = failEveryPoint("crash, aged-out batch in replay range", List.of(Fault.CRASH), true, f -> {
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
            return UnderTest.run(m);
        });
        assertThat(r.failedRuns()).isPositive();
        assertThat(r.leftRunning()).as("crashes leave the run 'running', so recovery is exercised").isPositive();
        assertThat(r.secondFaults()).as("recoveries made to fail once more").isPositive();
    }

    /**
     * A repair under a retention of superseded versions ({@code superseded_retention}, 1 ms): a late batch C replayed
     * first, then, more than the retention later, late batch B, whose repair copies what it supersedes and deletes
     * what C's repair superseded (leaving a mark). A failure anywhere, then the rerun: the history, and the superseded
     * versions kept, as one clean run leaves them.
     */
    @Test
    void aRepairThatDeletesExpiredSupersededVersionsSurvivesAFailureAtEveryStatement() {
        Injected r = failEveryPoint("retention of superseded versions", List.of(Fault.FAIL,
                Fault.EXECUTED_THEN_FAIL), false, f -> {
                    RawTable raw = customers(f);
                    ModelSettings m = model(raw).supersededRetention(java.time.Duration.ofMillis(1)).build();
                    raw.insert(1, "Active", "A", ts("2024-01-01 09:00"), A);
                    raw.insert(2, "Active", "A", ts("2024-01-01 09:00"), A);
                    raw.insert(1, "Gold", "A", ts("2024-01-04 09:00"), D);
                    raw.insert(2, "Active", "A", ts("2024-01-01 09:00"), D);
                    f.run(m);
                    raw.insert(1, "Silver", "A", ts("2024-01-03 09:00"), C);
                    raw.insert(2, "Silver", "B", ts("2024-01-03 09:00"), C);
                    f.run(m); // C's repair: supersedes both keys' versions from C on
                    raw.insert(1, "Bronze", "A", ts("2024-01-02 09:00"), B);
                    raw.insert(3, "Active", "A", ts("2024-01-02 09:00"), B);
                    try {
                        Thread.sleep(20); // C's repair finished more than the retention before the run under test
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    return UnderTest.run(m);
                });
        assertThat(r.failedRuns()).isPositive();
    }

    /**
     * The very first run of a model (metadata schema, history, archive and registry created, three batches applied,
     * rows set aside): a failure anywhere must leave a state the rerun completes exactly.
     */
    @Test
    void firstRunSurvivesAFailureAtEveryStatement() {
        Injected r = failEveryPoint("first run", List.of(Fault.FAIL, Fault.EXECUTED_THEN_FAIL, Fault.CONNECTION),
                false, f -> {
                    RawTable raw = customers(f);
                    ModelSettings m = model(raw).hardDeletes(HardDeletes.NEW_RECORD).build();
                    raw.insert(1, "Active", "A", ts("2024-01-01 09:00"), A);
                    raw.insert(2, "Active", "A", ts("2024-01-01 09:00"), A);
                    raw.insert(3, "Active", "A", ts("2024-01-01 09:00"), A);
                    raw.insert(1, "Gold", "A", ts("2024-01-02 09:00"), B);
                    raw.insert(2, "Active", "A", ts("2024-01-01 09:00"), B);
                    raw.insert(1, "Gold", "B", ts("2024-01-03 09:00"), C);
                    raw.insert(2, "Silver", "A", ts("2024-01-03 09:00"), C);
                    raw.insert(2, "Bronze", "A", ts("2024-01-03 09:00"), C);
                    raw.insert(3, "Active", "A", ts("2024-01-03 09:00"), C);
                    raw.insert(9, "Ghost", "A", ts("2024-01-02 09:00"), null);
                    return UnderTest.run(m);
                });
        assertThat(r.failedRuns()).isPositive();
    }

    /**
     * A full refresh (rebuild from the oldest batch the source holds; A aged out and stays) with a late batch waiting:
     * a failure anywhere, then the full refresh again.
     */
    @Test
    void fullRefreshSurvivesAFailureAtEveryStatement() {
        Injected r = failEveryPoint("full refresh", List.of(Fault.FAIL, Fault.EXECUTED_THEN_FAIL), false, f -> {
            UnderTest t = agedOutBatchInReplayRange(f);
            RawTable raw = new RawTable(f, "raw_customers", List.of("id", "status", "op", "updated_at", "file_date"));
            f.run(t.model());
            raw.deleteWhere("file_date", A);
            raw.insert(6, "Active", "I", ts("2024-01-05 09:00"), date("2024-01-05"));
            raw.insert(9, "Ghost", "I", ts("2024-01-05 09:00"), null);
            return new UnderTest(t.model(), Operation.FULL_REFRESH);
        });
        assertThat(r.failedRuns()).isPositive();
    }

    /**
     * A run that widens a column (the source's score became BIGINT: the history and the archive follow) and replays a
     * late batch.
     */
    @Test
    void wideningRunSurvivesAFailureAtEveryStatement() {
        Injected r = failEveryPoint("widening", List.of(Fault.FAIL, Fault.EXECUTED_THEN_FAIL), false, f -> {
            RawTable raw = f.rawTable("raw_customers", "id INT", "status VARCHAR(20)", "score INT",
                    "updated_at TIMESTAMP", "file_date DATE");
            ModelSettings m = model(raw).hardDeletes(HardDeletes.INVALIDATE).build();
            raw.insert(1, "Active", 1, ts("2024-01-01 09:00"), A);
            raw.insert(2, "Active", 2, ts("2024-01-01 09:00"), A);
            raw.insert(3, "Active", null, null, A);
            f.run(m);
            raw.insert(1, "Gold", 1, ts("2024-01-03 09:00"), C);
            raw.insert(2, "Active", 2, ts("2024-01-01 09:00"), C);
            f.run(m);
            f.execute(database().widenColumn("raw_customers", "score", ColumnType.BIGINT));
            raw.insert(1, "Gold", 5_000_000_000L, ts("2024-01-04 09:00"), D);
            raw.insert(2, "Active", 2L, ts("2024-01-01 09:00"), D);
            raw.insert(4, "Active", 6_000_000_000L, ts("2024-01-04 09:00"), D);
            raw.insert(1, "Premium", 1L, ts("2024-01-02 09:00"), B);
            raw.insert(2, "Active", 3L, ts("2024-01-02 09:00"), B);
            return UnderTest.run(m);
        });
        assertThat(r.failedRuns()).isPositive();
    }

    /**
     * Regression (databases without transactional DML): a first run that fails at registering the new history's
     * columns, after creating the history, leaves a history without registered columns (older versions registered
     * one column per statement, so a partial registry too). The retry must take every column of the history as
     * tracked from the start (it once registered them as introduced by its first batch, so a later replay from an
     * earlier, late batch treated them as new columns and lost the status change between the two batches).
     */
    @Test
    void aRetriedFirstRunKeepsEveryColumnTrackedFromTheStart() {
        RawTable raw = plainCustomers();
        ModelSettings m = model(raw).build();
        raw.insert(1, "Gold", ts("2024-01-02 09:00"), B);
        FaultInjectingDataSource faults = new FaultInjectingDataSource(fixture.dataSource());
        faults.failFirst((before, sql) -> registryInsert(sql));
        try {
            fixture.engine(faults.dataSource(), null).run(m);
        } catch (ItersnapException expected) {
            // the run failed at its registry insert
        }
        assertThat(faults.injected()).as("the registry insert failed").isTrue();
        fixture.run(m);
        raw.insert(1, "Active", ts("2024-01-01 09:00"), A);
        fixture.run(m);

        assertThat(fixture.versions(TARGET, "id", 1)).extracting(v -> v.get("status"), Version::validFrom,
                Version::validTo).containsExactly(
                org.assertj.core.api.Assertions.tuple("Active", ts("2024-01-01 09:00"), ts("2024-01-02 09:00")),
                org.assertj.core.api.Assertions.tuple("Gold", ts("2024-01-02 09:00"), null));
        assertThat(fixture.query("SELECT introduced_seq FROM " + SnapshotFixture.METADATA
                + ".itersnap_columns WHERE model = ?", MODEL)).extracting(r -> r.get("introduced_seq"))
                .containsOnlyNulls();
    }

    /**
     * Regression (databases without transactional DML): a replay that fails after saving aged-out batches in the
     * pending table and before its ledger forgets them, or at the final clearing, leaves them there; the rerun finds
     * every pending batch in the ledger and has nothing to apply, and must still empty the pending table (it once
     * returned before clearing it).
     */
    @Test
    void aRerunWithNothingToApplyClearsThePendingTable() {
        ModelSettings m = agedOutBatchInReplayRange(fixture).model();
        FaultInjectingDataSource faults = new FaultInjectingDataSource(fixture.dataSource());
        faults.failFirst((before, sql) -> sql.strip().toLowerCase(Locale.ROOT).startsWith("delete from")
                && sql.toLowerCase(Locale.ROOT).contains("itersnap_pending"));
        try {
            fixture.engine(faults.dataSource(), null).run(m);
        } catch (ItersnapException expected) {
            // the run failed clearing the pending table
        }
        fixture.run(m);
        String pending = m.metadataSchema() + ".itersnap_pending_" + m.name();
        if (fixture.tableExists(pending)) {
            assertThat(fixture.query("SELECT COUNT(*) AS n FROM " + pending).get(0).get("n"))
                    .as("rows left in the pending table").isEqualTo(0L);
        }
    }

    private RawTable plainCustomers() {
        return fixture.rawTable("raw_customers", "id INT", "status VARCHAR(20)", "updated_at TIMESTAMP", "file_date DATE");
    }

    private static boolean registryInsert(String sql) {
        String s = sql == null ? "" : sql.strip().toLowerCase(Locale.ROOT);
        return s.startsWith("insert into") && s.contains("itersnap_columns");
    }

    /**
     * Retry safety on one database, for databases where preparing a fresh copy of the scenario per fault point costs
     * too much (a Delta commit takes seconds): A, C and D applied, C aged out of the raw table, B late; the late run
     * gives the expected history. From there the deliberate replay from B, which must leave that same history, is the
     * run under test: it fails at statement k ({@link #injectAt} chooses which), a plain run follows (the retry an
     * orchestrator makes), and history, ledger, error log, archive, registry and pending table must equal the
     * expected ones before k + 1 is tried.
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
        if (checksTheReplayScenarioInOrder()) {
            SnapshotFixture inOrder = newFixture();
            RawTable all = raw.apply(inOrder);
            for (LocalDate day : List.of(A, B, C, D)) {
                file.accept(all, day);
            }
            inOrder.run(m);
            assertThat(fixture.essence(m.target().toString())).as("late file with an aged-out batch vs in order")
                    .isEqualTo(inOrder.essence(m.target().toString()));
            release(inOrder);
        }
        // each replay supersedes what the one before left: the superseded versions grow, the rest stays
        Outcome expected = outcome(fixture, m).withoutSuperseded();

        FaultInjectingDataSource faults = new FaultInjectingDataSource(fixture.dataSource());
        IterativeSnapshot engine = fixture.engine(faults.dataSource(), null);
        faults.failAt(0);
        engine.replayFrom(m, B);
        List<String> script = faults.statements();
        assertThat(outcome(fixture, m).withoutSuperseded()).as("a clean replay leaves the history as it was")
                .isEqualTo(expected);
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
            assertOutcome(where + ", after the rerun", expected, outcome(fixture, m).withoutSuperseded());
        }
        System.out.printf("fault injection [replay on one database]: %d of %d statements injected, %d runs failed%n",
                points, script.size(), failed);
        assertThat(failed).isPositive();
    }

    /**
     * Whether {@link #replayOnOneDatabaseSurvivesAFailureAtEveryStatementInTurn} first checks its setup: the late file
     * with an aged-out batch gives the history of the same files applied in order, in a fresh database. Default yes; a
     * slow database whose build runs the same check on the others may skip it (the fault points compare with the
     * history of its own clean replay either way).
     */
    protected boolean checksTheReplayScenarioInOrder() {
        return true;
    }

    /**
     * Which fault points a database's build injects ({@link #sampling()}). A fault point costs a fresh copy of the
     * scenario, the failing run, the rerun and the replay: about 0.05 s on H2, a second on PostgreSQL. A sample takes
     * every connection fault; one in {@code stride} of the points of the other kinds that fail at a call (prepare,
     * next); one in {@code statementStride} of the statements each statement fault may take ({@code crashStride} for
     * crashes, which leave work for recovery only where the run had committed part of its writes, so they are sampled
     * more densely), the residue moving with the scenario and the kind so that the sampled statements differ between
     * them, and at least one per kind and scenario; and the replay failed in turn at each statement that changes
     * something (writes, DDL, commits: a failure at a read aborts the same transaction, and leaves the same state, as
     * one at the next such statement). {@code -Ditersnap.faults=all} injects at every point whatever the setting.
     *
     * @param stride          one point in this many, of the kinds that fail at a call other than a statement's
     * @param statementStride one point in this many of those a statement fault may take
     * @param crashStride     one crash point in this many
     */
    public record Sampling(int stride, int statementStride, int crashStride) {
        /** Every point of every kind: the default. */
        public static final Sampling EVERY_POINT = new Sampling(1, 1, 1);

        public Sampling {
            if (stride < 1 || statementStride < 1 || crashStride < 1) {
                throw new IllegalArgumentException("strides are 1 or more: " + stride + ", " + statementStride + ", "
                        + crashStride);
            }
        }

        boolean everyPoint() {
            return equals(EVERY_POINT);
        }
    }

    /**
     * The fault points this database's build injects. Default: {@link Sampling#EVERY_POINT}; a slow database returns
     * a sample (PostgreSQL: {@code new Sampling(16, 24, 7)}, about 70 points and 4 minutes on a 2-core machine).
     */
    protected Sampling sampling() {
        return Sampling.EVERY_POINT;
    }

    private Sampling effectiveSampling() {
        return "all".equals(System.getProperty("itersnap.faults")) ? Sampling.EVERY_POINT : sampling();
    }

    /**
     * Whether {@link #replayOnOneDatabaseSurvivesAFailureAtEveryStatementInTurn} fails statement {@code k} (from 1) of
     * the run under test, whose statements are {@code script} ({@code COMMIT} for commits). Default: every statement,
     * or with a {@link #sampling() sample} the statements that change something ({@link #changes}). On a database
     * where every statement commits on its own, a failure at a read leaves the state a failure at the next write
     * leaves, so the writes (INSERT, UPDATE, DELETE, MERGE) cover every state a failure can leave; a slow database may
     * choose fewer (see {@link #isWrite}).
     */
    protected boolean injectAt(int k, List<String> script) {
        return effectiveSampling().everyPoint() || changes(script.get(k - 1));
    }

    /**
     * Whether the fault-per-scenario tests inject {@code fault} at call {@code k} (from 1) of the run under test;
     * {@code script} holds its statements ({@code COMMIT} for commits). Default: every call, except that
     * {@link Fault#EXECUTED_THEN_FAIL} is injected only at statements that change something (writes, DDL, commits):
     * a read that ran and then failed leaves the state of a read that failed; of those, the {@link #sampling() sample}.
     */
    protected boolean inject(String scenario, Fault fault, int k, List<String> script) {
        if (!eligible(fault, k, script)) {
            return false;
        }
        Sampling sampling = effectiveSampling();
        if (sampling.everyPoint() || fault == Fault.CONNECTION) {
            return true;
        }
        int statementStride = fault == Fault.CRASH ? sampling.crashStride() : sampling.statementStride();
        int residue = Math.floorMod(scenario.length() + fault.ordinal(),
                script.isEmpty() ? sampling.stride() : statementStride);
        if (script.isEmpty()) {
            // a different residue per scenario and kind, so the sampled points move around the run
            return Math.floorMod(k + residue, sampling.stride()) == 0;
        }
        // the statements this kind may fail, in order: every statementStride-th from the residue on, or the middle
        // one where there are fewer
        List<Integer> eligible = new ArrayList<>();
        for (int j = 1; j <= script.size(); j++) {
            if (eligible(fault, j, script)) {
                eligible.add(j);
            }
        }
        int at = eligible.indexOf(k);
        return eligible.size() > residue ? at % statementStride == residue : at == eligible.size() / 2;
    }

    /** Whether {@code fault} can be injected at call {@code k} at all (a read that ran and failed: no). */
    private static boolean eligible(Fault fault, int k, List<String> script) {
        return fault != Fault.EXECUTED_THEN_FAIL || changes(script.get(k - 1));
    }

    /** True for INSERT, UPDATE, DELETE and MERGE statements. */
    protected static boolean isWrite(String sql) {
        String s = sql == null ? "" : sql.stripLeading().toUpperCase(Locale.ROOT);
        return s.startsWith("INSERT") || s.startsWith("UPDATE") || s.startsWith("DELETE") || s.startsWith("MERGE");
    }

    /** True for writes, DDL and commits: the statements whose having run changes the database. */
    protected static boolean changes(String sql) {
        String s = sql == null ? "" : sql.stripLeading().toUpperCase(Locale.ROOT);
        return isWrite(s) || s.startsWith("CREATE") || s.startsWith("ALTER") || s.startsWith("DROP")
                || s.equals("COMMIT");
    }

    // ------------------------------------------------------------------ the harness

    /**
     * Runs the operation under test on a clean copy of the scenario (counting its calls), records what it leaves and
     * what a replay from the first batch then leaves; then for every kind of fault and every call {@link #inject}
     * chooses, fails that call on a fresh copy of the scenario, checks the state left behind, optionally fails the
     * rerun's recovery once, reruns without faults and compares with the clean run, and replays from the first batch.
     *
     * @param prepare      brings a fresh database to the moment before the run under test
     * @param secondFault  whether to fail each rerun once more at the first write of its recovery
     */
    private Injected failEveryPoint(String scenario, List<Fault> faults, boolean secondFault,
                                    Function<SnapshotFixture, UnderTest> prepare) {
        SnapshotFixture clean = newFixture();
        UnderTest t = prepare.apply(clean);
        ModelSettings m = t.model();
        FaultInjectingDataSource counting = new FaultInjectingDataSource(clean.dataSource());
        IterativeSnapshot countingEngine = clean.engine(counting.dataSource(), null);
        boolean transactional = countingEngine.dialect().capabilities().transactionalDml();
        counting.failAt(0);
        perform(countingEngine, t);
        List<String> script = counting.statements();
        Map<Call, Integer> calls = new EnumMap<>(Call.class);
        for (Call c : Call.values()) {
            calls.put(c, counting.count(c));
        }
        Outcome expected = outcome(clean, m);
        // a rerun of a repair repeats it, superseding what the faulted attempt left: its superseded versions differ
        boolean repair = t.operation() == Operation.FULL_REFRESH;
        String firstBatch = clean.ledger(m.name()).stream().map(LedgerEntry::sequence).sorted().findFirst()
                .orElseThrow();
        clean.engine(null).replayFrom(m, firstBatch);
        Outcome expectedAfterReplay = outcome(clean, m);
        release(clean);
        assertThat(script.size()).as("the run under test executes statements").isGreaterThan(10);
        // where the database can copy a prepared database cheaply, every fault point starts from a copy
        SnapshotFixture template = newFixture();
        prepare.apply(template);

        Map<Fault, Integer> points = new EnumMap<>(Fault.class);
        int failedRuns = 0;
        int absorbed = 0;
        int leftRunning = 0;
        int secondFaults = 0;
        for (Fault fault : faults) {
            int n = calls.get(fault.call);
            for (int k = 1; k <= n; k++) {
                if (fault.call == Call.STATEMENT ? !inject(scenario, fault, k, script)
                        : !inject(scenario, fault, k, List.of())) {
                    continue;
                }
                points.merge(fault, 1, Integer::sum);
                SnapshotFixture f = copyOf(template);
                if (f == null) {
                    f = newFixture();
                    prepare.apply(f);
                }
                FaultInjectingDataSource injecting = new FaultInjectingDataSource(f.dataSource());
                IterativeSnapshot faulty = f.engine(injecting.dataSource(), null);
                injecting.arm(fault.call, k, fault.mode);
                String where = scenario + ", " + fault.name().toLowerCase(Locale.ROOT) + " at "
                        + fault.call.name().toLowerCase(Locale.ROOT) + " " + k + "/" + n
                        + (fault.call == Call.STATEMENT ? ": " + describe(script, k) : "");
                boolean succeeded;
                try {
                    perform(faulty, t);
                    succeeded = true;
                    absorbed++;
                } catch (ItersnapException e) {
                    succeeded = false;
                    failedRuns++;
                }
                assertThat(injecting.injected()).as(where + ": fault fired").isTrue();
                if (succeeded) {
                    // the engine may absorb a fault it can afford (a retried CREATE ... IF NOT EXISTS, a lock release
                    // that the closing connection does anyway), but then the run must have done its whole job
                    assertOutcome(where + ": the run reported success despite the fault", expected, outcome(f, m));
                }
                List<SnapshotFixture.RunEntry> runs = f.runs(m.name());
                if (!runs.isEmpty() && "running".equals(runs.get(runs.size() - 1).status())) {
                    leftRunning++;
                }
                if (transactional) {
                    // without transactional DML a failed run may leave unrecorded writes; the rerun's recovery (below)
                    // must undo them, which the comparison after the rerun proves
                    assertHistoryMatchesLedger(f, m, where);
                }
                if (secondFault) {
                    // the rerun fails once more: at the first statement of its recovery, or at its first write
                    FaultInjectingDataSource again = new FaultInjectingDataSource(f.dataSource());
                    again.failFirst(k % 2 == 1 ? FaultInjectionTests::recoveryStart
                            : FaultInjectionTests::recoveryWrite);
                    try {
                        perform(f.engine(again.dataSource(), null), t);
                    } catch (ItersnapException e) {
                        // expected when the recovery write was failed
                    }
                    if (again.injected()) {
                        secondFaults++;
                        if (transactional) {
                            assertHistoryMatchesLedger(f, m, where + ", then a failure in the rerun's recovery");
                        }
                    }
                }
                try {
                    perform(f.engine(null), t);
                } catch (ItersnapException e) {
                    fail(where + ": the rerun without faults failed: " + e.getMessage(), e);
                }
                Outcome afterRerun = outcome(f, m);
                assertOutcome(where + ", after the rerun", repair ? expected.withoutSuperseded() : expected,
                        repair ? afterRerun.withoutSuperseded() : afterRerun);
                try {
                    f.engine(null).replayFrom(m, firstBatch);
                } catch (ItersnapException e) {
                    fail(where + ": the replay from " + firstBatch + " after the rerun failed: " + e.getMessage(), e);
                }
                Outcome afterReplay = outcome(f, m);
                boolean retained = repair;
                assertOutcome(where + ", after the rerun and a replay from " + firstBatch, retained
                        ? expectedAfterReplay.withoutSuperseded() : expectedAfterReplay,
                        retained ? afterReplay.withoutSuperseded() : afterReplay);
                release(f);
            }
        }
        release(template);
        Injected result = new Injected(scenario, points, failedRuns, absorbed, leftRunning, secondFaults);
        System.out.printf("fault injection [%s]: fault points %s (run under test: %d statements incl. commits, %s), "
                        + "%d runs failed, %d faults absorbed by a run that still did its whole job, %d runs left "
                        + "'running' for recovery, %d recoveries failed once more%n", scenario, points, script.size(),
                calls, failedRuns, absorbed, leftRunning, secondFaults);
        for (Fault fault : faults) {
            assertThat(points.getOrDefault(fault, 0)).as(scenario + ": points injected with " + fault).isPositive();
        }
        return result;
    }

    /** The first write of a recovery: a write to the history or metadata before the run reads the source. */
    private static boolean recoveryWrite(List<String> before, String sql) {
        String lower = sql.toLowerCase(Locale.ROOT);
        return !sourceRead(before) && isWrite(sql) && !lower.contains("itersnap_runs")
                && !lower.contains("itersnap_lock") && !lower.contains("itersnap_lease");
    }

    /**
     * The first statement of a recovery (it reads which batches the history holds; a run that needs no recovery
     * never executes it).
     */
    private static boolean recoveryStart(List<String> before, String sql) {
        String lower = sql.toLowerCase(Locale.ROOT);
        return !sourceRead(before) && lower.contains("select distinct") && lower.contains("opened_seq");
    }

    /**
     * True once the run has looked for batches in the source (discovery): its recovery is over. The metadata read,
     * which describes the source (no row read) beside the ledger, is not that.
     */
    private static boolean sourceRead(List<String> before) {
        return before.stream().map(s -> s == null ? "" : s.toLowerCase(Locale.ROOT))
                .anyMatch(s -> s.contains("raw_customers") && s.contains("select distinct")
                        && !s.contains("itersnap_ledger"));
    }

    static RunResult perform(IterativeSnapshot engine, UnderTest t) {
        return switch (t.operation()) {
            case RUN -> engine.run(t.model());
            case RUN_ACCEPTING_LOGIC_CHANGE -> engine.run(t.model(), dev.itersnap.core.LogicChange.ACCEPT);
            case FULL_REFRESH -> engine.fullRefresh(t.model());
        };
    }

    static void assertOutcome(String where, Outcome expected, Outcome actual) {
        assertThat(actual.history()).as(where + ": history").isEqualTo(expected.history());
        assertThat(actual.ledger()).as(where + ": ledger").isEqualTo(expected.ledger());
        assertThat(actual.errors()).as(where + ": error log").isEqualTo(expected.errors());
        assertThat(actual.archive()).as(where + ": archive").isEqualTo(expected.archive());
        assertThat(actual.registry()).as(where + ": column registry").isEqualTo(expected.registry());
        assertThat(actual.pending()).as(where + ": pending table rows (-1: no table)").isEqualTo(expected.pending());
        assertThat(actual.superseded()).as(where + ": superseded versions").isEqualTo(expected.superseded());
    }

    static String describe(List<String> script, int k) {
        String sql = script.get(k - 1);
        if (sql == null) {
            return "(unknown statement)";
        }
        String flat = sql.replaceAll("\\s+", " ");
        return flat.length() > 160 ? flat.substring(0, 160) + "..." : flat;
    }

    static Outcome outcome(SnapshotFixture f, ModelSettings m) {
        List<String> ledger = f.ledger(m.name()).stream().map(LedgerEntry::withoutRun).sorted().toList();
        List<String> errors = f.errors(m.name()).stream().map(SnapshotFixture.ErrorEntry::withoutRun).sorted()
                .toList();
        String meta = m.metadataSchema();
        List<String> archive = f.tableExists(meta + ".itersnap_archive_" + m.name())
                ? f.query("SELECT * FROM " + meta + ".itersnap_archive_" + m.name()).stream()
                .map(r -> new TreeMap<>(r).toString()).sorted().toList() : List.of();
        List<String> registry = f.tableExists(meta + ".itersnap_columns")
                ? f.query("SELECT column_name, introduced_seq, in_source, dropped_after FROM " + meta
                + ".itersnap_columns WHERE model = ?", m.name()).stream().map(r -> new TreeMap<>(r).toString())
                .sorted().toList() : List.of();
        long pending = f.tableExists(meta + ".itersnap_pending_" + m.name())
                ? (Long) f.query("SELECT COUNT(*) AS n FROM " + meta + ".itersnap_pending_" + m.name()).get(0)
                .get("n") : -1;
        String companion = meta + ".itersnap_superseded_" + m.name();
        List<String> superseded = f.tableExists(companion) ? f.query("SELECT * FROM " + companion).stream()
                .filter(r -> !"pruned".equals(value(r, "itersnap_entry"))).map(r -> {
                    TreeMap<String, Object> row = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
                    row.putAll(r);
                    List.of("itersnap_superseded_by", "itersnap_superseded_at", "itersnap_prev_run")
                            .forEach(row::remove);
                    return row.toString();
                }).sorted().toList() : List.of();
        return new Outcome(f.history(m.target().toString()), ledger, errors, archive, registry, pending, superseded);
    }

    /** A column of a row read by {@link SnapshotFixture#query}, its name in any case. */
    private static Object value(Map<String, Object> row, String column) {
        return row.entrySet().stream().filter(e -> e.getKey().equalsIgnoreCase(column)).map(Map.Entry::getValue)
                .findFirst().orElse(null);
    }

    /**
     * A failed run leaves the history as after the last batch in the ledger. Every version must have been
     * opened, and closed, by a batch the ledger holds.
     */
    private static void assertHistoryMatchesLedger(SnapshotFixture f, ModelSettings m, String where) {
        if (!f.tableExists(m.target().toString())) {
            return;
        }
        Set<String> ledger = new HashSet<>();
        f.ledger(m.name()).forEach(e -> ledger.add(e.sequence()));
        List<String> unrecorded = new ArrayList<>();
        Function<Object, String> text = f.sequenceTexts(m);
        for (Version v : f.history(m.target().toString())) {
            for (Object seq : new Object[] {v.openedSeq(), v.closedSeq()}) {
                if (seq != null && !ledger.contains(text.apply(seq))) {
                    unrecorded.add(seq + " in " + v);
                }
            }
        }
        assertThat(unrecorded).as(where + ": versions written by batches the ledger does not hold (ledger %s)",
                ledger).isEmpty();
    }
}
