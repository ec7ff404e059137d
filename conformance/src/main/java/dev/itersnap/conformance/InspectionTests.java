package dev.itersnap.conformance;

import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.HardDeletes;
import dev.itersnap.core.Inspection;
import dev.itersnap.core.Inspection.Batch;
import dev.itersnap.core.Inspection.FingerprintState;
import dev.itersnap.core.Inspection.LockStatus;
import dev.itersnap.core.Inspection.Run;
import dev.itersnap.core.Inspection.RunStatus;
import dev.itersnap.core.Inspection.SetAsideCount;
import dev.itersnap.core.Inspection.SetAsideRow;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.RunResult;
import dev.itersnap.core.SnapshotEvent;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static dev.itersnap.conformance.SnapshotFixture.date;
import static dev.itersnap.conformance.SnapshotFixture.ts;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The read API ({@code IterativeSnapshot.inspect}): what an application reads about a model without writing anything,
 * against what the runs did: the ledger in business order with each batch's counts, run and fingerprint, the run log
 * newest first, the rows set aside by batch, the recorded logic, and the model lock while a run holds it.
 */
public abstract class InspectionTests extends ConformanceTestBase {

    @Test
    void beforeTheFirstRunEverythingIsEmptyAndNothingIsCreated() {
        RawTable raw = customers(fixture);
        raw.insert(1, "Active", "basic", ts("2024-01-01 09:00"), date("2024-01-01"));

        Inspection inspection = fixture.engine(null).inspect(model(raw).build());

        assertThat(inspection.model()).isEqualTo(MODEL);
        assertThat(inspection.metadataExists()).isFalse();
        assertThat(inspection.ledger()).isEmpty();
        assertThat(inspection.runs(0)).isEmpty();
        assertThat(inspection.setAsideCounts()).isEmpty();
        assertThat(inspection.setAside(date("2024-01-01"), 0)).isEmpty();
        assertThat(inspection.recordedLogic()).isEmpty();
        assertThat(inspection.adoption()).isEmpty();
        assertThat(inspection.restatedBatches()).isEmpty();
        assertThat(inspection.repairs(0)).isEmpty();
        assertThat(inspection.lock().state()).isNotEqualTo(LockStatus.HELD);
        assertThat(inspection.lock().holder()).isNull();
        assertThat(fixture.tableExists(inspection.metadataSchema() + ".itersnap_runs")).as("nothing created").isFalse();
        assertThat(fixture.tableExists(TARGET)).isFalse();
    }

