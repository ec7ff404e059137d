package dev.itersnap.conformance;

import dev.itersnap.conformance.SnapshotFixture.Essence;
import dev.itersnap.core.HardDeletes;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.Restatements;
import dev.itersnap.core.RunResult;
import dev.itersnap.core.SnapshotEvent;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static dev.itersnap.conformance.SnapshotFixture.date;
import static dev.itersnap.conformance.SnapshotFixture.ts;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Restated batches (docs/semantics.md, "Restated batches"): an applied batch whose rows changed in the source (rows
 * corrected, rows appended, rows removed, the whole batch replaced) is replayed from, in the same run, and the history
 * equals that of one clean in-order run over the source as it is now. A batch that left the source is not restated;
 * a column added to the source restates nothing; {@code restatements: ignore} leaves applied batches alone; a ledger
 * written before fingerprints were recorded gets them without a replay.
 */
public abstract class RestatementTests extends ConformanceTestBase {
    private static final LocalDate D1 = date("2024-01-01");

    /** How the source restates an applied batch. */
    public enum Kind {
        /** A row's values corrected, the row count unchanged. */
        ROWS_CORRECTED,
        /** Rows of new keys appended to the batch. */
        ROWS_APPENDED,
        /** Rows removed from the batch. */
        ROWS_REMOVED,
        /** The whole batch replaced by another file under the same sequence. */
        BATCH_REPLACED
    }

    private static LocalDate day(int d) {
        return D1.plusDays(d - 1);
    }

    /** Daily file d: keys 1..4, key {@code d % 4 + 1} changes on day d, key 5 on odd days only. */
    private static List<Object[]> file(int d) {
        List<Object[]> rows = new ArrayList<>();
        for (int id = 1; id <= 5; id++) {
            if (id == 5 && d % 2 == 0) {
                continue;
            }
            int changed = 0;
            for (int e = 1; e <= d; e++) {
                if (id == e % 4 + 1) {
                    changed = e;
                }
            }
            rows.add(new Object[] {id, changed == 0 ? "Active" : "S" + changed, "A",
                    changed == 0 ? ts("2023-12-31 09:00") : ts(day(changed) + " 09:00"), day(d)});
        }
        return rows;
    }

    /** File d as the source holds it after the restatement {@code kind}. */
    private static List<Object[]> restated(int d, Kind kind) {
        List<Object[]> rows = new ArrayList<>(file(d));
        switch (kind) {
            case ROWS_CORRECTED -> rows.set(0, new Object[] {rows.get(0)[0], "Corrected", "C",
                    ts(day(d) + " 10:00"), day(d)});
            case ROWS_APPENDED -> {
                rows.add(new Object[] {6, "Active", "A", ts(day(d) + " 08:00"), day(d)});
                rows.add(new Object[] {7, "Gold", "B", ts(day(d) + " 08:30"), day(d)});
            }
            case ROWS_REMOVED -> {
                rows.remove(rows.size() - 1);
                rows.remove(1);
            }
            case BATCH_REPLACED -> {
                rows.clear();
                for (int id = 2; id <= 8; id += 2) {
                    rows.add(new Object[] {id, "R" + id, "B", ts(day(d) + " 11:00"), day(d)});
                }
            }
        }
        return rows;
    }

    static Stream<Arguments> kinds() {
        List<Arguments> out = new ArrayList<>();
        for (Kind k : Kind.values()) {
            for (HardDeletes h : List.of(HardDeletes.IGNORE, HardDeletes.NEW_RECORD)) {
                out.add(Arguments.of(k, h));
            }
        }
        return out.stream();
    }

    /** The history of one clean run over files 1..days with file {@code restatedDay} restated, on a fresh database. */
    private List<Essence> clean(int days, int restatedDay, Kind kind, HardDeletes hardDeletes) {
        SnapshotFixture clean = newFixture();
        RawTable raw = customers(clean);
        for (int d = 1; d <= days; d++) {
            raw.insertAll(d == restatedDay ? restated(d, kind) : file(d));
        }
        clean.run(model(raw).hardDeletes(hardDeletes).build());
        List<Essence> history = clean.essence(TARGET);
        release(clean);
        return history;
    }

