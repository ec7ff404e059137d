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

    // ---------------------------------------------------------------- histories edited by hand

    /** Four edits of a history by hand, each of which a run used to extend with exit 0 (issue 36). */
    enum Edit {
        /** Every version of key 1 deleted (one of them opened by the newest batch, day 3): the key looks new. */
        KEY_VERSIONS_DELETED,
        /** Key 2's current version (opened by day 1) closed: dbt_valid_to set, as a person would. */
        CURRENT_VERSION_CLOSED,
        /** Key 3's old version (closed by day 2) reopened: dbt_valid_to set back to NULL. */
        OLD_VERSION_REOPENED,
        /** Key 3's current version (opened by day 2) deleted: its predecessor stays closed by a change. */
        CURRENT_VERSION_DELETED
    }

    private void edit(Edit e) {
        String t = TARGET;
        int rows = switch (e) {
            case KEY_VERSIONS_DELETED -> fixture.execute("DELETE FROM " + t + " WHERE id = 1");
            case CURRENT_VERSION_CLOSED -> fixture.execute("UPDATE " + t + " SET dbt_valid_to = ? WHERE id = 2 AND "
                    + "dbt_valid_to IS NULL", ts("2024-01-02 12:00"));
            case OLD_VERSION_REOPENED -> fixture.execute("UPDATE " + t + " SET dbt_valid_to = NULL WHERE id = 3 AND "
                    + "status = 'Active'");
            case CURRENT_VERSION_DELETED -> fixture.execute("DELETE FROM " + t + " WHERE id = 3 AND dbt_valid_to IS "
                    + "NULL");
        };
        assertThat(rows).as("rows edited by " + e).isEqualTo(e == Edit.KEY_VERSIONS_DELETED ? 2 : 1);
    }

    /** Every row and column of the history, bookkeeping included, in a stable order. */
    private List<String> rawHistory() {
        return fixture.query("SELECT * FROM " + TARGET).stream().map(row -> {
            java.util.TreeMap<String, Object> sorted = new java.util.TreeMap<>(String.CASE_INSENSITIVE_ORDER);
            row.forEach((k, v) -> sorted.put(k, SnapshotFixture.normalize(v)));
            return sorted.toString();
        }).sorted().toList();
    }

    private static void assertEdited(Throwable e, String... mentions) {
        assertThat(e).isInstanceOfSatisfying(ItersnapException.class, ie -> {
            assertThat(ie.code()).as(ie.getMessage()).isEqualTo(ErrorCode.HISTORY_EDITED);
            assertThat(ie.getMessage()).contains("'" + MODEL + "'").contains("replay --from ")
                    .contains("full-refresh --yes");
            for (String m : mentions) {
                assertThat(ie.getMessage()).containsIgnoringCase(m);
            }
        });
    }

    /** The batch a HISTORY_EDITED message says to replay from. */
    private static String replayPointOf(Throwable e) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("replay --from (\\S+) ").matcher(e.getMessage());
        assertThat(m.find()).as(e.getMessage()).isTrue();
        return m.group(1);
    }

    /**
     * A history edited by hand and then extended by a new batch: the run stops before writing anything to the history
     * with HISTORY_EDITED, naming the key (or, for a key whose versions are all gone, the batch whose versions the
     * ledger counts more of) and the way out; the way out gives the history of one clean run.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(Edit.class)
    void anEditedHistoryIsRefusedBeforeWritingAndTheWayOutRepairsIt(Edit e) {
        ModelSettings.Builder[] m = new ModelSettings.Builder[1];
        RawTable raw = built(3, m);
        edit(e);
        List<String> edited = rawHistory();
        List<LedgerEntry> ledger = fixture.ledger(MODEL);
        List<SnapshotFixture.ErrorEntry> errors = fixture.errors(MODEL);
        file(raw, 4);

        Throwable refused = org.assertj.core.api.Assertions.catchThrowable(() -> fixture.run(m[0].build()));

        switch (e) {
            case KEY_VERSIONS_DELETED -> assertEdited(refused, "batch 2024-01-03 opened 2 by the ledger, the "
                    + "history holds 1");
            case CURRENT_VERSION_CLOSED -> assertEdited(refused, "1 key ", "id=2: a version is closed that no batch "
                    + "closed", "replay --from 2024-01-01 ");
            case OLD_VERSION_REOPENED -> assertEdited(refused, "1 key ", "id=3: a version a batch closed is open "
                    + "again", "replay --from 2024-01-01 ");
            case CURRENT_VERSION_DELETED -> assertEdited(refused, "id=3: the version a change opened is missing");
        }
        assertThat(refused.getMessage()).as("found before writing, not by the check after it")
                .contains("A run would extend them wrongly: nothing was written.").doesNotContain("timeline check");
        assertThat(rawHistory()).as("nothing written to the history").isEqualTo(edited);
        assertThat(fixture.ledger(MODEL)).isEqualTo(ledger);
        assertThat(fixture.errors(MODEL)).isEqualTo(errors);
        assertThatThrownBy(() -> fixture.run(m[0].build())).as("refused again, not repaired by itself")
                .satisfies(again -> assertEdited(again));

        if (e == Edit.KEY_VERSIONS_DELETED) {
            fixture.engine(null).fullRefresh(m[0].build()); // the key's first version may be older than the batch named
        } else {
            fixture.engine(null).replayFrom(m[0].build(), replayPointOf(refused));
        }

        assertThat(fixture.essence(TARGET)).isEqualTo(inOrder(4));
        assertThat(fixture.run(m[0].build()).batchesApplied()).isZero();
        assertThat(fixture.engine(null).audit(m[0].build()).clean()).isTrue();
    }

    /**
     * A replay checks the versions it builds on, after its own roll back: one from after the edit (key 2's current
     * version, opened by day 1, closed by hand; replayed from day 2) is refused, naming day 1; one from the batch
     * named rolls the edited version back with the rest and ends in one clean run (repaired, not refused).
     */
    @Test
    void aReplayFromAfterTheEditIsRefusedAndOneFromBeforeItRepairs() {
        ModelSettings.Builder[] m = new ModelSettings.Builder[1];
        built(3, m);
        edit(Edit.CURRENT_VERSION_CLOSED);
        List<String> edited = rawHistory();
        IterativeSnapshot snap = fixture.engine(null);

        Throwable refused = org.assertj.core.api.Assertions.catchThrowable(() -> snap.replayFrom(m[0].build(),
                day(2).toString()));

        assertEdited(refused, "id=2: a version is closed that no batch closed", "replay --from 2024-01-01 ");
        if (snap.dialect().capabilities().transactionalDml()) {
            assertThat(refused.getMessage()).contains("nothing was written.");
            assertThat(rawHistory()).as("the replay's roll back undone").isEqualTo(edited);
        } else {
            assertThat(refused.getMessage()).contains("nothing was written over them (this database has no "
                    + "transactions: the run's roll back from 2024-01-02 stays, and the next run applies those "
                    + "batches again)");
            assertThatThrownBy(() -> fixture.run(m[0].build())).as("the next run applies them, refused the same way")
                    .satisfies(e -> assertEdited(e, "id=2"));
        }

        snap.replayFrom(m[0].build(), day(1).toString());
        assertThat(fixture.essence(TARGET)).isEqualTo(inOrder(3));
        assertThat(snap.audit(m[0].build()).clean()).isTrue();
    }

    /** Each edit, not followed by a run, is found by the model's audit and by doctor. */
    @ParameterizedTest(name = "{0}")
    @EnumSource(Edit.class)
    void anEditedHistoryIsFoundByTheAuditAndByDoctor(Edit e) {
        ModelSettings.Builder[] m = new ModelSettings.Builder[1];
        built(3, m);
        IterativeSnapshot snap = fixture.engine(null);
        assertThat(snap.audit(m[0].build()).clean()).as("before the edit").isTrue();
        assertThat(snap.check(m[0].build()).checks()).as("doctor before the edit").allMatch(c -> c.passed())
                .anyMatch(c -> c.name().equals("history"));
        edit(e);

        dev.itersnap.core.AuditReport report = snap.audit(m[0].build());

        assertThat(report.clean()).as(e + ": %s", report.problems()).isFalse();
        assertThat(report.problems()).extracting(f -> f.check()).contains(switch (e) {
            case KEY_VERSIONS_DELETED -> dev.itersnap.core.AuditReport.Check.LEDGER_COUNTS;
            case CURRENT_VERSION_CLOSED, OLD_VERSION_REOPENED -> dev.itersnap.core.AuditReport.Check.BOOKKEEPING;
            case CURRENT_VERSION_DELETED -> dev.itersnap.core.AuditReport.Check.CLOSED_WITHOUT_SUCCESSOR;
        });
        assertThat(snap.check(m[0].build()).failures()).as("doctor").singleElement().satisfies(c -> {
            assertThat(c.name()).isEqualTo("history");
            assertThat(c.detail()).contains(e == Edit.KEY_VERSIONS_DELETED ? "2024-01-03" : "replay --from");
        });
    }

    /**
     * Every version of a key deleted where none of them was opened by a batch an ordinary run compares (key 2, opened
     * by day 1 only): a full check counts every batch's versions and refuses before writing; a full refresh repairs.
     */
    @Test
    void aKeyWhoseOldVersionsWereAllDeletedIsFoundByAFullCheck() {
        ModelSettings.Builder[] m = new ModelSettings.Builder[1];
        RawTable raw = built(3, m);
        assertThat(fixture.execute("DELETE FROM " + TARGET + " WHERE id = 2")).isEqualTo(1);
        List<String> edited = rawHistory();
        file(raw, 4);

        assertThatThrownBy(() -> fixture.engine(null).runWithFullCheck(m[0].build()))
                .satisfies(e -> assertEdited(e, "batch 2024-01-01 opened 5 by the ledger, the history holds 4"));
        assertThat(rawHistory()).isEqualTo(edited);
        fixture.engine(null).fullRefresh(m[0].build());
        assertThat(fixture.essence(TARGET)).isEqualTo(inOrder(4));
    }

    /**
     * The timeline check after the write fails the run: a late batch replays only the keys it changes (key-scoped), so
     * the check before writing reads only theirs; key 1, whose versions the replay does not rewrite but which has one
     * opened after the replay point, was edited to overlap. The run fails naming key 1, its writes rolled back where
     * the database has transactions.
     */
    @Test
    void aViolationFoundAfterTheWriteFailsTheRun() {
        RawTable raw = customers(fixture);
        ModelSettings model = fullBatches(raw).build();
        file(raw, 1);
        fixture.run(model);
        file(raw, 3);
        fixture.run(model);
        // key 1's first version now ends a day after its successor (opened by day 3) starts
        assertThat(fixture.execute("UPDATE " + TARGET + " SET dbt_valid_to = ? WHERE id = 1 AND status = 'Active'",
                ts("2024-01-04 09:00"))).isEqualTo(1);
        List<String> edited = rawHistory();
        file(raw, 2); // late
        RecordingListener events = new RecordingListener();

        assertThatThrownBy(() -> fixture.engine(events).run(model)).satisfies(e -> {
            assertEdited(e, "timeline check after", "id=1: versions overlap", "1 key ");
            assertThat(e.getMessage()).doesNotContainIgnoringCase("id=3");
        });

        assertThat(events.of(SnapshotEvent.TimelineViolation.class)).singleElement()
                .satisfies(v -> assertThat(v.keys()).isEqualTo(1));
        if (fixture.engine(null).dialect().capabilities().transactionalDml()) {
            assertThat(rawHistory()).as("rolled back").isEqualTo(edited);
        }
        fixture.engine(null).replayFrom(model, "2024-01-01");
        assertThat(fixture.essence(TARGET)).isEqualTo(inOrder(3));
    }
}