    /**
     * Two runs, the second with a late batch: the ledger comes back in business order with the counts the runs
     * recorded and the run that applied (or replayed) each batch; the run log newest first with outcome, late batch,
     * replay point and timings; the rows set aside by batch and reason, and each batch's rows with their records.
     */
    @Test
    void ledgerRunsAndSetAsideRowsAfterALateBatch() {
        RawTable raw = customers(fixture);
        raw.insert(1, "Active", "basic", ts("2024-01-01 09:00"), date("2024-01-01"));
        raw.insert(2, "Active", "basic", ts("2024-01-01 10:00"), date("2024-01-01"));
        raw.insert(null, "Ghost", "basic", ts("2024-01-01 10:00"), date("2024-01-01"));
        raw.insert(9, "Lost", "basic", ts("2024-01-01 10:00"), null);
        raw.insert(1, "Gold", "pro", ts("2024-01-10 09:00"), date("2024-01-10"));
        ModelSettings m = model(raw).build();
        RunResult first = fixture.run(m);
        raw.insert(1, "Premium", "plus", ts("2024-01-02 09:00"), date("2024-01-02"));
        raw.insert(2, "A", "x", ts("2024-01-02 09:00"), date("2024-01-02"));
        raw.insert(2, "B", "y", ts("2024-01-02 09:00"), date("2024-01-02"));
        RunResult late = fixture.run(m);
        assertThat(late.lateBatchFound()).isTrue();

        Inspection inspection = fixture.engine(null).inspect(m);

        assertThat(inspection.metadataExists()).isTrue();
        List<Batch> ledger = inspection.ledger();
        assertThat(ledger).extracting(Batch::sequence).containsExactly("2024-01-01", "2024-01-02", "2024-01-10");
        assertThat(ledger).extracting(Batch::runId).containsExactly(first.runId(), late.runId(), late.runId());
        Batch jan1 = ledger.get(0);
        assertThat(List.of(jan1.sourceRows(), jan1.inserted(), jan1.updated(), jan1.deleted(), jan1.rejected()))
                .containsExactly(3L, 2L, 0L, 0L, 1L);
        assertThat(ledger.get(1).rejected()).isEqualTo(2);
        assertThat(ledger).allSatisfy(b -> {
            assertThat(b.fingerprint()).isEqualTo(FingerprintState.RECORDED);
            assertThat(b.reproduced()).isFalse();
            assertThat(b.appliedAt()).isNotNull();
        });

        List<Run> runs = inspection.runs(0);
        assertThat(runs).extracting(Run::runId).containsExactly(late.runId(), first.runId());
        Run newest = runs.get(0);
        assertThat(newest.status()).isEqualTo(RunStatus.SUCCESS);
        assertThat(newest.operation()).isEqualTo("run");
        assertThat(newest.lateBatch()).isTrue();
        assertThat(newest.replayPoint()).isEqualTo("2024-01-02");
        assertThat(newest.batchesApplied()).isEqualTo(late.batchesApplied());
        assertThat(newest.error()).isNull();
        assertThat(newest.holder()).isNotBlank();
        assertThat(newest.duration()).isNotNull().isGreaterThanOrEqualTo(Duration.ZERO);
        assertThat(runs.get(1).lateBatch()).isFalse();
        assertThat(inspection.runs(1)).extracting(Run::runId).containsExactly(late.runId());
        assertThatThrownBy(() -> inspection.runs(-1)).isInstanceOf(IllegalArgumentException.class);

        assertThat(inspection.setAsideCounts()).filteredOn(c -> c.sequence() != null).containsExactly(
                new SetAsideCount("2024-01-01", "null_key", 1), new SetAsideCount("2024-01-02", "duplicate_key", 2));
        assertThat(inspection.setAsideCounts()).filteredOn(c -> c.sequence() == null)
                .containsExactly(new SetAsideCount(null, "null_sequence", 1));
        List<SetAsideRow> duplicates = inspection.setAside(date("2024-01-02"), 0);
        assertThat(duplicates).hasSize(2).allSatisfy(r -> {
            assertThat(r.sequence()).isEqualTo("2024-01-02");
            assertThat(r.reason()).isEqualTo("duplicate_key");
            assertThat(r.runId()).isEqualTo(late.runId());
            assertThat(r.loggedAt()).isNotNull();
        });
        assertThat(duplicates).extracting(r -> r.record().replace(" ", "").toLowerCase(java.util.Locale.ROOT))
                .anySatisfy(json -> assertThat(json).contains("\"status\":\"a\""))
                .anySatisfy(json -> assertThat(json).contains("\"status\":\"b\""));
        assertThat(inspection.setAside("2024-01-02", 1)).as("text form, limited").hasSize(1);
        assertThat(inspection.setAside(date("2024-01-01"), 0)).singleElement()
                .satisfies(r -> assertThat(r.reason()).isEqualTo("null_key"));
        assertThat(inspection.setAside(null, 0)).singleElement().satisfies(r -> {
            assertThat(r.sequence()).isNull();
            assertThat(r.reason()).isEqualTo("null_sequence");
            assertThat(r.record()).contains("Lost");
        });
        assertThat(inspection.setAside(date("2024-01-10"), 0)).isEmpty();
        assertThatThrownBy(() -> inspection.setAside("not a date", 0)).isInstanceOf(ItersnapException.class)
                .hasMessageContaining("not a date").hasMessageContaining(MODEL);

        assertThat(inspection.lock().state()).isEqualTo(LockStatus.FREE);
        assertThat(inspection.lock().holder()).isNull();
        assertThat(inspection.lock().leftBy()).isNull();
        assertThat(inspection.restatedBatches()).isEmpty();
    }