    /** Files 1..days, one run each. */
    private void applied(RawTable raw, int days, ModelSettings model) {
        for (int d = 1; d <= days; d++) {
            raw.insertAll(file(d));
            fixture.run(model);
        }
    }

    /**
     * Whether {@link #restatedBatchIsReplayedAndEqualsACleanRunOverTheCorrectedSource} applies its first four files in
     * one run instead of one run each (the ledger records a fingerprint per batch either way). Spark takes one run:
     * every engine run there is about fifty Spark jobs.
     */
    protected boolean appliesTheFilesInOneRun() {
        return false;
    }

    /**
     * The model of the cases that test how a restatement is replayed: every applied batch compared on every run (the
     * lookback covers them all), so that the batch's age does not matter. How far back a run looks is tested below.
     */
    private static ModelSettings build(RawTable raw, HardDeletes hardDeletes) {
        return model(raw).hardDeletes(hardDeletes).restatementLookback(ModelSettings.MAX_RESTATEMENT_BATCHES).build();
    }

    /**
     * Each kind of restatement of an applied batch, files and hard-delete modes alike: the next run replays from the
     * restated batch, reports it (BatchRestated with the old and new row counts, the replay point in the run log), and
     * the history equals a clean in-order run over the corrected source. A run after it finds nothing to do.
     */
    @ParameterizedTest(name = "{0}, hard_deletes {1}")
    @MethodSource("kinds")
    void restatedBatchIsReplayedAndEqualsACleanRunOverTheCorrectedSource(Kind kind, HardDeletes hardDeletes) {
        RawTable raw = customers(fixture);
        ModelSettings m = build(raw, hardDeletes);
        for (int d = 1; d <= 4; d++) {
            raw.insertAll(file(d));
            if (d == 4 || !appliesTheFilesInOneRun()) {
                fixture.run(m);
            }
        }
        raw.deleteWhere("file_date", day(2));
        raw.insertAll(restated(2, kind));
        RecordingListener events = new RecordingListener();

        RunResult r = fixture.engine(events).run(m);

        assertThat(events.of(SnapshotEvent.BatchRestated.class)).singleElement().satisfies(e -> {
            assertThat(e.sequence()).isEqualTo(day(2));
            assertThat(e.oldRows()).isEqualTo(file(2).size());
            assertThat(e.newRows()).isEqualTo(restated(2, kind).size());
        });
        assertThat(r.lateBatchFound()).isFalse();
        assertThat(r.replayPoint()).isEqualTo(day(2));
        assertThat(r.batchesApplied()).isEqualTo(3);
        assertThat(fixture.essence(TARGET)).containsExactlyInAnyOrderElementsOf(clean(4, 2, kind, hardDeletes));
        assertThat(fixture.runs(MODEL)).last().satisfies(run -> assertThat(run.replayPoint()).isEqualTo("2024-01-02"));
        assertThat(fixture.ledgerEntry(MODEL, "2024-01-02").sourceRows()).isEqualTo(restated(2, kind).size());
        assertThat(fixture.timelineProblems(TARGET, "id")).isEmpty();

        events.clear();
        RunResult again = fixture.engine(events).run(m);
        assertThat(again.batchesApplied()).isZero();
        assertThat(events.of(SnapshotEvent.BatchRestated.class)).isEmpty();
    }

