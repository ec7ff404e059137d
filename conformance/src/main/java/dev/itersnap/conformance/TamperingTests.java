package dev.itersnap.conformance;

import dev.itersnap.IterativeSnapshot;
import dev.itersnap.conformance.SnapshotFixture.Essence;
import dev.itersnap.conformance.SnapshotFixture.LedgerEntry;
import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.HardDeletes;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.core.LogicChange;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.Restatements;
import dev.itersnap.core.RunResult;
import dev.itersnap.core.SnapshotEvent;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static dev.itersnap.conformance.SnapshotFixture.date;
import static dev.itersnap.conformance.SnapshotFixture.ts;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Tampering with the metadata and the target between runs (docs/semantics.md, "Ownership"): the metadata schema
 * dropped or changed, a second model on the same target, ledger rows deleted, the target renamed or dropped. Every
 * case ends in a clear error that wrote nothing ({@code TARGET_NOT_OWNED}, {@code LOGIC_CHANGE}) or in the history of
 * one clean in-order run; never in a run that succeeds over a corrupted history.
 */
public abstract class TamperingTests extends ConformanceTestBase {
    /** A metadata schema the suite's databases know (Spark renames it per scenario). */
    protected static final String OTHER_METADATA = "etl_meta";
    private static final LocalDate D1 = date("2024-01-01");

    private static LocalDate day(int d) {
        return D1.plusDays(d - 1);
    }