    /**
     * The recorded logic is the last successful run's; an inspection made with changed settings says it is not
     * current (what a run refuses with LOGIC_CHANGE), and a restated batch is listed before a run replays it.
     */
    @Test
    void recordedLogicAndRestatedBatches() {
        RawTable raw = customers(fixture);
        raw.insert(1, "Active", "basic", ts("2024-01-01 09:00"), date("2024-01-01"));
        raw.insert(1, "Gold", "pro", ts("2024-01-02 09:00"), date("2024-01-02"));
        ModelSettings m = model(raw).build();
        RunResult run = fixture.run(m);

        Inspection.RecordedLogic logic = fixture.engine(null).inspect(m).recordedLogic().orElseThrow();
        assertThat(logic.runId()).isEqualTo(run.runId());
        assertThat(logic.logic()).isEqualTo(m.logic());
        assertThat(logic.current()).isTrue();
        assertThat(logic.recordedAt()).isNotNull();
        ModelSettings changed = model(raw).hardDeletes(HardDeletes.INVALIDATE).build();
        assertThat(fixture.engine(null).inspect(changed).recordedLogic().orElseThrow().current()).isFalse();

        raw.update("status", "Corrected", "file_date", date("2024-01-02"));
        assertThat(fixture.engine(null).inspect(m).restatedBatches()).containsExactly("2024-01-02");
        assertThat(fixture.run(m).replayPoint()).as("the run replays what the inspection listed").isNotNull();
        assertThat(fixture.engine(null).inspect(m).restatedBatches()).isEmpty();
    }

    /**
     * The repairs, newest first, with what each superseded: a late batch replayed for the key it changes (that key's
     * versions from the late batch on, the ledger entry it applied again), then a replay of every key from the first
     * batch (every version, every entry). A model that keeps no superseded versions lists none.
     */
    @Test
    void repairsListTheKeysAndVersionsEachSuperseded() {
        RawTable raw = customers(fixture);
        raw.insert(1, "Active", "basic", ts("2024-01-01 09:00"), date("2024-01-01"));
        raw.insert(2, "Active", "basic", ts("2024-01-01 09:00"), date("2024-01-01"));
        raw.insert(3, "Active", "basic", ts("2024-01-01 09:00"), date("2024-01-01"));
        raw.insert(1, "Gold", "pro", ts("2024-01-03 09:00"), date("2024-01-03"));
        raw.insert(2, "Gold", "pro", ts("2024-01-03 09:00"), date("2024-01-03"));
        ModelSettings m = model(raw).build();
        fixture.run(m);
        assertThat(fixture.engine(null).inspect(m).repairs(0)).as("no repair yet").isEmpty();
        raw.insert(1, "Silver", "plus", ts("2024-01-02 09:00"), date("2024-01-02"));
        RunResult late = fixture.run(m);
        assertThat(late.lateBatchFound()).isTrue();
        RunResult replay = fixture.engine(null).replayFrom(m, date("2024-01-01"));

        List<Inspection.Repair> repairs = fixture.engine(null).inspect(m).repairs(0);

        assertThat(repairs).extracting(Inspection.Repair::runId).containsExactly(replay.runId(), late.runId());
        Inspection.Repair all = repairs.get(0);
        assertThat(all.everyKey()).isTrue();
        assertThat(all.keysRecomputed()).isNull();
        // key 1: three versions, key 2: two, key 3: one; the three batches applied again
        assertThat(List.of(all.keys(), all.versions(), all.ledgerEntries())).containsExactly(3L, 6L, 3L);
        assertThat(all.exampleKeys()).extracting(k -> k.toLowerCase(java.util.Locale.ROOT))
                .containsExactly("id=1", "id=2", "id=3");
        Inspection.Repair byKey = repairs.get(1);
        assertThat(byKey.everyKey()).isFalse();
        assertThat(byKey.keysRecomputed()).isEqualTo(1L);
        // key 1's version of 2024-01-01 (closed again, earlier) and of 2024-01-03 (opened again); 2024-01-03's entry
        assertThat(List.of(byKey.keys(), byKey.versions(), byKey.ledgerEntries())).containsExactly(1L, 2L, 1L);
        assertThat(byKey.exampleKeys()).extracting(k -> k.toLowerCase(java.util.Locale.ROOT)).containsExactly("id=1");
        assertThat(byKey.supersededAt()).isNotNull().isBeforeOrEqualTo(all.supersededAt());
        assertThat(fixture.engine(null).inspect(m).repairs(1)).extracting(Inspection.Repair::runId)
                .containsExactly(replay.runId());
        assertThatThrownBy(() -> fixture.engine(null).inspect(m).repairs(-1))
                .isInstanceOf(IllegalArgumentException.class);

        ModelSettings keepsNone = ModelSettings.builder("other").target("snap_other").source(raw.selectAll())
                .uniqueKey("id").updatedAt("updated_at").sequenceBy("file_date").keepSuperseded(false).build();
        fixture.run(keepsNone);
        fixture.engine(null).replayFrom(keepsNone, date("2024-01-01"));
        assertThat(fixture.engine(null).inspect(keepsNone).repairs(0)).as("nothing kept").isEmpty();
    }