    /**
     * A restatement and a late batch found by one run: the history is replayed once, from the earlier of the two, for
     * every key (the late batch alone would be replayed key by key, which would miss the restated batch's other keys).
     */
    @Test
    void restatementAfterALateBatchIsReplayedInTheSameRun() {
        RawTable raw = customers(fixture);
        ModelSettings m = build(raw, HardDeletes.IGNORE);
        for (int d : new int[] {1, 3, 4}) {
            raw.insertAll(file(d));
            fixture.run(m);
        }
        raw.insertAll(file(2)); // late
        raw.deleteWhere("file_date", day(3));
        raw.insertAll(restated(3, Kind.ROWS_CORRECTED)); // same row count, other content
        RecordingListener events = new RecordingListener();

        RunResult r = fixture.engine(events).run(m);

        assertThat(r.lateBatchFound()).isTrue();
        assertThat(r.replayPoint()).isEqualTo(day(2));
        assertThat(events.of(SnapshotEvent.BatchRestated.class)).singleElement()
                .satisfies(e -> assertThat(e.sequence()).isEqualTo(day(3)));
        assertThat(fixture.essence(TARGET)).containsExactlyInAnyOrderElementsOf(
                clean(4, 3, Kind.ROWS_CORRECTED, HardDeletes.IGNORE));
    }

    /** A batch that left the source (retention) is not restated: nothing is replayed, the history keeps it. */
    @Test
    void batchThatLeftTheSourceIsNotARestatement() {
        RawTable raw = customers(fixture);
        ModelSettings m = build(raw, HardDeletes.NEW_RECORD);
        applied(raw, 3, m);
        List<Essence> before = fixture.essence(TARGET);
        raw.deleteWhere("file_date", day(1));
        RecordingListener events = new RecordingListener();

        RunResult r = fixture.engine(events).run(m);

        assertThat(r.batchesApplied()).isZero();
        assertThat(events.of(SnapshotEvent.BatchRestated.class)).isEmpty();
        assertThat(fixture.essence(TARGET)).containsExactlyInAnyOrderElementsOf(before);
    }

    /**
     * A column added to the source (NULL in the applied batches' rows) changes the text every fingerprint covers,
     * not the batches: no batch is restated, the fingerprints are recorded again over the new columns, and a
     * correction after that is found.
     */
    @Test
    void columnAddedToTheSourceRestatesNothing() {
        RawTable raw = customers(fixture);
        ModelSettings m = build(raw, HardDeletes.IGNORE);
        applied(raw, 3, m);
        raw.addColumn("note VARCHAR(20)");
        RecordingListener events = new RecordingListener();

        RunResult r = fixture.engine(events).run(m);

        assertThat(r.batchesApplied()).isZero();
        assertThat(events.of(SnapshotEvent.BatchRestated.class)).isEmpty();

        raw.update("status", "Fixed", "file_date", day(2));
        events.clear();
        r = fixture.engine(events).run(m);
        assertThat(events.of(SnapshotEvent.BatchRestated.class)).singleElement()
                .satisfies(e -> assertThat(e.sequence()).isEqualTo(day(2)));
        assertThat(r.replayPoint()).isEqualTo(day(2));
    }

    /**
     * A batch corrected in the same interval as a column is added to the source (no run compared it in between): the
     * run that finds the new column compares every batch over the columns its fingerprint covers, finds the correction
     * and replays it (the dry run's list of restated batches says so first); the history equals one clean run over the
     * source as it is now.
     */
    @Test
    void correctionBesideAnAddedColumnIsReplayed() {
        RawTable raw = customers(fixture);
        ModelSettings m = model(raw).build(); // lookback 1, sweep 1: batch 2 is not compared by the next run
        applied(raw, 4, m);
        raw.addColumn("note VARCHAR(20)");
        raw.update("status", "Fixed", "file_date", day(2));
        assertThat(fixture.engine(null).inspect(m).restatedBatches()).containsExactly(day(2).toString());
        RecordingListener events = new RecordingListener();

        RunResult r = fixture.engine(events).run(m);

        assertThat(events.of(SnapshotEvent.BatchRestated.class)).singleElement()
                .satisfies(e -> assertThat(e.sequence()).isEqualTo(day(2)));
        assertThat(events.of(SnapshotEvent.UncomparableBatches.class)).isEmpty();
        assertThat(r.replayPoint()).isEqualTo(day(2));
        assertThat(fixture.essence(TARGET)).containsExactlyInAnyOrderElementsOf(
                cleanWith(4, 2, "note VARCHAR(20)"));
        events.clear();
        assertThat(fixture.engine(events).runWithFullCheck(m).batchesApplied()).isZero();
        assertThat(events.of(SnapshotEvent.BatchRestated.class)).isEmpty();
    }