    /**
     * A full daily file: keys 1..3, key {@code d % 3 + 1} changes on day d, key 4 present on odd days only (absent:
     * deleted; back: a new version), key 5 only on day 1.
     */
    private static void file(RawTable raw, int d) {
        for (int id = 1; id <= 5; id++) {
            if (id == 4 && d % 2 == 0 || id == 5 && d > 1) {
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

    private static ModelSettings.Builder fullBatches(RawTable raw) {
        return model(raw).hardDeletes(HardDeletes.NEW_RECORD);
    }

    /** The history of files 1..days applied in one clean run on a fresh database. */
    private List<Essence> inOrder(int days) {
        SnapshotFixture clean = newFixture();
        RawTable raw = customers(clean);
        for (int d = 1; d <= days; d++) {
            file(raw, d);
        }
        clean.run(fullBatches(raw).build());
        List<Essence> history = clean.essence(TARGET);
        release(clean);
        return history;
    }

    /** Files 1..days, one run each. */
    private RawTable built(int days, ModelSettings.Builder[] model) {
        RawTable raw = customers(fixture);
        model[0] = fullBatches(raw);
        for (int d = 1; d <= days; d++) {
            file(raw, d);
            fixture.run(model[0].build());
        }
        return raw;
    }

    private static void assertNotOwned(Throwable e, String... mentions) {
        assertThat(e).isInstanceOfSatisfying(ItersnapException.class, ie -> {
            assertThat(ie.code()).as(ie.getMessage()).isEqualTo(ErrorCode.TARGET_NOT_OWNED);
            assertThat(ie.getMessage()).contains("'" + MODEL + "'").containsIgnoringCase("full-refresh --yes");
            for (String m : mentions) {
                assertThat(ie.getMessage()).containsIgnoringCase(m);
            }
        });
    }

    /** The metadata schema dropped (and recreated by the next run): the history is owned by no ledger any more. */
    @Test
    void droppedMetadataSchemaStopsTheRunBeforeWriting() {
        ModelSettings.Builder[] m = new ModelSettings.Builder[1];
        RawTable raw = built(2, m);
        List<Essence> before = fixture.essence(TARGET);
        fixture.execute("DROP SCHEMA " + SnapshotFixture.METADATA + " CASCADE");
        file(raw, 3);

        assertThatThrownBy(() -> fixture.run(m[0].build())).satisfies(e -> assertNotOwned(e, "ledger", TARGET));
        assertThat(fixture.essence(TARGET)).as("nothing applied over the history").isEqualTo(before);
        assertThat(fixture.ledger(MODEL)).isEmpty();
    }

    /** metadata_schema changed in the model: the history belongs to the model under the old schema. */
    @Test
    void changedMetadataSchemaStopsTheRunBeforeWriting() {
        ModelSettings.Builder[] m = new ModelSettings.Builder[1];
        RawTable raw = built(1, m);
        List<Essence> before = fixture.essence(TARGET);
        file(raw, 2);

        assertThatThrownBy(() -> fixture.run(m[0].metadataSchema(OTHER_METADATA).build()))
                .satisfies(e -> assertNotOwned(e, SnapshotFixture.METADATA, "metadata_schema"));
        assertThat(fixture.essence(TARGET)).isEqualTo(before);
        assertThat(fixture.ledger(MODEL, OTHER_METADATA)).isEmpty();
        fixture.run(m[0].metadataSchema(SnapshotFixture.METADATA).build());
        assertThat(fixture.essence(TARGET)).as("back under its own schema it carries on").isEqualTo(inOrder(2));
    }

    /** A second model (another name) on the same target in the same metadata schema: the owners table refuses it. */
    @Test
    void secondModelOnTheSameTargetIsRefused() {
        secondModelIsRefused(SnapshotFixture.METADATA);
    }

    /** A second model on the same target under another metadata schema: the table's comment names its owner. */
    @Test
    void secondModelUnderAnotherMetadataSchemaIsRefused() {
        secondModelIsRefused(OTHER_METADATA);
    }

    private void secondModelIsRefused(String schema) {
        RawTable raw = customers(fixture);
        file(raw, 1);
        fixture.run(fullBatches(raw).build());
        List<Essence> before = fixture.essence(TARGET);
        file(raw, 2);
        ModelSettings other = ModelSettings.builder("orders").target(TARGET).source(raw.selectAll())
                .uniqueKey("id").updatedAt("updated_at").sequenceBy("file_date").metadataSchema(schema).build();
        assertThatThrownBy(() -> fixture.run(other)).isInstanceOfSatisfying(ItersnapException.class, e -> {
            assertThat(e.code()).as(e.getMessage()).isEqualTo(ErrorCode.TARGET_NOT_OWNED);
            assertThat(e.getMessage()).contains("'orders'").contains("belongs to model '" + MODEL + "'");
        });
        assertThat(fixture.essence(TARGET)).isEqualTo(before);
        assertThat(fixture.ledger("orders", schema)).isEmpty();
    }

    /**
     * The newest ledger row deleted: the batch is not applied over itself (which left keys with two current deletion
     * records) but replayed; the history is that of one clean run and the ledger whole again.
     */
    @Test
    void deletedNewestLedgerRowIsRepairedByReplay() {
        ModelSettings.Builder[] m = new ModelSettings.Builder[1];
        built(3, m);

        runAfterDeletingTheLedgerRowOf(3, m[0]);

        assertThat(fixture.essence(TARGET)).isEqualTo(inOrder(3));
        assertThat(fixture.timelineProblems(TARGET, "id")).isEmpty();
        assertThat(fixture.ledger(MODEL)).extracting(LedgerEntry::sequence)
                .containsExactlyInAnyOrder(day(1).toString(), day(2).toString(), day(3).toString());
    }

    /** Deletes day {@code d}'s ledger row and runs: the run reports the repair and applies that one batch again. */
    private void runAfterDeletingTheLedgerRowOf(int d, ModelSettings.Builder model) {
        fixture.execute("DELETE FROM " + SnapshotFixture.METADATA + ".itersnap_ledger WHERE model = ? AND "
                + "sequence_value = ?", MODEL, day(d).toString());
        RecordingListener events = new RecordingListener();
        RunResult r = fixture.engine(events).run(model.build());
        assertThat(events.of(SnapshotEvent.LedgerRepaired.class)).singleElement()
                .satisfies(e -> assertThat(e.sequences()).containsExactly(day(d)));
        assertThat(r.batchesApplied()).isEqualTo(1);
    }

    /**
     * The ledger row of a batch that opened and closed no version (its keys unchanged, one row set aside) deleted by
     * hand: the history does not show the batch, the error log does. The next run applies it again without logging
     * its set-aside row twice, and reports the repair.
     */
    @Test
    void deletedLedgerRowOfABatchThatOnlySetARowAsideIsNotLoggedTwice() {
        ModelSettings.Builder[] m = new ModelSettings.Builder[1];
        RawTable raw = built(2, m);
        for (java.util.Map<String, Object> row : fixture.query("SELECT id, status, tier, updated_at FROM "
                + raw.name() + " WHERE file_date = ?", day(2))) {
            raw.insert(row.get("id"), row.get("status"), row.get("tier"), row.get("updated_at"), day(3));
        }
        raw.insert(null, "Ghost", "A", ts(day(3) + " 09:00"), day(3)); // no key: set aside
        fixture.run(m[0].build());
        List<SnapshotFixture.ErrorEntry> logged = fixture.errors(MODEL);
        assertThat(logged).extracting(SnapshotFixture.ErrorEntry::sequence).containsExactly(day(3).toString());
        List<Essence> before = fixture.essence(TARGET);

        runAfterDeletingTheLedgerRowOf(3, m[0]);

        assertThat(fixture.errors(MODEL)).extracting(SnapshotFixture.ErrorEntry::sequence,
                SnapshotFixture.ErrorEntry::reason, SnapshotFixture.ErrorEntry::record).containsExactlyElementsOf(
                logged.stream().map(e -> org.assertj.core.groups.Tuple.tuple(e.sequence(), e.reason(), e.record()))
                        .toList());
        assertThat(fixture.essence(TARGET)).isEqualTo(before);
        assertThat(fixture.ledgerEntry(MODEL, day(3).toString()).rejected()).isEqualTo(1);
    }

    /**
     * Ledger rows deleted at random (seeded), some of them of batches that aged out of the source. An ordinary run
     * finds the lost entries of batches the source still holds (they look new: the history is probed for them) and
     * replays from the first; lost entries of aged-out batches below every replay are found by the first run whose
     * replay reaches them, or by a full check, which compares every sequence of the history with the ledger. Either
     * way the history is never applied over and ends as one clean run.
     */
    @Test
    void ledgerRowsDeletedAtRandomAreRepairedByReplay() {
        long seed = Long.getLong("itersnap.seed", System.nanoTime());
        Random random = new Random(seed);
        ModelSettings.Builder[] m = new ModelSettings.Builder[1];
        RawTable raw = built(5, m);
        raw.deleteWhere("file_date", day(1));
        raw.deleteWhere("file_date", day(2)); // retention: days 1 and 2 only in the history now
        List<String> deleted = new ArrayList<>();
        for (int d = 1; d <= 5; d++) {
            if (random.nextBoolean()) {
                deleted.add(day(d).toString());
            }
        }
        if (deleted.isEmpty()) {
            deleted.add(day(1 + random.nextInt(5)).toString());
        }
        for (String s : deleted) {
            fixture.execute("DELETE FROM " + SnapshotFixture.METADATA + ".itersnap_ledger WHERE model = ? AND "
                    + "sequence_value = ?", MODEL, s);
        }
        List<Essence> expected = inOrder(5);

        fixture.run(m[0].build());

        assertThat(fixture.essence(TARGET)).as("seed %d, deleted %s", seed, deleted).isEqualTo(expected);
        assertThat(fixture.ledger(MODEL)).as("seed %d: the lost entries of batches the source holds", seed)
                .hasSizeGreaterThanOrEqualTo(5 - (int) deleted.stream().filter(s -> s.compareTo(day(3).toString()) < 0)
                        .count());

        fixture.engine(null).runWithFullCheck(m[0].build());

        assertThat(fixture.essence(TARGET)).as("seed %d, deleted %s", seed, deleted).isEqualTo(expected);
        assertThat(fixture.ledger(MODEL)).as("seed %d", seed).hasSize(5);
        assertThat(fixture.timelineProblems(TARGET, "id")).isEmpty();
    }

    /**
     * target changed in the model: a logic change naming the target (the new table is not started with half the
     * batches); accepting it does not help, a full refresh builds the new table and leaves the old one alone.
     */
    @Test
    void changedTargetIsALogicChangeAndAFullRefreshBuildsTheNewTable() {
        ModelSettings.Builder[] m = new ModelSettings.Builder[1];
        built(2, m);
        List<Essence> old = fixture.essence(TARGET);
        ModelSettings moved = m[0].target(TARGET + "_v2").build();
        IterativeSnapshot snap = fixture.engine(null);

        assertThatThrownBy(() -> snap.run(moved)).isInstanceOfSatisfying(ItersnapException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.LOGIC_CHANGE);
            assertThat(e.getMessage()).contains("target was '" + TARGET + "'").contains("full-refresh --yes");
        });
        assertThatThrownBy(() -> snap.run(moved, LogicChange.ACCEPT)).satisfies(e -> assertNotOwned(e));
        assertThat(fixture.tableExists(TARGET + "_v2")).isFalse();

        snap.fullRefresh(moved);
        assertThat(fixture.essence(TARGET + "_v2")).isEqualTo(old);
        assertThat(fixture.essence(TARGET)).as("the old table is left as it was").isEqualTo(old);
        assertThat(snap.run(moved).batchesApplied()).isZero();
        assertThatThrownBy(() -> snap.run(m[0].target(TARGET).build(), LogicChange.ACCEPT))
                .as("the model now owns the new table only").satisfies(e -> assertNotOwned(e));
    }

    /** The history table dropped while the ledger records batches: refused; a full refresh rebuilds it. */
    @Test
    void droppedHistoryIsRefusedAndAFullRefreshRebuildsIt() {
        ModelSettings.Builder[] m = new ModelSettings.Builder[1];
        built(2, m);
        fixture.execute("DROP TABLE " + TARGET);

        assertThatThrownBy(() -> fixture.run(m[0].build())).satisfies(e -> assertNotOwned(e, "missing"));
        assertThat(fixture.tableExists(TARGET)).isFalse();
        fixture.engine(null).fullRefresh(m[0].build());
        assertThat(fixture.essence(TARGET)).isEqualTo(inOrder(2));
    }

    /** An empty history whose ledger inserted nothing (every row set aside) is consistent: no false alarm. */
    @Test
    void historyEmptyBecauseEveryRowWasSetAsideIsNotTampering() {
        RawTable raw = customers(fixture);
        ModelSettings m = model(raw).build();
        raw.insert(1, "Active", "A", ts("2024-01-01 09:00"), date("2024-01-01"));
        raw.insert(1, "Gold", "A", ts("2024-01-01 09:00"), date("2024-01-01"));
        fixture.run(m);
        assertThat(fixture.history(TARGET)).isEmpty();
        raw.insert(2, "Active", "A", ts("2024-01-02 09:00"), date("2024-01-02"));

        assertThat(fixture.run(m).batchesApplied()).isEqualTo(1);
        assertThat(fixture.history(TARGET)).hasSize(1);
    }

    /**
     * Rows added to a batch after it was applied (a late file committed in two parts with a run in between) are never
     * dropped silently: with {@code restatements: detect} (the default) the batch is restated, and the next run
     * replays from it, reporting the ledger's count and the source's.
     */
    @Test
    void rowsAddedToAnAppliedBatchAreReplayedAsARestatement() {
        RawTable raw = customers(fixture);
        ModelSettings m = model(raw).build();
        for (int id = 1; id <= 6; id++) {
            if (id == 4) {
                fixture.run(m); // the first part of the file is applied
            }
            raw.insert(id, "Active", "A", ts("2024-01-01 09:00"), date("2024-01-01"));
        }
        RecordingListener events = new RecordingListener();

        RunResult r = fixture.engine(events).run(m);

        assertThat(r.batchesApplied()).isEqualTo(1);
        assertThat(r.replayPoint()).isEqualTo(date("2024-01-01"));
        assertThat(events.of(SnapshotEvent.BatchRestated.class)).singleElement().satisfies(e -> {
            assertThat(e.sequence()).isEqualTo(date("2024-01-01"));
            assertThat(e.newRows()).isEqualTo(6);
            assertThat(e.oldRows()).isEqualTo(3);
        });
        assertThat(events.of(SnapshotEvent.RowsAddedToAppliedBatch.class)).isEmpty();
        assertThat(fixture.history(TARGET)).hasSize(6);
        events.clear();
        assertThat(fixture.engine(events).run(m).batchesApplied()).isZero();
        assertThat(events.of(SnapshotEvent.BatchRestated.class)).isEmpty();
    }

    /**
     * With {@code restatements: ignore} (a source declared append-only) rows added to an applied batch are not
     * applied by later runs, but not dropped silently either: the next run reports them with the ledger's count, and
     * a replay from the batch applies them.
     */
    @Test
    void withRestatementsIgnoredRowsAddedToAnAppliedBatchAreReportedAndAReplayAppliesThem() {
        RawTable raw = customers(fixture);
        ModelSettings m = model(raw).restatements(Restatements.IGNORE).build();
        for (int id = 1; id <= 6; id++) {
            if (id == 4) {
                fixture.run(m); // the first part of the file is applied
            }
            raw.insert(id, "Active", "A", ts("2024-01-01 09:00"), date("2024-01-01"));
        }
        RecordingListener events = new RecordingListener();

        RunResult r = fixture.engine(events).run(m);

        assertThat(r.batchesApplied()).isZero();
        assertThat(events.of(SnapshotEvent.RowsAddedToAppliedBatch.class)).singleElement().satisfies(e -> {
            assertThat(e.sequence()).isEqualTo(date("2024-01-01"));
            assertThat(e.sourceRows()).isEqualTo(6);
            assertThat(e.appliedRows()).isEqualTo(3);
        });
        fixture.engine(null).replayFrom(m, "2024-01-01");
        assertThat(fixture.history(TARGET)).hasSize(6);
        events.clear();
        fixture.engine(events).run(m);
        assertThat(events.of(SnapshotEvent.RowsAddedToAppliedBatch.class)).isEmpty();
    }

    /**
     * Rows added to an applied batch that a late batch then replays are applied by that replay, for every key: the
     * late batch changes one key only, but the replayed batch gained rows of two others since it was applied, so the
     * run replays every key rather than only the one the late batch changes (which would drop the added rows). So
     * with {@code restatements: ignore} too: the replayed batch's row count differs from the ledger's.
     */
    @ParameterizedTest(name = "restatements {0}")
    @EnumSource(Restatements.class)
    void rowsAddedToABatchThatALateBatchReplaysAreApplied(Restatements restatements) {
        RawTable raw = customers(fixture);
        ModelSettings m = model(raw).restatements(restatements).build();
        for (int id = 1; id <= 3; id++) {
            raw.insert(id, "Active", "A", ts("2024-01-01 09:00"), date("2024-01-01"));
        }
        fixture.run(m);
        raw.insert(1, "Gold", "A", ts("2024-01-03 09:00"), date("2024-01-03"));
        fixture.run(m);
        raw.insert(4, "Active", "A", ts("2024-01-03 09:00"), date("2024-01-03")); // the file's second part
        raw.insert(5, "Active", "A", ts("2024-01-03 09:00"), date("2024-01-03"));
        raw.insert(1, "Premium", "A", ts("2024-01-02 09:00"), date("2024-01-02")); // late

        RunResult r = fixture.run(m);

        assertThat(r.lateBatchFound()).isTrue();
        assertThat(fixture.versions(TARGET, "id", 1)).extracting(v -> v.get("status"))
                .containsExactly("Active", "Premium", "Gold");
        for (int id = 4; id <= 5; id++) {
            assertThat(fixture.versions(TARGET, "id", id)).as("key %d, added to 2024-01-03 after it was applied", id)
                    .singleElement().satisfies(v -> assertThat(v.validFrom()).isEqualTo(ts("2024-01-03 09:00")));
        }
        assertThat(fixture.ledger(MODEL)).filteredOn(e -> e.sequence().equals("2024-01-03"))
                .singleElement().satisfies(e -> assertThat(e.sourceRows()).isEqualTo(3));
    }
}