    /**
     * {@code superseded_retention}: a repair deletes what the repairs finished more than the retention before it
     * superseded, and leaves its mark; the history as known at a moment before the last deleted repair finished is
     * refused naming the first moment that can be read, and from that moment on the read is exact.
     */
    @Test
    void aRetentionDeletesWhatOldRepairsSupersededAndRefusesReadsThatWouldNeedIt() throws Exception {
        LateRepair l = lateRepair(b -> b.supersededRetention(Duration.ofMillis(1)));
        ModelSettings m = l.m();
        List<Map<String, Object>> firstHistory = l.before();
        List<Map<String, Object>> lateHistory = l.after();
        Object firstFinished = finished(l.first().runId());
        Object lateFinished = finished(l.late().runId());
        assertThat(known(m, firstFinished)).as("nothing deleted yet").containsExactlyInAnyOrderElementsOf(firstHistory);
        Thread.sleep(20); // the late run finished more than the retention (1 ms) before the next repair

        RunResult replay = fixture.engine(null).replayFrom(m, date("2024-01-01"));

        assertThat(fixture.engine(null).inspect(m).repairs(0)).extracting(Inspection.Repair::runId)
                .as("the late run's repair deleted").containsExactly(replay.runId());
        assertThatThrownBy(() -> known(m, firstFinished)).isInstanceOf(ItersnapException.class)
                .satisfies(e -> assertThat(((ItersnapException) e).code()).isEqualTo(ErrorCode.INVALID_SETTING))
                .hasMessageContaining("superseded_retention").hasMessageContaining(MODEL);
        assertThat(known(m, lateFinished)).as("from the late run's finish on, exact")
                .containsExactlyInAnyOrderElementsOf(lateHistory);
        assertThat(fixture.query("SELECT * FROM " + TARGET)).as("the history itself")
                .containsExactlyInAnyOrderElementsOf(lateHistory);
    }