    /**
     * A batch corrected in the same interval as a column leaves the source: its fingerprint covers a column the source
     * no longer has, so no comparison can tell whether it changed. The run says so and replays every batch the source
     * holds from the oldest such one, keeping the dropped column's recorded values: the history equals one clean run
     * over the corrected source with the column still there.
     */
    @Test
    void correctionBesideADroppedColumnIsReplayedAndTheColumnKeepsItsValues() {
        RawTable raw = customers(fixture);
        ModelSettings m = model(raw).build();
        applied(raw, 4, m);
        raw.update("status", "Fixed", "file_date", day(2));
        List<Essence> expected = cleanWith(4, 2, null);
        raw.dropColumn("tier");
        RecordingListener events = new RecordingListener();

        RunResult r = fixture.engine(events).run(m);

        assertThat(events.of(SnapshotEvent.UncomparableBatches.class)).singleElement().satisfies(e -> {
            assertThat(e.columns()).map(String::toLowerCase).containsExactly("tier");
            assertThat(e.batches()).isEqualTo(4);
            assertThat(e.from()).isEqualTo(day(1));
        });
        assertThat(r.replayPoint()).isEqualTo(day(1));
        assertThat(fixture.essence(TARGET)).containsExactlyInAnyOrderElementsOf(expected);
        events.clear();
        assertThat(fixture.engine(events).runWithFullCheck(m).batchesApplied()).isZero();
        assertThat(events.of(SnapshotEvent.UncomparableBatches.class)).isEmpty();
        assertThat(fixture.essence(TARGET)).containsExactlyInAnyOrderElementsOf(expected);
    }

    /**
     * The history of one clean run over files 1..days with file {@code fixedDay}'s status set to "Fixed", the column
     * {@code added} (a definition, or null) added to the raw table first, on a fresh database.
     */
    private List<Essence> cleanWith(int days, int fixedDay, String added) {
        SnapshotFixture clean = newFixture();
        RawTable raw = customers(clean);
        for (int d = 1; d <= days; d++) {
            raw.insertAll(file(d));
        }
        if (added != null) {
            raw.addColumn(added);
        }
        raw.update("status", "Fixed", "file_date", day(fixedDay));
        clean.run(model(raw).build());
        List<Essence> history = clean.essence(TARGET);
        release(clean);
        return history;
    }

    /** {@code restatements: ignore} (an append-only source): a corrected applied batch is left as it was applied. */
    @Test
    void ignoredRestatementsAreNotReplayed() {
        RawTable raw = customers(fixture);
        ModelSettings m = model(raw).restatements(Restatements.IGNORE).build();
        applied(raw, 3, m);
        List<Essence> before = fixture.essence(TARGET);
        raw.update("status", "Fixed", "file_date", day(2));
        RecordingListener events = new RecordingListener();

        RunResult r = fixture.engine(events).run(m);

        assertThat(r.batchesApplied()).isZero();
        assertThat(events.of(SnapshotEvent.BatchRestated.class)).isEmpty();
        assertThat(fixture.essence(TARGET)).containsExactlyInAnyOrderElementsOf(before);
    }