    /**
     * A repair that committed its writes but whose run log does not say it succeeded: the history as known at any
     * moment still counts it. One whose last write failed (the run log records its failure) counts from that
     * recorded end; one that died after its commit (the run log left {@code running}) counts at no moment, the history
     * read as it was before it, until a later run finds it dead (also after a run that failed on the lock in between):
     * that run closes its row ({@code failed}, ended at the finding run's start) with its own end, and the repair
     * counts from then. Either way a read before the repair is
     * the history before it, every column of every version, and a retention deletes what it superseded like any
     * finished repair's.
     */
    @Test
    void aRepairWhoseRunLogDoesNotSayItSucceededIsKnownFromItsRecordedEnd() throws Exception {
        LateRepair l = lateRepair(b -> b);
        RawTable raw = l.raw();
        ModelSettings m = l.m();
        RunResult late = l.late();
        List<Map<String, Object>> before = l.before();
        List<Map<String, Object>> after = l.after();
        Object firstFinished = finished(l.first().runId());
        Object lateFinished = finished(late.runId());
        String runs = SnapshotFixture.METADATA + ".itersnap_runs";

        // its last write failed after its commit: the failure is recorded, with its end
        fixture.execute("UPDATE " + runs + " SET status = 'failed', error_message = 'injected' WHERE run_id = ?",
                late.runId());
        assertThat(known(m, firstFinished)).as("failed after its commit: before it")
                .containsExactlyInAnyOrderElementsOf(before);
        assertThat(known(m, lateFinished)).as("failed after its commit: from its recorded end")
                .containsExactlyInAnyOrderElementsOf(after);

        // it died after its commit: no end recorded
        fixture.execute("UPDATE " + runs + " SET status = 'running', finished_at = NULL, error_message = NULL WHERE "
                + "run_id = ?", late.runId());
        assertThat(known(m, lateFinished)).as("dead, not found yet: the history before it")
                .containsExactlyInAnyOrderElementsOf(before);
        // a run that failed on the lock in between (the dead run's lease still held): the run after it finds the dead
        fixture.execute("INSERT INTO " + runs + " (run_id, model, operation, started_at, finished_at, status, "
                + "error_message) VALUES ('lock-timeout', ?, 'run', ?, ?, 'failed', 'lock timeout')", MODEL,
                java.time.LocalDateTime.now(), java.time.LocalDateTime.now());
        Thread.sleep(5);
        RunResult finder = fixture.run(m);
        assertThat(finder.batchesApplied()).isZero();
        SnapshotFixture.RunEntry dead = fixture.runs(MODEL).stream().filter(r -> r.runId().equals(late.runId()))
                .findFirst().orElseThrow();
        SnapshotFixture.RunEntry found = fixture.runs(MODEL).stream().filter(r -> r.runId().equals(finder.runId()))
                .findFirst().orElseThrow();
        assertThat(dead.status()).isEqualTo("failed");
        assertThat(dead.errorMessage()).contains("did not finish").contains(finder.runId());
        assertThat(SnapshotFixture.normalize(dead.finishedAt())).as("ended at the start of the run that found it")
                .isEqualTo(SnapshotFixture.normalize(found.startedAt()));
        assertThat(known(m, firstFinished)).as("found dead: before it").containsExactlyInAnyOrderElementsOf(before);
        assertThat(known(m, dead.finishedAt())).as("found dead: from the finding run's start")
                .containsExactlyInAnyOrderElementsOf(after);
        assertThat(fixture.query("SELECT * FROM " + TARGET)).as("the history itself")
                .containsExactlyInAnyOrderElementsOf(after);

        // a retention deletes what it superseded like any finished repair's
        Thread.sleep(20);
        ModelSettings retained = model(raw).supersededRetention(Duration.ofMillis(1)).build();
        RunResult replay = fixture.engine(null).replayFrom(retained, date("2024-01-01"));
        assertThat(fixture.engine(null).inspect(retained).repairs(0)).extracting(Inspection.Repair::runId)
                .as("the dead repair's copies deleted by the next repair's retention").containsExactly(replay.runId());
    }

    /**
     * A first run over 2024-01-01 and 2024-01-03 (keys 1 and 2), then 2024-01-02 for key 1 arriving late and repaired
     * by the second run: the raw table, the model, both runs and the history after each.
     */
    private record LateRepair(RawTable raw, ModelSettings m, RunResult first, List<Map<String, Object>> before,
                              RunResult late, List<Map<String, Object>> after) {
    }

    /** {@link LateRepair} under the model's settings as {@code settings} completes them. */
    private LateRepair lateRepair(java.util.function.UnaryOperator<ModelSettings.Builder> settings) {
        RawTable raw = customers(fixture);
        raw.insert(1, "Active", "basic", ts("2024-01-01 09:00"), date("2024-01-01"));
        raw.insert(2, "Active", "basic", ts("2024-01-01 09:00"), date("2024-01-01"));
        raw.insert(1, "Gold", "pro", ts("2024-01-03 09:00"), date("2024-01-03"));
        ModelSettings m = settings.apply(model(raw)).build();
        RunResult first = fixture.run(m);
        List<Map<String, Object>> before = fixture.query("SELECT * FROM " + TARGET);
        raw.insert(1, "Silver", "plus", ts("2024-01-02 09:00"), date("2024-01-02"));
        RunResult late = fixture.run(m);
        assertThat(late.lateBatchFound()).isTrue();
        return new LateRepair(raw, m, first, before, late, fixture.query("SELECT * FROM " + TARGET));
    }

    /** A run's finish time in the run log. */
    private Object finished(String runId) {
        return fixture.runs(MODEL).stream().filter(r -> r.runId().equals(runId)).findFirst().orElseThrow()
                .finishedAt();
    }

    /** The history as known at {@code at}, in the history's columns. */
    private List<Map<String, Object>> known(ModelSettings m, Object at) {
        List<Map<String, Object>> history = fixture.query("SELECT * FROM " + TARGET);
        return fixture.query(fixture.engine(null).asOfSql(m, dev.itersnap.core.AsOf.knownAt(at))).stream().map(row -> {
            Map<String, Object> same = new java.util.LinkedHashMap<>();
            history.get(0).keySet().forEach(c -> same.put(c, row.get(c)));
            return same;
        }).toList();
    }

    /** While a run works, the lock is held by that run, since it started; afterwards it is free. */
    @Test
    void theLockIsHeldByTheRunningRun() throws Exception {
        RawTable raw = customers(fixture);
        raw.insert(1, "Active", "basic", ts("2024-01-01 09:00"), date("2024-01-01"));
        ModelSettings m = model(raw).build();
        fixture.run(m);
        raw.insert(1, "Gold", "pro", ts("2024-01-02 09:00"), date("2024-01-02"));
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        String[] runId = new String[1];
        CompletableFuture<RunResult> running = CompletableFuture.supplyAsync(() -> fixture.engine(e -> {
            if (e instanceof SnapshotEvent.RunStarted s) {
                runId[0] = s.runId();
                started.countDown();
                try {
                    release.await(60, TimeUnit.SECONDS); // the run holds the model lock while it waits here
                } catch (InterruptedException ignored) {
                    Thread.currentThread().interrupt();
                }
            }
        }).run(m));
        try {
            assertThat(started.await(60, TimeUnit.SECONDS)).isTrue();

            Inspection.Lock lock = fixture.engine(null).inspect(m).lock();

            assertThat(lock.state()).isEqualTo(LockStatus.HELD);
            assertThat(lock.holder()).isNotNull();
            assertThat(lock.holder().runId()).isEqualTo(runId[0]);
            assertThat(lock.holder().status()).isEqualTo(RunStatus.RUNNING);
            assertThat(lock.holder().finishedAt()).isNull();
            assertThat(lock.since()).isEqualTo(lock.holder().startedAt()).isNotNull();
            assertThat(lock.leftBy()).isNull();
        } finally {
            release.countDown();
        }
        assertThat(running.get(120, TimeUnit.SECONDS).batchesApplied()).isEqualTo(1);
        assertThat(fixture.engine(null).inspect(m).lock().state()).isEqualTo(LockStatus.FREE);
    }
}