    /**
     * A ledger written before fingerprints were recorded (its table without the column, or entries without one): the
     * first run adds the column and records the fingerprints without replaying; a correction after that is found.
     */
    @Test
    void ledgerWithoutFingerprintsGetsThemWithoutAReplay() {
        RawTable raw = customers(fixture);
        ModelSettings m = build(raw, HardDeletes.IGNORE);
        applied(raw, 3, m);
        fixture.execute("ALTER TABLE " + SnapshotFixture.METADATA + ".itersnap_ledger DROP COLUMN content_hash");
        // metadata of that version had no sweep in its run log either
        fixture.execute("ALTER TABLE " + SnapshotFixture.METADATA + ".itersnap_runs DROP COLUMN checked_through");
        raw.update("status", "Fixed", "file_date", day(2)); // changed before fingerprints existed: not seen
        List<Essence> before = fixture.essence(TARGET);

        RunResult first = fixture.run(m);

        assertThat(first.batchesApplied()).isZero();
        assertThat(fixture.essence(TARGET)).containsExactlyInAnyOrderElementsOf(before);
        assertThat(((Number) fixture.query("SELECT COUNT(*) AS n FROM " + SnapshotFixture.METADATA
                + ".itersnap_ledger WHERE content_hash IS NULL").get(0).get("n")).longValue()).isZero();

        raw.update("status", "Fixed again", "file_date", day(3));
        RecordingListener events = new RecordingListener();
        RunResult second = fixture.engine(events).run(m);
        assertThat(events.of(SnapshotEvent.BatchRestated.class)).singleElement()
                .satisfies(e -> assertThat(e.sequence()).isEqualTo(day(3)));
        assertThat(second.replayPoint()).isEqualTo(day(3));
    }

    /**
     * Default settings (a lookback of one batch, a sweep of one): a correction of the newest applied batch is replayed
     * by the next run, which compares only that batch besides its sweep's share.
     */
    @Test
    void restatementOfTheNewestBatchIsReplayedByTheNextRun() {
        RawTable raw = customers(fixture);
        ModelSettings m = model(raw).build();
        applied(raw, 4, m);
        raw.deleteWhere("file_date", day(4));
        raw.insertAll(restated(4, Kind.ROWS_CORRECTED));
        RecordingListener events = new RecordingListener();

        RunResult r = fixture.engine(events).run(m);

        assertThat(events.of(SnapshotEvent.BatchRestated.class)).singleElement()
                .satisfies(e -> assertThat(e.sequence()).isEqualTo(day(4)));
        assertThat(r.replayPoint()).isEqualTo(day(4));
        assertThat(fixture.essence(TARGET)).containsExactlyInAnyOrderElementsOf(
                clean(4, 4, Kind.ROWS_CORRECTED, HardDeletes.IGNORE));
    }

    /**
     * A restatement older than the lookback is found by the sweep: each run compares {@code restatement_sweep} older
     * batches, taking up where the last one stopped, so a batch among n older ones is compared within
     * ceil(n / sweep) runs. Rows appended to the oldest batch of six, lookback 1, sweep 2: found within three runs,
     * and the history then equals one clean run over the source as it is.
     */
    @Test
    void restatementOutsideTheLookbackIsFoundByTheSweepWithinItsBound() {
        RawTable raw = customers(fixture);
        ModelSettings m = model(raw).restatementLookback(1).restatementSweep(2).build();
        applied(raw, 6, m);
        raw.deleteWhere("file_date", day(1));
        raw.insertAll(restated(1, Kind.ROWS_APPENDED));
        RecordingListener events = new RecordingListener();
        int runs = 0;
        while (events.of(SnapshotEvent.BatchRestated.class).isEmpty() && runs < 10) {
            fixture.engine(events).run(m);
            runs++;
        }

        assertThat(runs).as("runs until the sweep found the restated batch (5 older batches, 2 a run)")
                .isBetween(1, 3);
        assertThat(events.of(SnapshotEvent.BatchRestated.class)).singleElement()
                .satisfies(e -> assertThat(e.sequence()).isEqualTo(day(1)));
        assertThat(fixture.essence(TARGET)).containsExactlyInAnyOrderElementsOf(
                clean(6, 1, Kind.ROWS_APPENDED, HardDeletes.IGNORE));
    }

    /**
     * With the sweep off, a restatement older than the lookback is not seen by ordinary runs; a full check
     * ({@code IterativeSnapshot.runWithFullCheck}, the command line's {@code run --full-check}) compares every applied
     * batch, replays from the restated one and ends as one clean run.
     */
    @Test
    void restatementOutsideTheLookbackIsFoundByAFullCheck() {
        RawTable raw = customers(fixture);
        ModelSettings m = model(raw).restatementLookback(1).restatementSweep(0).build();
        applied(raw, 4, m);
        raw.deleteWhere("file_date", day(2));
        raw.insertAll(restated(2, Kind.BATCH_REPLACED));
        RecordingListener events = new RecordingListener();

        RunResult ordinary = fixture.engine(events).run(m);
        assertThat(ordinary.batchesApplied()).isZero();
        assertThat(events.of(SnapshotEvent.BatchRestated.class)).isEmpty();

        RunResult full = fixture.engine(events).runWithFullCheck(m);

        assertThat(events.of(SnapshotEvent.BatchRestated.class)).singleElement()
                .satisfies(e -> assertThat(e.sequence()).isEqualTo(day(2)));
        assertThat(full.replayPoint()).isEqualTo(day(2));
        assertThat(full.batchesApplied()).isEqualTo(3);
        assertThat(fixture.essence(TARGET)).containsExactlyInAnyOrderElementsOf(
                clean(4, 2, Kind.BATCH_REPLACED, HardDeletes.IGNORE));
        assertThat(fixture.runs(MODEL)).last().satisfies(run -> assertThat(run.operation()).isEqualTo("full_check"));
    }

    /**
     * Whatever the change, the fingerprint sees it: an applied batch restated by changing one column of one row,
     * for every column of the source in turn (the key, each tracked column, updated_at, and the sequence itself,
     * which moves the row to another batch), is found and replayed, and the history equals one clean run over the
     * source as it is.
     */
    @Test
    void aChangeToAnySingleColumnIsFound() {
        List<String> columns = List.of("id", "status", "tier", "updated_at", "file_date");
        for (int c = 0; c < columns.size(); c++) {
            SnapshotFixture f = newFixture();
            RawTable raw = customers(f);
            ModelSettings m = build(raw, HardDeletes.IGNORE);
            for (int d = 1; d <= 3; d++) {
                raw.insertAll(file(d));
                f.run(m);
            }
            List<Object[]> changed = new ArrayList<>(file(2));
            Object[] row = changed.get(0).clone();
            switch (c) {
                case 0 -> row[0] = 9;
                case 1 -> row[1] = row[1] + "!";
                case 2 -> row[2] = "Z";
                case 3 -> row[3] = ts(day(2) + " 09:30");
                default -> row[4] = day(3);
            }
            changed.set(0, row);
            raw.deleteWhere("file_date", day(2));
            raw.insertAll(changed);
            RecordingListener events = new RecordingListener();

            RunResult r = f.engine(events).run(m);

            assertThat(events.of(SnapshotEvent.BatchRestated.class)).as("a change of %s alone", columns.get(c))
                    .isNotEmpty();
            assertThat(r.replayPoint()).as("a change of %s alone", columns.get(c)).isEqualTo(day(2));
            SnapshotFixture clean = newFixture();
            RawTable cleanRaw = customers(clean);
            cleanRaw.insertAll(file(1));
            cleanRaw.insertAll(changed);
            cleanRaw.insertAll(file(3));
            clean.run(m);
            assertThat(f.essence(TARGET)).as("a change of %s alone", columns.get(c))
                    .containsExactlyInAnyOrderElementsOf(clean.essence(TARGET));
            release(clean);
            release(f);
        }
    }
}
