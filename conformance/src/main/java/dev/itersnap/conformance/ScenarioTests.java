package dev.itersnap.conformance;

import dev.itersnap.conformance.SnapshotFixture.Counts;
import dev.itersnap.conformance.SnapshotFixture.ErrorEntry;
import dev.itersnap.conformance.SnapshotFixture.Version;
import dev.itersnap.core.BatchResult;
import dev.itersnap.core.HardDeletes;
import dev.itersnap.IterativeSnapshot;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.RunResult;
import dev.itersnap.core.SnapshotEvent;
import dev.itersnap.core.Strategy;
import dev.itersnap.core.UntrackedColumns;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

import java.math.BigDecimal;
import java.time.LocalDateTime;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static dev.itersnap.conformance.SnapshotFixture.date;
import static dev.itersnap.conformance.SnapshotFixture.ts;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

/**
 * Scenarios for the rules of applying one batch (docs/semantics.md "Applying a batch"): new, changed and
 * unchanged keys under both strategies, sequence types and their order, composite keys, the three hard-delete modes,
 * explicit deletes, and every reason a row is set aside. Each test states the user-visible behaviour it protects.
 */
public abstract class ScenarioTests extends ConformanceTestBase {

    // ================================================================== the Alice story

    /**
     * Alice is Active on Monday, Premium on Tuesday, Gold on Wednesday; Tuesday's file arrives after Wednesday's.
     * The history must read Active -> Premium -> Gold with Gold current, as if the files had arrived in order.
     */
    @ParameterizedTest(name = "strategy {0}")
    @EnumSource(Strategy.class)
    void aliceStoryTuesdayArrivingAfterWednesdayIsReplayedInBusinessOrder(Strategy strategy) {
        RawTable raw = customers(fixture);
        ModelSettings m = model(raw).strategy(strategy).build();
        RecordingListener events = new RecordingListener();
        IterativeSnapshot snap = fixture.engine(events);

        raw.insert(1, "Active", "A", ts("2024-01-01 09:00"), date("2024-01-01"));
        raw.insert(2, "Active", "A", ts("2024-01-01 09:00"), date("2024-01-01"));
        RunResult monday = snap.run(m);
        raw.insert(1, "Gold", "B", ts("2024-01-03 09:00"), date("2024-01-03"));
        raw.insert(2, "Active", "A", ts("2024-01-01 09:00"), date("2024-01-03"));
        RunResult wednesday = snap.run(m);
        raw.insert(1, "Premium", "B", ts("2024-01-02 09:00"), date("2024-01-02"));
        raw.insert(2, "Active", "A", ts("2024-01-01 09:00"), date("2024-01-02"));
        RunResult late = snap.run(m);

        assertThat(monday.lateBatchFound()).isFalse();
        assertThat(wednesday.lateBatchFound()).isFalse();
        assertThat(late.lateBatchFound()).isTrue();
        assertThat(late.replayPoint()).isEqualTo(date("2024-01-02"));
        assertThat(late.batches()).extracting(BatchResult::sequence)
                .containsExactly(date("2024-01-02"), date("2024-01-03"));

        List<Version> alice = fixture.versions(TARGET, "id", 1);
        assertThat(alice).extracting(v -> v.get("status"), v -> v.get("tier"), Version::validFrom, Version::validTo,
                Version::changeType, Version::changed).containsExactly(
                tuple("Active", "A", ts("2024-01-01 09:00"), ts("2024-01-02 09:00"), "update", "[\"status\",\"tier\"]"),
                tuple("Premium", "B", ts("2024-01-02 09:00"), ts("2024-01-03 09:00"), "update", "[\"status\"]"),
                tuple("Gold", "B", ts("2024-01-03 09:00"), null, "insert", null));
        assertThat(alice).extracting(Version::updatedAt).containsExactly(ts("2024-01-01 09:00"),
                ts("2024-01-02 09:00"), ts("2024-01-03 09:00"));
        assertThat(alice).extracting(Version::scdId).doesNotContainNull().doesNotHaveDuplicates();
        List<Version> bob = fixture.versions(TARGET, "id", 2);
        assertThat(bob).extracting(v -> v.get("status"), Version::validTo, Version::changeType)
                .containsExactly(tuple("Active", null, "insert"));

        List<SnapshotEvent.OutOfOrder> ooo = events.of(SnapshotEvent.OutOfOrder.class);
        assertThat(ooo).hasSize(1);
        assertThat(ooo.get(0).incoming()).containsExactly(date("2024-01-02"));
        assertThat(ooo.get(0).greatestApplied()).isEqualTo(date("2024-01-03"));
        assertThat(ooo.get(0).replayPoint()).isEqualTo(date("2024-01-02"));
        assertThat(ooo.get(0).runId()).isEqualTo(late.runId());

        assertThat(fixture.ledgerCounts(MODEL)).containsExactly(
                new Counts("2024-01-01", 2, 2, 0, 0, 0, false),
                new Counts("2024-01-02", 2, 1, 1, 0, 0, false),
                new Counts("2024-01-03", 2, 1, 1, 0, 0, false));

        SnapshotFixture inOrder = newFixture();
        RawTable clean = customers(inOrder);
        clean.insert(1, "Active", "A", ts("2024-01-01 09:00"), date("2024-01-01"));
        clean.insert(2, "Active", "A", ts("2024-01-01 09:00"), date("2024-01-01"));
        clean.insert(1, "Premium", "B", ts("2024-01-02 09:00"), date("2024-01-02"));
        clean.insert(2, "Active", "A", ts("2024-01-01 09:00"), date("2024-01-02"));
        clean.insert(1, "Gold", "B", ts("2024-01-03 09:00"), date("2024-01-03"));
        clean.insert(2, "Active", "A", ts("2024-01-01 09:00"), date("2024-01-03"));
        inOrder.run(m);
        assertThat(fixture.essence(TARGET)).isEqualTo(inOrder.essence(TARGET));
        assertThat(fixture.timelineProblems(TARGET, "id")).isEmpty();
    }

    // ================================================================== sequences

    /**
     * The 9-before-10 trap: integer batch ids are compared as numbers. Batch 10 after batch 2 is not late (as text,
     * "10" < "2"); batch 9 after batch 10 is late (as text, "9" > "10").
     */
    @Test
    void integerSequencesOrderNumericallyAcrossRuns() {
        RawTable raw = fixture.rawTable("raw_customers", "id INT", "status VARCHAR(20)", "updated_at TIMESTAMP",
                "batch_id INT");
        ModelSettings m = model(raw, "batch_id").build();
        IterativeSnapshot snap = fixture.engine(null);

        raw.insert(1, "Active", ts("2024-01-02 09:00"), 2);
        snap.run(m);
        raw.insert(1, "Gold", ts("2024-01-10 09:00"), 10);
        RunResult ten = snap.run(m);
        raw.insert(1, "Premium", ts("2024-01-09 09:00"), 9);
        RunResult nine = snap.run(m);

        assertThat(ten.lateBatchFound()).as("10 after 2 is in order").isFalse();
        assertThat(nine.lateBatchFound()).as("9 after 10 is late").isTrue();
        assertThat(nine.replayPoint()).isEqualTo(9L);
        assertThat(nine.batches()).extracting(BatchResult::sequence).containsExactly(9L, 10L);
        assertThat(fixture.versions(TARGET, "id", 1)).extracting(v -> v.get("status"), Version::validTo)
                .containsExactly(tuple("Active", ts("2024-01-09 09:00")), tuple("Premium", ts("2024-01-10 09:00")),
                        tuple("Gold", null));
        assertThat(fixture.ledgerCounts(MODEL)).extracting(Counts::sequence).containsExactlyInAnyOrder("2", "9", "10");
        assertThat(fixture.errors(MODEL)).isEmpty();
    }

    /** Batches 9 and 10 arriving together are applied 9 first: Gold (batch 10) ends current, nothing rejected. */
    @Test
    void integerSequencesOrderNumericallyWithinOneRun() {
        RawTable raw = fixture.rawTable("raw_customers", "id INT", "status VARCHAR(20)", "updated_at TIMESTAMP",
                "batch_id INT");
        ModelSettings m = model(raw, "batch_id").build();
        raw.insert(1, "Premium", ts("2024-01-09 09:00"), 9);
        raw.insert(1, "Gold", ts("2024-01-10 09:00"), 10);
        RunResult r = fixture.run(m);

        assertThat(r.batches()).extracting(BatchResult::sequence).containsExactly(9L, 10L);
        assertThat(fixture.versions(TARGET, "id", 1)).extracting(v -> v.get("status"), Version::validTo)
                .containsExactly(tuple("Premium", ts("2024-01-10 09:00")), tuple("Gold", null));
        assertThat(fixture.errors(MODEL)).isEmpty();
    }

    static Stream<Arguments> stringSequencePairs() {
        return Stream.of(
                Arguments.of("9", "10", "digits compare as text: \"10\" < \"9\""),
                Arguments.of("a", "B", "binary order: \"B\" (U+0042) < \"a\" (U+0061), whatever the collation"));
    }

    /**
     * String sequences compare as strings, by code point (semantics: "Strings compare by Unicode code point
     * (binary), whatever the database's collation, so that the database and the engine agree on order"). The batch
     * delivered second is lower as a string, so it is late and is applied first.
     */
    @ParameterizedTest(name = "{2}")
    @MethodSource("stringSequencePairs")
    void stringSequencesCompareAsStringsByCodePoint(String appliedFirst, String lowerArrivingLater, String why) {
        lowerStringSequenceArrivingLaterIsReplayedFirst(appliedFirst, lowerArrivingLater, why);
    }

    /**
     * Code point order beyond the Basic Multilingual Plane: U+FF21 sorts before U+1D400, although UTF-16 (Java's
     * String.compareTo, H2's default collation) puts the surrogate pair of U+1D400 first. The database's filters must
     * agree with the engine's order, or the replayed batch U+1D400 is left out of the stage and the rollback.
     */
    @Test
    void stringSequencesCompareByCodePointBeyondTheBasicPlane() {
        lowerStringSequenceArrivingLaterIsReplayedFirst("\uD835\uDC00", "\uFF21",
                "code point order: U+FF21 < U+1D400 although UTF-16 orders the surrogate pair first");
    }

    private void lowerStringSequenceArrivingLaterIsReplayedFirst(String appliedFirst, String lowerArrivingLater,
                                                                 String why) {
        RawTable raw = fixture.rawTable("raw_customers", "id INT", "status VARCHAR(20)", "updated_at TIMESTAMP",
                "batch_code VARCHAR(20)");
        ModelSettings m = model(raw, "batch_code").build();
        IterativeSnapshot snap = fixture.engine(null);
        raw.insert(1, "Gold", ts("2024-01-05 09:00"), appliedFirst);
        raw.insert(2, "Gold", ts("2024-01-05 09:00"), appliedFirst);
        snap.run(m);
        raw.insert(1, "Active", ts("2024-01-01 09:00"), lowerArrivingLater);
        RunResult r = snap.run(m);

        assertThat(r.lateBatchFound()).as(why).isTrue();
        assertThat(r.replayPoint()).isEqualTo(lowerArrivingLater);
        assertThat(r.batches()).extracting(BatchResult::sequence).containsExactly(lowerArrivingLater, appliedFirst);
        assertThat(fixture.versions(TARGET, "id", 1)).extracting(v -> v.get("status"), Version::validTo,
                Version::changeType).containsExactly(tuple("Active", ts("2024-01-05 09:00"), "update"),
                tuple("Gold", null, "insert"));
        assertThat(fixture.versions(TARGET, "id", 2)).as("key 2 of the replayed batch %s must survive the replay",
                appliedFirst).extracting(v -> v.get("status"), Version::validTo).containsExactly(tuple("Gold", null));
        assertThat(fixture.errors(MODEL)).isEmpty();
    }

    static Stream<Arguments> sequenceTypes() {
        return Stream.of(
                Arguments.of("DATE", List.of(date("2024-01-01"), date("2024-01-02"), date("2024-01-03")),
                        List.of("2024-01-01", "2024-01-02", "2024-01-03")),
                Arguments.of("TIMESTAMP", List.of(ts("2024-01-01 06:00"), ts("2024-01-01 18:30"),
                        ts("2024-01-02 06:00:30")), List.of("2024-01-01T06:00", "2024-01-01T18:30",
                        "2024-01-02T06:00:30")),
                Arguments.of("TIMESTAMP WITH TIME ZONE", List.of(
                        java.time.OffsetDateTime.parse("2024-01-01T10:00+02:00"),
                        java.time.OffsetDateTime.parse("2024-01-01T09:00Z"),
                        java.time.OffsetDateTime.parse("2024-01-01T05:00-05:00")),
                        List.of("2024-01-01T08:00Z", "2024-01-01T09:00Z", "2024-01-01T10:00Z")),
                Arguments.of("INT", List.of(8, 9, 10), List.of("8", "9", "10")),
                Arguments.of("BIGINT", List.of(99L, 100L, 10_000_000_000L), List.of("99", "100", "10000000000")),
                Arguments.of("DECIMAL(12,2)", List.of(new BigDecimal("1.50"), new BigDecimal("2.25"),
                        new BigDecimal("10.00")), List.of("1.5", "2.25", "10")),
                Arguments.of("VARCHAR(20)", List.of("b1", "b2", "b3"), List.of("b1", "b2", "b3")));
    }

    /**
     * Every sequence type orders and replays: batches 1 and 3 applied, batch 2 late. The ledger stores canonical text
     * (ISO-8601, plain digits) and the run reports values of the column's Java type.
     */
    @ParameterizedTest(name = "sequence_by {0}")
    @MethodSource("sequenceTypes")
    void everySequenceTypeOrdersAndReplays(String sqlType, List<Object> seqs, List<String> canonical) {
        RawTable raw = fixture.rawTable("raw_customers", "id INT", "status VARCHAR(20)", "updated_at TIMESTAMP",
                "batch_seq " + sqlType);
        ModelSettings m = model(raw, "batch_seq").build();
        IterativeSnapshot snap = fixture.engine(null);
        raw.insert(1, "Active", ts("2024-01-01 09:00"), seqs.get(0));
        snap.run(m);
        raw.insert(1, "Gold", ts("2024-01-03 09:00"), seqs.get(2));
        snap.run(m);
        raw.insert(1, "Premium", ts("2024-01-02 09:00"), seqs.get(1));
        RunResult r = snap.run(m);

        assertThat(r.lateBatchFound()).isTrue();
        assertThat(r.batches()).hasSize(2);
        assertThat(SnapshotFixture.normalize(r.replayPoint())).as("replay point")
                .isEqualTo(SnapshotFixture.normalize(seqs.get(1)));
        assertThat(fixture.versions(TARGET, "id", 1)).extracting(v -> v.get("status"), Version::validTo)
                .containsExactly(tuple("Active", ts("2024-01-02 09:00")), tuple("Premium", ts("2024-01-03 09:00")),
                        tuple("Gold", null));
        assertThat(fixture.ledgerCounts(MODEL)).extracting(Counts::sequence)
                .containsExactlyInAnyOrderElementsOf(canonical);
        assertThat(fixture.errors(MODEL)).isEmpty();
        assertThat(snap.run(m).batchesApplied()).as("rerun is a no-op").isZero();
    }

    // ================================================================== keys

    /**
     * A composite key: (EU, 1) and (US, 1) are different customers; duplicates are found per whole key; a full batch
     * deletes (EU, 2) only.
     */
    @Test
    void compositeKeysIdentifyCustomersByAllTheirColumns() {
        RawTable raw = fixture.rawTable("raw_customers", "region VARCHAR(2)", "id INT", "status VARCHAR(20)",
                "updated_at TIMESTAMP", "file_date DATE");
        ModelSettings m = model(raw).uniqueKey("region", "id").hardDeletes(HardDeletes.INVALIDATE).build();
        IterativeSnapshot snap = fixture.engine(null);
        raw.insert("EU", 1, "Active", ts("2024-01-01 09:00"), date("2024-01-01"));
        raw.insert("US", 1, "Active", ts("2024-01-01 09:00"), date("2024-01-01"));
        raw.insert("EU", 2, "Active", ts("2024-01-01 09:00"), date("2024-01-01"));
        snap.run(m);
        raw.insert("EU", 1, "Gold", ts("2024-01-02 09:00"), date("2024-01-02"));
        raw.insert("US", 1, "Active", ts("2024-01-01 09:00"), date("2024-01-02"));
        raw.insert("US", 2, "Silver", ts("2024-01-02 09:00"), date("2024-01-02"));
        raw.insert("US", 2, "Bronze", ts("2024-01-02 09:00"), date("2024-01-02"));
        snap.run(m);

        List<Version> h = fixture.history(TARGET);
        assertThat(h).extracting(v -> v.get("region"), v -> v.get("id"), v -> v.get("status"), Version::validTo,
                Version::changeType).containsExactlyInAnyOrder(
                tuple("EU", 1L, "Active", ts("2024-01-02 09:00"), "update"),
                tuple("EU", 1L, "Gold", null, "insert"),
                tuple("US", 1L, "Active", null, "insert"),
                tuple("EU", 2L, "Active", date("2024-01-02").atStartOfDay(), "delete"));
        assertThat(fixture.errors(MODEL)).extracting(ErrorEntry::reason, ErrorEntry::sequence)
                .containsExactly(tuple("duplicate_key", "2024-01-02"), tuple("duplicate_key", "2024-01-02"));
        assertThat(fixture.ledgerEntry(MODEL, "2024-01-02")).isEqualTo(
                new Counts("2024-01-02", 4, 1, 1, 1, 2, false));
        assertThat(fixture.timelineProblems(TARGET, "region", "id")).isEmpty();

        raw.insert("EU", null, "Gold", ts("2024-01-03 09:00"), date("2024-01-03"));
        raw.insert(null, 1, "Gold", ts("2024-01-03 09:00"), date("2024-01-03"));
        raw.insert("EU", 1, "Gold", ts("2024-01-02 09:00"), date("2024-01-03"));
        raw.insert("US", 1, "Active", ts("2024-01-01 09:00"), date("2024-01-03"));
        snap.run(m);
        assertThat(fixture.errors(MODEL)).filteredOn(e -> e.sequence().equals("2024-01-03"))
                .as("a NULL in any key column is a NULL key").extracting(ErrorEntry::reason)
                .containsExactly("null_key", "null_key");
    }

    // ================================================================== hard deletes

    /** hard_deletes ignore (default): a batch may hold part of the source, so absent keys stay current. */
    @Test
    void hardDeletesIgnoreLeavesAbsentKeysCurrent() {
        RawTable raw = customers(fixture);
        ModelSettings m = model(raw).build();
        raw.insert(1, "Active", null, ts("2024-01-01 09:00"), date("2024-01-01"));
        raw.insert(2, "Active", null, ts("2024-01-01 09:00"), date("2024-01-01"));
        fixture.run(m);
        raw.insert(1, "Gold", null, ts("2024-01-02 09:00"), date("2024-01-02"));
        fixture.run(m);

        assertThat(fixture.versions(TARGET, "id", 2)).extracting(Version::validTo, Version::changeType)
                .containsExactly(tuple(null, "insert"));
        assertThat(fixture.ledgerEntry(MODEL, "2024-01-02").deleted()).isZero();
    }

    /**
     * hard_deletes invalidate with a DATE sequence: absent keys close at the batch date (midnight, since updated_at is
     * a TIMESTAMP). A key returning starts at the later of its updated_at and the deletion time.
     */
    @Test
    void hardDeletesInvalidateClosesAbsentKeysAtTheBatchDateAndReturningKeysNeverOverlap() {
        RawTable raw = customers(fixture);
        ModelSettings m = model(raw).hardDeletes(HardDeletes.INVALIDATE).build();
        IterativeSnapshot snap = fixture.engine(null);
        for (int id = 1; id <= 3; id++) {
            raw.insert(id, "Active", null, ts("2024-01-01 09:00"), date("2024-01-01"));
        }
        snap.run(m);
        raw.insert(1, "Active", null, ts("2024-01-01 09:00"), date("2024-01-02"));
        snap.run(m);
        raw.insert(1, "Active", null, ts("2024-01-01 09:00"), date("2024-01-03"));
        raw.insert(2, "Active", null, ts("2024-01-01 12:00"), date("2024-01-03"));
        raw.insert(3, "Gold", null, ts("2024-01-02 15:00"), date("2024-01-03"));
        snap.run(m);

        LocalDateTime deletion = ts("2024-01-02 00:00");
        assertThat(fixture.versions(TARGET, "id", 1)).hasSize(1).allMatch(Version::current);
        assertThat(fixture.versions(TARGET, "id", 2)).extracting(Version::validFrom, Version::validTo,
                Version::changeType, Version::changed, Version::updatedAt).containsExactly(
                tuple(ts("2024-01-01 09:00"), deletion, "delete", null, ts("2024-01-01 09:00")),
                tuple(deletion, null, "insert", null, ts("2024-01-01 12:00")));
        assertThat(fixture.versions(TARGET, "id", 3)).extracting(v -> v.get("status"), Version::validFrom,
                Version::validTo, Version::changeType).containsExactly(
                tuple("Active", ts("2024-01-01 09:00"), deletion, "delete"),
                tuple("Gold", ts("2024-01-02 15:00"), null, "insert"));
        assertThat(fixture.ledgerCounts(MODEL)).containsExactly(
                new Counts("2024-01-01", 3, 3, 0, 0, 0, false),
                new Counts("2024-01-02", 1, 0, 0, 2, 0, false),
                new Counts("2024-01-03", 3, 2, 0, 0, 0, false));
        assertThat(fixture.deletionTime(MODEL, "2024-01-02")).isEqualTo("2024-01-02T00:00");
        assertThat(fixture.errors(MODEL)).as("a returning key is never a regression").isEmpty();
        assertThat(fixture.timelineProblems(TARGET, "id")).isEmpty();
    }

    /**
     * hard_deletes invalidate with an integer sequence: the deletion time is the greatest updated_at of the batch,
     * counting every row, set-aside ones included (semantics).
     */
    @Test
    void hardDeletesInvalidateWithIntegerSequenceClosesAtTheGreatestUpdatedAtOfTheBatch() {
        RawTable raw = fixture.rawTable("raw_customers", "id INT", "status VARCHAR(20)", "updated_at TIMESTAMP",
                "batch_id INT");
        ModelSettings m = model(raw, "batch_id").hardDeletes(HardDeletes.INVALIDATE).build();
        raw.insert(1, "Active", ts("2024-01-01 09:00"), 1);
        raw.insert(2, "Active", ts("2024-01-01 09:00"), 1);
        fixture.run(m);
        raw.insert(1, "Gold", ts("2024-01-05 10:00"), 2);
        raw.insert(3, "Active", ts("2024-01-04 08:00"), 2);
        fixture.run(m);

        assertThat(fixture.versions(TARGET, "id", 2)).extracting(Version::validTo, Version::changeType)
                .containsExactly(tuple(ts("2024-01-05 10:00"), "delete"));
        assertThat(fixture.ledgerEntry(MODEL, "2")).isEqualTo(new Counts("2", 2, 2, 1, 1, 0, false));
        assertThat(fixture.deletionTime(MODEL, "2")).isEqualTo("2024-01-05T10:00");

        raw.insert(1, "Gold", ts("2024-01-05 10:00"), 3);
        raw.insert(3, "Silver", ts("2024-01-06 07:00"), 3);
        raw.insert(3, "Bronze", ts("2024-01-06 07:00"), 3);
        raw.insert(4, "Active", ts("2024-01-05 12:00"), 3);
        fixture.run(m);
        assertThat(fixture.versions(TARGET, "id", 3)).as("a key whose rows were set aside is not deleted")
                .extracting(Version::validTo).containsExactly((Object) null);
        assertThat(fixture.deletionTime(MODEL, "3")).as("deletion time counts the set-aside rows' updated_at")
                .isEqualTo("2024-01-06T07:00");
    }

    /**
     * hard_deletes new_record: a deleted key gets a deletion record (the closed version's values, dbt_is_deleted
     * true, from the deletion time, open, 'insert'); a returning key closes it as an update with changed_attributes.
     */
    @Test
    void hardDeletesNewRecordAddsDeletionRecordsThatAReturningKeyCloses() {
        RawTable raw = customers(fixture);
        ModelSettings m = model(raw).hardDeletes(HardDeletes.NEW_RECORD).build();
        IterativeSnapshot snap = fixture.engine(null);
        raw.insert(1, "Active", "A", ts("2024-01-01 09:00"), date("2024-01-01"));
        raw.insert(2, "Active", "A", ts("2024-01-01 09:00"), date("2024-01-01"));
        snap.run(m);
        raw.insert(1, "Active", "A", ts("2024-01-01 09:00"), date("2024-01-02"));
        snap.run(m);

        List<Version> two = fixture.versions(TARGET, "id", 2);
        assertThat(two).extracting(v -> v.get("status"), v -> v.get("tier"), Version::updatedAt, Version::validFrom,
                Version::validTo, Version::changeType, Version::deleted).containsExactly(
                tuple("Active", "A", ts("2024-01-01 09:00"), ts("2024-01-01 09:00"), ts("2024-01-02 00:00"), "delete",
                        false),
                tuple("Active", "A", ts("2024-01-02 00:00"), ts("2024-01-02 00:00"), null, "insert", true));
        assertThat(fixture.versions(TARGET, "id", 1)).extracting(Version::deleted).containsExactly(false);
        assertThat(fixture.ledgerEntry(MODEL, "2024-01-02")).isEqualTo(
                new Counts("2024-01-02", 1, 1, 0, 1, 0, false));

        raw.insert(1, "Active", "A", ts("2024-01-01 09:00"), date("2024-01-03"));
        raw.insert(2, "Gold", "A", ts("2024-01-02 15:00"), date("2024-01-03"));
        snap.run(m);
        assertThat(fixture.versions(TARGET, "id", 2)).extracting(v -> v.get("status"), Version::validFrom,
                Version::validTo, Version::changeType, Version::changed, Version::deleted).containsExactly(
                tuple("Active", ts("2024-01-01 09:00"), ts("2024-01-02 00:00"), "delete", null, false),
                tuple("Active", ts("2024-01-02 00:00"), ts("2024-01-02 15:00"), "update", "[\"status\"]", true),
                tuple("Gold", ts("2024-01-02 15:00"), null, "insert", null, false));
        assertThat(fixture.ledgerEntry(MODEL, "2024-01-03")).isEqualTo(
                new Counts("2024-01-03", 2, 1, 1, 0, 0, false));

        raw.insert(2, "Gold", "A", ts("2024-01-02 15:00"), date("2024-01-04"));
        snap.run(m);
        raw.insert(1, "Active", "A", ts("2024-01-01 09:00"), date("2024-01-05"));
        raw.insert(2, "Gold", "A", ts("2024-01-02 15:00"), date("2024-01-05"));
        assertThat(snap.run(m).timelineViolations()).as("the engine's own timeline check").isZero();
        assertThat(fixture.versions(TARGET, "id", 1)).as("key 1 deleted on the 4th returns on the 5th with an older"
                + " updated_at: it starts at the deletion time").extracting(Version::validFrom, Version::validTo,
                Version::changeType, Version::deleted).containsExactly(
                tuple(ts("2024-01-01 09:00"), ts("2024-01-04 00:00"), "delete", false),
                tuple(ts("2024-01-04 00:00"), ts("2024-01-04 00:00"), "update", true),
                tuple(ts("2024-01-04 00:00"), null, "insert", false));
        assertThat(fixture.errors(MODEL)).isEmpty();
        assertThat(fixture.timelineProblems(TARGET, "id")).isEmpty();
    }

    /** hard_deletes new_record with an integer sequence: the deletion record starts at the batch's max updated_at. */
    @Test
    void hardDeletesNewRecordWithIntegerSequenceStartsTheDeletionRecordAtTheGreatestUpdatedAt() {
        RawTable raw = fixture.rawTable("raw_customers", "id INT", "status VARCHAR(20)", "updated_at TIMESTAMP",
                "batch_id INT");
        ModelSettings m = model(raw, "batch_id").hardDeletes(HardDeletes.NEW_RECORD).build();
        raw.insert(1, "Active", ts("2024-01-01 09:00"), 1);
        raw.insert(2, "Active", ts("2024-01-01 09:00"), 1);
        fixture.run(m);
        raw.insert(1, "Gold", ts("2024-01-03 10:00"), 2);
        fixture.run(m);

        assertThat(fixture.versions(TARGET, "id", 2)).extracting(Version::validFrom, Version::validTo,
                Version::changeType, Version::deleted).containsExactly(
                tuple(ts("2024-01-01 09:00"), ts("2024-01-03 10:00"), "delete", false),
                tuple(ts("2024-01-03 10:00"), null, "insert", true));
    }

    /**
     * delete_when (CDC): a row matching {@code op = 'D'} closes the key's current version at its updated_at; a delete
     * of an unknown key does nothing; the key returning later starts after the deletion. Under new_record the
     * deletion record carries the closed version's values.
     */
    @ParameterizedTest(name = "hard_deletes {0}")
    @EnumSource(HardDeletes.class)
    void deleteWhenClosesTheKeyAtTheRowsUpdatedAt(HardDeletes mode) {
        RawTable raw = fixture.rawTable("raw_customers", "id INT", "status VARCHAR(20)", "op VARCHAR(1)",
                "updated_at TIMESTAMP", "file_date DATE");
        ModelSettings m = model(raw).deleteWhen("op = 'D'").hardDeletes(mode).build();
        IterativeSnapshot snap = fixture.engine(null);
        raw.insert(1, "Active", "I", ts("2024-01-01 09:00"), date("2024-01-01"));
        raw.insert(2, "Active", "I", ts("2024-01-01 09:00"), date("2024-01-01"));
        snap.run(m);
        raw.insert(1, "Active", "D", ts("2024-01-02 08:00"), date("2024-01-02"));
        raw.insert(2, "Active", "I", ts("2024-01-01 09:00"), date("2024-01-02"));
        raw.insert(9, "Active", "D", ts("2024-01-02 08:00"), date("2024-01-02"));
        snap.run(m);

        boolean records = mode == HardDeletes.NEW_RECORD;
        List<Version> one = fixture.versions(TARGET, "id", 1);
        assertThat(one.get(0)).extracting(v -> v.get("status"), v -> v.get("op"), Version::validTo,
                Version::changeType, Version::changed).containsExactly("Active", "I", ts("2024-01-02 08:00"), "delete",
                null);
        assertThat(one).hasSize(records ? 2 : 1);
        if (records) {
            assertThat(one.get(1)).extracting(v -> v.get("op"), Version::validFrom, Version::validTo, Version::deleted)
                    .containsExactly("I", ts("2024-01-02 08:00"), null, true);
        }
        assertThat(fixture.versions(TARGET, "id", 9)).as("deleting an unknown key does nothing").isEmpty();
        assertThat(fixture.versions(TARGET, "id", 2)).extracting(Version::validTo).containsExactly((Object) null);
        assertThat(fixture.ledgerEntry(MODEL, "2024-01-02")).extracting(Counts::sourceRows, Counts::inserted,
                Counts::updated, Counts::deleted, Counts::rejected).containsExactly(3L, records ? 1L : 0L, 0L, 1L, 0L);

        raw.insert(1, "Gold", "I", ts("2024-01-02 18:00"), date("2024-01-03"));
        raw.insert(2, "Active", "I", ts("2024-01-01 09:00"), date("2024-01-03"));
        snap.run(m);
        List<Version> back = fixture.versions(TARGET, "id", 1);
        assertThat(back.get(back.size() - 1)).extracting(v -> v.get("status"), Version::validFrom, Version::validTo)
                .containsExactly("Gold", ts("2024-01-02 18:00"), null);
        assertThat(fixture.errors(MODEL)).isEmpty();
        assertThat(fixture.timelineProblems(TARGET, "id")).isEmpty();
    }

    /**
     * A change whose {@code updated_at} equals the key's running time (the time its current version took effect) is
     * a change, not a regression, and the version it closes lasts no time. Key 1: a change with its current version's
     * own updated_at. Key 2: absent from the full file of Jan 2, back on Jan 3 unchanged (it returns at the deletion
     * time, Jan 2 00:00, later than its updated_at), changed on Jan 4 at exactly Jan 2 00:00: a change. Key 3: the
     * same, changed at Jan 1 23:00, after its row's updated_at but before its running time: set aside as a regression.
     * The same history whether the files come in one run or one run each.
     */
    @Test
    void changeAtTheKeysRunningTimeIsAChangeAndItsPredecessorLastsNoTime() {
        String[][] files = {
                {"1 A 2024-01-01T09:00", "2 A 2024-01-01T09:00", "3 A 2024-01-01T09:00"},
                {"1 B 2024-01-01T09:00"},
                {"1 B 2024-01-01T09:00", "2 A 2024-01-01T09:00", "3 A 2024-01-01T09:00"},
                {"1 B 2024-01-01T09:00", "2 B 2024-01-02T00:00", "3 B 2024-01-01T23:00"}};
        SnapshotFixture oneRun = newFixture();
        RawTable all = customers(oneRun);
        RawTable raw = customers(fixture);
        for (int d = 0; d < files.length; d++) {
            for (String row : files[d]) {
                String[] f = row.split(" ");
                Object[] values = {Integer.valueOf(f[0]), f[1], null, java.time.LocalDateTime.parse(f[2]),
                        date("2024-01-01").plusDays(d)};
                raw.insert(values);
                all.insert(values);
            }
            fixture.run(model(raw).strategy(Strategy.CHECK).hardDeletes(HardDeletes.INVALIDATE).build());
        }
        oneRun.run(model(all).strategy(Strategy.CHECK).hardDeletes(HardDeletes.INVALIDATE).build());

        for (SnapshotFixture f : List.of(fixture, oneRun)) {
            assertThat(f.versions(TARGET, "id", 1)).as("a change at the version's own time")
                    .extracting(v -> v.get("status"), Version::updatedAt, Version::validFrom, Version::validTo,
                            Version::changeType).containsExactly(
                            tuple("A", ts("2024-01-01 09:00"), ts("2024-01-01 09:00"), ts("2024-01-01 09:00"), "update"),
                            tuple("B", ts("2024-01-01 09:00"), ts("2024-01-01 09:00"), null, "insert"));
            assertThat(f.versions(TARGET, "id", 2)).as("a change at the running time after a return")
                    .extracting(v -> v.get("status"), Version::updatedAt, Version::validFrom, Version::validTo,
                            Version::changeType).containsExactly(
                            tuple("A", ts("2024-01-01 09:00"), ts("2024-01-01 09:00"), ts("2024-01-02 00:00"), "delete"),
                            tuple("A", ts("2024-01-01 09:00"), ts("2024-01-02 00:00"), ts("2024-01-02 00:00"), "update"),
                            tuple("B", ts("2024-01-02 00:00"), ts("2024-01-02 00:00"), null, "insert"));
            assertThat(f.versions(TARGET, "id", 3)).as("a change before the running time")
                    .extracting(v -> v.get("status"), Version::validFrom, Version::validTo).containsExactly(
                            tuple("A", ts("2024-01-01 09:00"), ts("2024-01-02 00:00")),
                            tuple("A", ts("2024-01-02 00:00"), null));
            assertThat(f.errors(MODEL)).extracting(ErrorEntry::sequence, ErrorEntry::reason)
                    .containsExactly(tuple("2024-01-04", "updated_at_regression"));
            assertThat(f.timelineProblems(TARGET, "id")).isEmpty();
        }
        assertThat(fixture.essence(TARGET)).isEqualTo(oneRun.essence(TARGET));
    }

    // ================================================================== sequence_by as a list

    /** Files named by a date and a number within the day: {@code sequence_by: [file_date, file_no]}. */
    private RawTable numberedFiles(SnapshotFixture f) {
        return f.rawTable("raw_files", "id INT", "status VARCHAR(20)", "updated_at TIMESTAMP", "file_date DATE",
                "file_no INT");
    }

    private static ModelSettings numberedFilesModel(RawTable raw) {
        return ModelSettings.builder(MODEL).target(TARGET).source(raw.selectAll()).uniqueKey("id")
                .updatedAt("updated_at").sequenceBy(List.of("file_date", "file_no")).hardDeletes(HardDeletes.INVALIDATE)
                .build();
    }

    private static void numberedFilesInOrder(RawTable raw) {
        raw.insert(1, "new", ts("2024-01-01 08:00:00"), date("2024-01-01"), 9);
        raw.insert(2, "new", ts("2024-01-01 08:00:00"), date("2024-01-01"), 9);
        raw.insert(1, "active", ts("2024-01-02 08:00:00"), date("2024-01-02"), 1);
        raw.insert(2, "new", ts("2024-01-01 08:00:00"), date("2024-01-02"), 1);
    }

    /** File 10 of 2024-01-01 (after file 9 of that day: numbers compare as numbers, not as text), arriving last. */
    private static void numberedFileLate(RawTable raw) {
        raw.insert(1, "pending", ts("2024-01-01 20:00:00"), date("2024-01-01"), 10);
        raw.insert(2, "new", ts("2024-01-01 08:00:00"), date("2024-01-01"), 10);
        raw.insert(3, "new", ts("2024-01-01 20:00:00"), date("2024-01-01"), 10);
        raw.insert(4, "lost", ts("2024-01-01 20:00:00"), null, 10); // no sequence: set aside
    }

    /**
     * {@code sequence_by: [file_date, file_no]}: batches are ordered by the date, then the number, each in its own
     * type (file 10 of a day comes after file 9). File 10 of 2024-01-01 arrives after 2024-01-02's file 1: it is a
     * late batch, rolled back to and replayed, and the history equals one in-order run. The ledger, the error log, the
     * results and the events show each batch as its tuple; a point in time and a replay take a tuple; a row with a
     * NULL in either column is set aside as having no sequence.
     */
    @Test
    void sequenceByListOrdersBatchesByEachColumnInItsType() {
        RawTable raw = numberedFiles(fixture);
        ModelSettings m = numberedFilesModel(raw);
        numberedFilesInOrder(raw);
        fixture.run(m);
        numberedFileLate(raw);
        List<SnapshotEvent> events = new java.util.ArrayList<>();
        RunResult late = fixture.engine(events::add).run(m);

        assertThat(late.lateBatchFound()).isTrue();
        assertThat(late.replayPoint()).isEqualTo(List.of(date("2024-01-01"), 10L));
        assertThat(late.replayPointText()).isEqualTo("(2024-01-01, 10)");
        assertThat(late.batches()).extracting(BatchResult::sequenceText)
                .containsExactly("(2024-01-01, 10)", "(2024-01-02, 1)");
        assertThat(events).filteredOn(e -> e instanceof SnapshotEvent.OutOfOrder).singleElement()
                .satisfies(e -> assertThat(((SnapshotEvent.OutOfOrder) e).replayPoint())
                        .isEqualTo(List.of(date("2024-01-01"), 10L)));
        assertThat(fixture.ledger(MODEL)).extracting(SnapshotFixture.LedgerEntry::sequence).containsExactlyInAnyOrder(
                "(2024-01-01, 9)", "(2024-01-01, 10)", "(2024-01-02, 1)");
        assertThat(fixture.errors(MODEL)).extracting(ErrorEntry::reason).containsExactly("null_sequence");
        assertThat(fixture.history(TARGET)).extracting(v -> ((Number) v.get("id")).intValue(), v -> v.get("status"),
                Version::validFrom, Version::current).containsExactlyInAnyOrder(
                tuple(1, "new", ts("2024-01-01 08:00:00"), false),
                tuple(1, "pending", ts("2024-01-01 20:00:00"), false),
                tuple(1, "active", ts("2024-01-02 08:00:00"), true),
                tuple(2, "new", ts("2024-01-01 08:00:00"), true),
                tuple(3, "new", ts("2024-01-01 20:00:00"), false)); // absent from 2024-01-02's file 1: deleted
        assertThat(fixture.timelineProblems(TARGET, "id")).isEmpty();

        SnapshotFixture oneRun = newFixture();
        RawTable all = numberedFiles(oneRun);
        numberedFilesInOrder(all);
        numberedFileLate(all);
        oneRun.run(numberedFilesModel(all));
        assertThat(fixture.essence(TARGET)).isEqualTo(oneRun.essence(TARGET));

        // a tuple names a point: as text or as a list of values
        IterativeSnapshot snap = fixture.engine(null);
        RunResult replay = snap.replayFrom(m, "(2024-01-01, 10)");
        assertThat(replay.batches()).extracting(BatchResult::sequenceText)
                .containsExactly("(2024-01-01, 10)", "(2024-01-02, 1)");
        assertThat(fixture.essence(TARGET)).isEqualTo(oneRun.essence(TARGET));
        String asOf = snap.asOfSql(m, dev.itersnap.core.AsOf.sequence(List.of(date("2024-01-01"), 10L)));
        assertThat(fixture.query(asOf)).extracting(r -> r.get(r.keySet().stream()
                .filter(k -> k.equalsIgnoreCase("status")).findFirst().orElseThrow())).containsExactlyInAnyOrder(
                "pending", "new", "new");
    }

    /**
     * Turning a one-column sequence_by into a list changes what a batch is: a plain run stops at the logic change,
     * and one that accepts it stops at the first batch the ledger records that is no value of the list
     * (INCOMPATIBLE_SCHEMA_CHANGE, naming the batch), writing nothing.
     */
    @Test
    void aSequenceByTurnedIntoAListIsRefusedBeforeAnythingIsWritten() {
        RawTable raw = numberedFiles(fixture);
        numberedFilesInOrder(raw);
        fixture.run(ModelSettings.builder(MODEL).target(TARGET).source(raw.selectAll()).uniqueKey("id")
                .updatedAt("updated_at").sequenceBy("file_date").build());
        List<Version> history = fixture.history(TARGET);
        numberedFileLate(raw);
        ModelSettings list = numberedFilesModel(raw);

        org.assertj.core.api.Assertions.assertThatThrownBy(() -> fixture.run(list))
                .isInstanceOfSatisfying(dev.itersnap.core.ItersnapException.class,
                        e -> assertThat(e.code()).isEqualTo(dev.itersnap.core.ErrorCode.LOGIC_CHANGE));
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> fixture.engine(null).run(list,
                        dev.itersnap.core.LogicChange.ACCEPT))
                .isInstanceOfSatisfying(dev.itersnap.core.ItersnapException.class, e -> {
                    assertThat(e.code()).isEqualTo(dev.itersnap.core.ErrorCode.INCOMPATIBLE_SCHEMA_CHANGE);
                    assertThat(e.getMessage()).contains("2024-01-01").containsIgnoringCase("file_date, file_no");
                });
        assertThat(fixture.history(TARGET)).isEqualTo(history);
    }

    // ================================================================== CDC feeds (AUTO CDC's example)

    /** The users change feed of Databricks' AUTO CDC documentation: one sequence number per event. */
    private RawTable autoCdcUsers(SnapshotFixture f) {
        return f.rawTable("raw_users", "userId INT", "name VARCHAR(20)", "city VARCHAR(20)", "operation VARCHAR(10)",
                "sequenceNum INT");
    }

    private static void autoCdcEventsUpTo6(RawTable raw) {
        raw.insert(124, "Raul", "Oaxaca", "INSERT", 1);
        raw.insert(123, "Isabel", "Monterrey", "INSERT", 1);
        raw.insert(125, "Mercedes", "Tijuana", "INSERT", 2);
        raw.insert(126, "Lily", "Cancun", "INSERT", 2);
        raw.insert(123, null, null, "DELETE", 6);
        raw.insert(125, "Mercedes", "Guadalajara", "UPDATE", 6);
    }

    private static void autoCdcLateEvents5(RawTable raw) {
        raw.insert(125, "Mercedes", "Mexicali", "UPDATE", 5);
        raw.insert(123, "Isabel", "Chihuahua", "UPDATE", 5);
    }

    private static ModelSettings.Builder autoCdcModel(RawTable raw) {
        return ModelSettings.builder(MODEL).target(TARGET).source(raw.selectAll()).uniqueKey("userId")
                .updatedAt("sequenceNum").sequenceBy("sequenceNum").deleteWhen("operation = 'DELETE'");
    }

    /**
     * AUTO CDC's SCD type 2 example as published: a CDC feed whose one sequence number orders the events and dates
     * the versions ({@code sequence_by} = {@code updated_at}); Isabel is deleted at 6, and the updates of 5 arrive
     * after 6. The history is the published table (userId, name, city, __START_AT, __END_AT), also when the late
     * updates come in the same run as the rest.
     */
    @Test
    void autoCdcExampleAsPublishedWithTheUpdatesOf5ArrivingAfter6() {
        RawTable raw = autoCdcUsers(fixture);
        ModelSettings m = autoCdcModel(raw).build();
        autoCdcEventsUpTo6(raw);
        fixture.run(m);
        autoCdcLateEvents5(raw);
        RunResult late = fixture.run(m);

        assertThat(late.lateBatchFound()).isTrue();
        assertAutoCdcHistory(
                tuple(123, "Isabel", "Monterrey", 1L, 5L),
                tuple(123, "Isabel", "Chihuahua", 5L, 6L),
                tuple(124, "Raul", "Oaxaca", 1L, null),
                tuple(125, "Mercedes", "Tijuana", 2L, 5L),
                tuple(125, "Mercedes", "Mexicali", 5L, 6L),
                tuple(125, "Mercedes", "Guadalajara", 6L, null),
                tuple(126, "Lily", "Cancun", 2L, null));
        assertEqualsOneAutoCdcRun(b -> b);
    }

    /**
     * The history of the AUTO CDC example is exactly {@code rows} (userId, name, city, __START_AT, __END_AT), with
     * nothing set aside and a sound timeline.
     */
    private void assertAutoCdcHistory(org.assertj.core.groups.Tuple... rows) {
        assertThat(fixture.history(TARGET)).extracting(v -> ((Number) v.get("userId")).intValue(), v -> v.get("name"),
                v -> v.get("city"), v -> num(v.validFrom()), v -> num(v.validTo())).containsExactlyInAnyOrder(rows);
        assertThat(fixture.errors(MODEL)).isEmpty();
        assertThat(fixture.timelineProblems(TARGET, "userId")).isEmpty();
    }

    /** The history equals that of one run over every event of the AUTO CDC example, under the same settings. */
    private void assertEqualsOneAutoCdcRun(java.util.function.UnaryOperator<ModelSettings.Builder> settings) {
        SnapshotFixture oneRun = newFixture();
        RawTable all = autoCdcUsers(oneRun);
        autoCdcEventsUpTo6(all);
        autoCdcLateEvents5(all);
        oneRun.run(settings.apply(autoCdcModel(all)).build());
        assertThat(fixture.essence(TARGET)).isEqualTo(oneRun.essence(TARGET));
    }

    /**
     * AUTO CDC's example with {@code TRACK HISTORY ON * EXCEPT (city)}, as published: {@code check_cols: [name]} and
     * {@code untracked_columns: overwrite}. No version for a city change: the current version shows the latest city
     * (Mercedes in Guadalajara since 2), and a version closed by the delete at 6 keeps the city it had then (Isabel
     * in Chihuahua, from the late update of 5). Before the late updates the city of 6 is already in place; with them
     * the roll back restores each version's city from the archive and the replay overwrites it again.
     */
    @Test
    void autoCdcExampleTrackingHistoryExceptCityOverwritesTheCityInPlace() {
        RawTable raw = autoCdcUsers(fixture);
        ModelSettings m = autoCdcModel(raw).checkCols("name").untrackedColumns(UntrackedColumns.OVERWRITE).build();
        autoCdcEventsUpTo6(raw);
        fixture.run(m);
        assertThat(fixture.history(TARGET)).extracting(v -> ((Number) v.get("userId")).intValue(), v -> v.get("city"),
                v -> num(v.validFrom()), v -> num(v.validTo())).containsExactlyInAnyOrder(
                tuple(123, "Monterrey", 1L, 6L), tuple(124, "Oaxaca", 1L, null),
                tuple(125, "Guadalajara", 2L, null), tuple(126, "Cancun", 2L, null));
        autoCdcLateEvents5(raw);
        RunResult late = fixture.run(m);

        assertThat(late.lateBatchFound()).isTrue();
        assertAutoCdcHistory(
                tuple(123, "Isabel", "Chihuahua", 1L, 6L),
                tuple(124, "Raul", "Oaxaca", 1L, null),
                tuple(125, "Mercedes", "Guadalajara", 2L, null),
                tuple(126, "Lily", "Cancun", 2L, null));
        assertEqualsOneAutoCdcRun(b -> b.checkCols("name").untrackedColumns(UntrackedColumns.OVERWRITE));
    }

    /**
     * {@code untracked_columns: overwrite}: a version closed by a change of a tracked column keeps the untracked
     * values of its last row, and the current one shows those of the latest row. A late change inside a version whose
     * values later rows overwrote splits it: the roll back gives the version the values of its last row before the
     * late one (from the archive), so its first part keeps them, and the part after takes the later rows' values.
     */
    @Test
    void overwrittenUntrackedColumnsKeepTheLastRowOfEachVersion() {
        RawTable raw = autoCdcUsers(fixture);
        ModelSettings m = autoCdcModel(raw).checkCols("name").untrackedColumns(UntrackedColumns.OVERWRITE).build();
        raw.insert(1, "Ana", "Lima", "INSERT", 1);
        raw.insert(1, "Ana", "Cusco", "UPDATE", 3);
        raw.insert(1, "Anna", "Quito", "UPDATE", 6);
        raw.insert(1, "Anna", "Bogota", "UPDATE", 8);
        raw.insert(1, "Anna", "Lima", "MOVE", 10);
        fixture.run(m);
        assertThat(fixture.versions(TARGET, "userId", 1)).extracting(v -> v.get("name"), v -> v.get("city"),
                v -> v.get("operation"), v -> num(v.validFrom()), v -> num(v.validTo()), Version::changed)
                .containsExactly(tuple("Ana", "Cusco", "UPDATE", 1L, 6L, "[\"name\"]"),
                        tuple("Anna", "Lima", "MOVE", 6L, null, null));

        raw.insert(1, "Ann", "Paris", "UPDATE", 7);
        fixture.run(m);
        assertThat(fixture.versions(TARGET, "userId", 1)).extracting(v -> v.get("name"), v -> v.get("city"),
                v -> num(v.validFrom()), v -> num(v.validTo())).containsExactly(tuple("Ana", "Cusco", 1L, 6L),
                tuple("Anna", "Quito", 6L, 7L), tuple("Ann", "Paris", 7L, 8L), tuple("Anna", "Lima", 8L, null));
        assertThat(fixture.errors(MODEL)).isEmpty();
    }

    /**
     * A partial-update feed ({@code ignore_null_updates: true}; the updates leave operation NULL too): a NULL is "not
     * supplied", so the new version keeps the current value and a row whose only differences are NULLs is no change
     * (no version, no error); a key that
     * is new, or returns after a delete, keeps its NULLs. A late batch changes what the NULLs after it stand for, and
     * the replay fills them again: the history equals one run over every event, and the error log and archive keep
     * the rows as they came.
     */
    @Test
    void ignoreNullUpdatesKeepsTheCurrentValueAndALateBatchChangesWhatLaterNullsStandFor() {
        RawTable raw = autoCdcUsers(fixture);
        ModelSettings m = autoCdcModel(raw).ignoreNullUpdates(true).build();
        raw.insert(1, "Ana", "Lima", "INSERT", 1);
        raw.insert(2, "Bo", null, "INSERT", 1);
        raw.insert(1, null, "Cusco", null, 3);
        raw.insert(2, null, null, null, 3);
        raw.insert(2, null, null, "DELETE", 4);
        raw.insert(2, null, "Oslo", "INSERT", 5);
        fixture.run(m);
        assertThat(fixture.versions(TARGET, "userId", 1)).extracting(v -> v.get("name"), v -> v.get("city"),
                Version::changed).containsExactly(tuple("Ana", "Lima", "[\"city\"]"), tuple("Ana", "Cusco", null));
        assertThat(fixture.versions(TARGET, "userId", 2)).as("no change at 3; a delete ends what NULLs stand for")
                .extracting(v -> v.get("name"), v -> v.get("city"), v -> num(v.validFrom()), v -> num(v.validTo()))
                .containsExactly(tuple("Bo", null, 1L, 4L), tuple(null, "Oslo", 5L, null));

        raw.insert(1, "Anna", null, null, 2);
        RunResult late = fixture.run(m);
        assertThat(late.lateBatchFound()).isTrue();
        assertThat(fixture.versions(TARGET, "userId", 1)).extracting(v -> v.get("name"), v -> v.get("city"),
                v -> num(v.validFrom())).containsExactly(tuple("Ana", "Lima", 1L), tuple("Anna", "Lima", 2L),
                tuple("Anna", "Cusco", 3L));
        assertThat(fixture.errors(MODEL)).isEmpty();

        SnapshotFixture oneRun = newFixture();
        RawTable all = autoCdcUsers(oneRun);
        all.insert(1, "Ana", "Lima", "INSERT", 1);
        all.insert(2, "Bo", null, "INSERT", 1);
        all.insert(1, "Anna", null, null, 2);
        all.insert(1, null, "Cusco", null, 3);
        all.insert(2, null, null, null, 3);
        all.insert(2, null, null, "DELETE", 4);
        all.insert(2, null, "Oslo", "INSERT", 5);
        oneRun.run(autoCdcModel(all).ignoreNullUpdates(true).build());
        assertThat(fixture.essence(TARGET)).isEqualTo(oneRun.essence(TARGET));
    }

    /**
     * {@code ignore_null_updates} across an explicit delete ({@code delete_when}): a delete ends what NULLs stand for.
     * A key that returns after it keeps its NULLs (not the values it had before the delete), and a later row's NULLs
     * stand for the returned version's values. Key 1 is deleted in one run and returns in the next (the state before a
     * run, read from the history); key 2 does the same within one run. One run over every event gives the same history.
     */
    @Test
    void ignoreNullUpdatesDoNotReachAcrossAnExplicitDelete() {
        RawTable raw = autoCdcUsers(fixture);
        ModelSettings m = autoCdcModel(raw).ignoreNullUpdates(true).build();
        raw.insert(1, "Ana", "Lima", "INSERT", 1);
        raw.insert(1, null, null, "DELETE", 2);
        fixture.run(m);
        raw.insert(1, null, "Oslo", "INSERT", 3);
        raw.insert(1, "Bea", null, null, 4);
        raw.insert(2, "Bo", "Rome", "INSERT", 3);
        raw.insert(2, null, null, "DELETE", 4);
        raw.insert(2, null, "Paris", "INSERT", 5);
        raw.insert(2, "Cy", null, null, 6);
        fixture.run(m);

        SnapshotFixture oneRun = newFixture();
        RawTable all = autoCdcUsers(oneRun);
        all.insertAll(List.of(new Object[] {1, "Ana", "Lima", "INSERT", 1}, new Object[] {1, null, null, "DELETE", 2},
                new Object[] {1, null, "Oslo", "INSERT", 3}, new Object[] {1, "Bea", null, null, 4},
                new Object[] {2, "Bo", "Rome", "INSERT", 3}, new Object[] {2, null, null, "DELETE", 4},
                new Object[] {2, null, "Paris", "INSERT", 5}, new Object[] {2, "Cy", null, null, 6}));
        oneRun.run(autoCdcModel(all).ignoreNullUpdates(true).build());

        for (SnapshotFixture f : List.of(fixture, oneRun)) {
            assertThat(f.versions(TARGET, "userId", 1)).extracting(v -> v.get("name"), v -> v.get("city"),
                    v -> v.get("operation"), v -> num(v.validFrom()), v -> num(v.validTo())).containsExactly(
                    tuple("Ana", "Lima", "INSERT", 1L, 2L),
                    tuple(null, "Oslo", "INSERT", 3L, 4L),
                    tuple("Bea", "Oslo", "INSERT", 4L, null));
            assertThat(f.versions(TARGET, "userId", 2)).extracting(v -> v.get("name"), v -> v.get("city"),
                    v -> v.get("operation"), v -> num(v.validFrom()), v -> num(v.validTo())).containsExactly(
                    tuple("Bo", "Rome", "INSERT", 3L, 4L),
                    tuple(null, "Paris", "INSERT", 5L, 6L),
                    tuple("Cy", "Paris", "INSERT", 6L, null));
            assertThat(f.errors(MODEL)).isEmpty();
        }
        assertThat(fixture.essence(TARGET)).isEqualTo(oneRun.essence(TARGET));
    }

    /**
     * {@code ignore_null_updates} with the batch whose NULLs were filled gone from the source: a late batch before it
     * changes what those NULLs stand for, and the replay reproduces it from the archive, which keeps the row as it
     * came (the history holds the values the NULLs stood for then), so the history equals one run over every event.
     */
    @Test
    void ignoreNullUpdatesLateBatchBeforeAnAgedOutBatchFillsItsNullsAgain() {
        RawTable raw = autoCdcUsers(fixture);
        ModelSettings m = autoCdcModel(raw).ignoreNullUpdates(true).build();
        raw.insert(1, "Ana", "Lima", "INSERT", 1);
        raw.insert(1, null, "Cusco", null, 3);
        raw.insert(1, null, null, null, 4);
        fixture.run(m);
        raw.deleteWhere("sequenceNum", 3);
        raw.insert(1, "Anna", null, null, 2);
        RunResult late = fixture.run(m);
        assertThat(late.lateBatchFound()).isTrue();
        assertThat(late.batches()).extracting(BatchResult::reproduced).containsExactly(false, true, false);
        assertThat(fixture.versions(TARGET, "userId", 1)).extracting(v -> v.get("name"), v -> v.get("city"),
                v -> num(v.validFrom())).containsExactly(tuple("Ana", "Lima", 1L), tuple("Anna", "Lima", 2L),
                tuple("Anna", "Cusco", 3L));
    }

    private static Long num(Object v) {
        return v == null ? null : ((Number) v).longValue();
    }

    /** A returning key under delete_when starts at the deletion time when its updated_at is older. */
    @Test
    void keyReturningAfterAnExplicitDeleteStartsAtTheLaterOfUpdatedAtAndDeletionTime() {
        RawTable raw = fixture.rawTable("raw_customers", "id INT", "status VARCHAR(20)", "op VARCHAR(1)",
                "updated_at TIMESTAMP", "file_date DATE");
        ModelSettings m = model(raw).deleteWhen("op = 'D'").build();
        raw.insert(1, "Active", "I", ts("2024-01-01 09:00"), date("2024-01-01"));
        fixture.run(m);
        raw.insert(1, "Active", "D", ts("2024-01-02 08:00"), date("2024-01-02"));
        fixture.run(m);
        raw.insert(1, "Gold", "U", ts("2024-01-01 23:00"), date("2024-01-03"));
        fixture.run(m);

        assertThat(fixture.versions(TARGET, "id", 1)).extracting(v -> v.get("status"), Version::validFrom,
                Version::validTo, Version::updatedAt).containsExactly(
                tuple("Active", ts("2024-01-01 09:00"), ts("2024-01-02 08:00"), ts("2024-01-01 09:00")),
                tuple("Gold", ts("2024-01-02 08:00"), null, ts("2024-01-01 23:00")));
        assertThat(fixture.errors(MODEL)).isEmpty();
    }

    // ================================================================== strategies

    /**
     * Under timestamp a newer updated_at is a change even when no tracked column changed (changed_attributes
     * {@code []}); a different value with the same or an older updated_at is no change and no error.
     */
    @Test
    void timestampStrategyVersionsOnNewerUpdatedAtOnly() {
        RawTable raw = customers(fixture);
        ModelSettings m = model(raw).strategy(Strategy.TIMESTAMP).build();
        raw.insert(1, "Active", "A", ts("2024-01-01 09:00"), date("2024-01-01"));
        fixture.run(m);
        raw.insert(1, "Active", "A", ts("2024-01-02 09:00"), date("2024-01-02"));
        fixture.run(m);
        raw.insert(1, "Gold", "A", ts("2024-01-02 09:00"), date("2024-01-03"));
        fixture.run(m);
        raw.insert(1, "Platinum", "A", ts("2024-01-01 00:00"), date("2024-01-04"));
        fixture.run(m);

        assertThat(fixture.versions(TARGET, "id", 1)).extracting(v -> v.get("status"), Version::validFrom,
                Version::validTo, Version::changeType, Version::changed).containsExactly(
                tuple("Active", ts("2024-01-01 09:00"), ts("2024-01-02 09:00"), "update", "[]"),
                tuple("Active", ts("2024-01-02 09:00"), null, "insert", null));
        assertThat(fixture.errors(MODEL)).as("an older updated_at under timestamp is unchanged, not a regression")
                .isEmpty();
    }

    /**
     * Under timestamp the tracked columns (for changed_attributes) are every source column but key, updated_at and
     * sequence_by: a newer row that changes only tier lists tier. (check_cols with strategy timestamp is
     * refused, see BadInputTests.)
     */
    @Test
    void timestampStrategyChangedAttributesTrackEveryColumn() {
        RawTable raw = customers(fixture);
        ModelSettings m = model(raw).strategy(Strategy.TIMESTAMP).build();
        raw.insert(1, "Active", "A", ts("2024-01-01 09:00"), date("2024-01-01"));
        fixture.run(m);
        raw.insert(1, "Active", "B", ts("2024-01-02 09:00"), date("2024-01-02"));
        fixture.run(m);

        assertThat(fixture.versions(TARGET, "id", 1)).extracting(Version::changed)
                .containsExactly("[\"tier\"]", null);
    }

    /** Under check, only check_cols are compared: a change in another column opens no version. */
    @Test
    void checkStrategyComparesOnlyCheckCols() {
        RawTable raw = customers(fixture);
        ModelSettings m = model(raw).checkCols("status").build();
        raw.insert(1, "Active", "A", ts("2024-01-01 09:00"), date("2024-01-01"));
        fixture.run(m);
        raw.insert(1, "Active", "B", ts("2024-01-02 09:00"), date("2024-01-02"));
        fixture.run(m);
        raw.insert(1, "Gold", "C", ts("2024-01-03 09:00"), date("2024-01-03"));
        fixture.run(m);

        assertThat(fixture.versions(TARGET, "id", 1)).extracting(v -> v.get("status"), v -> v.get("tier"),
                Version::validTo, Version::changed).containsExactly(
                tuple("Active", "A", ts("2024-01-03 09:00"), "[\"status\"]"),
                tuple("Gold", "C", null, null));
    }

    /** changed_attributes lists columns in the source's order, whatever the order of check_cols. */
    @Test
    void changedAttributesFollowTheSourceColumnOrder() {
        RawTable raw = customers(fixture);
        ModelSettings m = model(raw).checkCols("tier", "status").build();
        raw.insert(1, "Active", "A", ts("2024-01-01 09:00"), date("2024-01-01"));
        fixture.run(m);
        raw.insert(1, "Gold", "B", ts("2024-01-02 09:00"), date("2024-01-02"));
        fixture.run(m);

        assertThat(fixture.versions(TARGET, "id", 1)).extracting(Version::changed)
                .containsExactly("[\"status\",\"tier\"]", null);
    }

    /**
     * column_names renames the meta columns, the target may be schema-qualified and the metadata may live in another
     * schema; a late batch and deletion records work the same.
     */
    @Test
    void renamedMetaColumnsQualifiedTargetAndOwnMetadataSchemaWork() {
        RawTable raw = customers(fixture);
        java.util.Map<String, String> renamed = new java.util.LinkedHashMap<>();
        renamed.put("dbt_scd_id", "version_id");
        renamed.put("dbt_valid_from", "valid_from");
        renamed.put("dbt_valid_to", "valid_until");
        renamed.put("dbt_is_deleted", "is_deleted");
        renamed.put("changed_attributes", "changed_columns");
        ModelSettings m = model(raw).target("history.customers").columnNames(renamed).metadataSchema("etl_meta")
                .hardDeletes(HardDeletes.NEW_RECORD).build();
        IterativeSnapshot snap = fixture.engine(null);
        raw.insert(1, "Active", "A", ts("2024-01-01 09:00"), date("2024-01-01"));
        raw.insert(2, "Active", "A", ts("2024-01-01 09:00"), date("2024-01-01"));
        snap.run(m);
        raw.insert(1, "Gold", "A", ts("2024-01-03 09:00"), date("2024-01-03"));
        snap.run(m);
        raw.insert(1, "Premium", "A", ts("2024-01-02 09:00"), date("2024-01-02"));
        raw.insert(2, "Active", "A", ts("2024-01-01 09:00"), date("2024-01-02"));
        RunResult late = snap.run(m);

        assertThat(late.lateBatchFound()).isTrue();
        List<Version> h = fixture.history("history.customers", dev.itersnap.core.ColumnNames.withOverrides(renamed));
        assertThat(h).filteredOn(v -> v.get("id").equals(1L)).extracting(v -> v.get("status"), Version::validTo,
                Version::changed).containsExactlyInAnyOrder(
                tuple("Active", ts("2024-01-02 09:00"), "[\"status\"]"),
                tuple("Premium", ts("2024-01-03 09:00"), "[\"status\"]"),
                tuple("Gold", null, null));
        assertThat(h).filteredOn(v -> v.get("id").equals(2L)).extracting(Version::validTo, Version::deleted)
                .containsExactlyInAnyOrder(tuple(ts("2024-01-03 00:00"), false), tuple(null, true));
        assertThat(h).allSatisfy(v -> assertThat(v.scdId()).isNotNull());
        assertThat(fixture.ledger(MODEL, "etl_meta")).hasSize(3);
        assertThat(fixture.tableExists(SnapshotFixture.METADATA + ".itersnap_ledger")).isFalse();
    }

    /** NULLs compare as values under check: NULL -> value and value -> NULL are changes, NULL -> NULL is not. */
    @Test
    void checkStrategyTreatsNullAsAValue() {
        RawTable raw = customers(fixture);
        ModelSettings m = model(raw).build();
        raw.insert(1, "Active", null, ts("2024-01-01 09:00"), date("2024-01-01"));
        fixture.run(m);
        raw.insert(1, "Active", null, ts("2024-01-02 09:00"), date("2024-01-02"));
        fixture.run(m);
        raw.insert(1, "Active", "A", ts("2024-01-03 09:00"), date("2024-01-03"));
        fixture.run(m);
        raw.insert(1, "Active", null, ts("2024-01-04 09:00"), date("2024-01-04"));
        fixture.run(m);

        assertThat(fixture.versions(TARGET, "id", 1)).extracting(v -> v.get("tier"), Version::changed)
                .containsExactly(tuple(null, "[\"tier\"]"), tuple("A", "[\"tier\"]"), tuple(null, null));
    }

    // ================================================================== rows set aside

    /**
     * A key appearing twice in a batch: all its rows go to the error log (full record, reason, sequence, run id), the
     * key is untouched and, under a full-batch mode, not deleted; events and ledger count them.
     */
    @Test
    void duplicateKeysAreAllSetAsideAndTheKeyIsUntouched() {
        RawTable raw = customers(fixture);
        ModelSettings m = model(raw).hardDeletes(HardDeletes.INVALIDATE).build();
        RecordingListener events = new RecordingListener();
        IterativeSnapshot snap = fixture.engine(events);
        raw.insert(1, "Active", "A", ts("2024-01-01 09:00"), date("2024-01-01"));
        raw.insert(2, "Active", "A", ts("2024-01-01 09:00"), date("2024-01-01"));
        snap.run(m);
        raw.insert(1, "Gold", "A", ts("2024-01-02 09:00"), date("2024-01-02"));
        raw.insert(1, "Silver", "A", ts("2024-01-02 10:00"), date("2024-01-02"));
        raw.insert(2, "Active", "A", ts("2024-01-01 09:00"), date("2024-01-02"));
        RunResult r = snap.run(m);

        assertThat(fixture.versions(TARGET, "id", 1)).extracting(v -> v.get("status"), Version::validTo,
                Version::changeType).containsExactly(tuple("Active", null, "insert"));
        List<ErrorEntry> errors = fixture.errors(MODEL);
        assertThat(errors).extracting(ErrorEntry::reason, ErrorEntry::sequence, ErrorEntry::runId).containsExactly(
                tuple("duplicate_key", "2024-01-02", r.runId()), tuple("duplicate_key", "2024-01-02", r.runId()));
        assertThat(errors).anyMatch(e -> e.has("status", "\"Gold\"") && e.has("id", "1") && e.has("tier", "\"A\""));
        assertThat(errors).anyMatch(e -> e.has("status", "\"Silver\""));
        assertThat(fixture.ledgerEntry(MODEL, "2024-01-02")).isEqualTo(
                new Counts("2024-01-02", 3, 0, 0, 0, 2, false));
        assertThat(events.of(SnapshotEvent.DuplicateRecords.class)).singleElement()
                .satisfies(e -> {
                    assertThat(e.sequence()).isEqualTo(date("2024-01-02"));
                    assertThat(e.rows()).isEqualTo(2);
                });
        assertThat(events.of(SnapshotEvent.RowsRejected.class)).singleElement()
                .satisfies(e -> assertThat(e.reasons()).isEqualTo(Map.of("duplicate_key", 2L)));
        assertThat(r.rejected()).isEqualTo(2);
    }

    /**
     * NULL key, NULL updated_at and an updated_at earlier than the current version's start are set aside with their
     * reason (first matching reason in the priority order of semantics.md); the rest of the batch loads.
     */
    @Test
    void rowsTheBatchCannotApplyAreSetAsideWithTheirReason() {
        RawTable raw = customers(fixture);
        ModelSettings m = model(raw).build();
        RecordingListener events = new RecordingListener();
        IterativeSnapshot snap = fixture.engine(events);
        raw.insert(1, "Active", "A", ts("2024-01-05 09:00"), date("2024-01-05"));
        snap.run(m);
        raw.insert(null, "Gold", "A", ts("2024-01-06 09:00"), date("2024-01-06"));
        raw.insert(null, "Gold", "B", null, date("2024-01-06"));
        raw.insert(2, "Active", "A", null, date("2024-01-06"));
        raw.insert(1, "Gold", "A", ts("2024-01-03 09:00"), date("2024-01-06"));
        raw.insert(3, "Active", "A", ts("2024-01-06 09:00"), date("2024-01-06"));
        raw.insert(4, "Active", "A", null, date("2024-01-06"));
        raw.insert(4, "Gold", "A", ts("2024-01-06 09:00"), date("2024-01-06"));
        RunResult r = snap.run(m);

        assertThat(fixture.errors(MODEL)).extracting(ErrorEntry::reason).containsExactlyInAnyOrder("null_key",
                "null_key", "null_updated_at", "updated_at_regression", "duplicate_key", "duplicate_key");
        assertThat(fixture.errors(MODEL)).filteredOn(e -> e.reason().equals("updated_at_regression")).singleElement()
                .satisfies(e -> assertThat(e.has("status", "\"Gold\"")).isTrue());
        assertThat(fixture.versions(TARGET, "id", 1)).extracting(v -> v.get("status"), Version::validTo)
                .containsExactly(tuple("Active", null));
        assertThat(fixture.versions(TARGET, "id", 2)).isEmpty();
        assertThat(fixture.versions(TARGET, "id", 4)).isEmpty();
        assertThat(fixture.versions(TARGET, "id", 3)).hasSize(1);
        assertThat(fixture.ledgerEntry(MODEL, "2024-01-06")).extracting(Counts::sourceRows, Counts::inserted,
                Counts::updated, Counts::deleted, Counts::rejected).containsExactly(7L, 1L, 0L, 0L, 6L);
        assertThat(events.of(SnapshotEvent.RowsRejected.class)).singleElement().satisfies(e -> {
            assertThat(e.sequence()).isEqualTo(date("2024-01-06"));
            assertThat(e.reasons()).isEqualTo(Map.of("null_key", 2L, "null_updated_at", 1L,
                    "updated_at_regression", 1L, "duplicate_key", 2L));
        });
        assertThat(r.rejected()).isEqualTo(6);
    }

    /**
     * The error log holds the whole record: a set-aside row's timestamps keep their microseconds (a row differing
     * only there is another record), its sequence and key their exact values.
     */
    @Test
    public void setAsideRecordsKeepEveryValueExactly() {
        RawTable raw = customers(fixture);
        ModelSettings m = model(raw).build();
        raw.insert(1, "Active", "A", ts("2024-01-05 09:00:00.000001"), date("2024-01-05"));
        fixture.run(m);
        raw.insert(1, "Gold", "A", ts("2024-01-03 09:00:00.123456"), date("2024-01-06"));
        fixture.run(m);

        assertThat(fixture.errors(MODEL)).singleElement().satisfies(e -> {
            assertThat(e.reason()).isEqualTo("updated_at_regression");
            Object record = StrictJson.parse(e.record());
            assertThat(record).isInstanceOf(Map.class);
            Map<?, ?> values = (Map<?, ?>) record;
            Object updatedAt = values.entrySet().stream().filter(x -> x.getKey().toString()
                    .equalsIgnoreCase("updated_at")).map(Map.Entry::getValue).findFirst().orElse(null);
            assertThat(StateComparison.jsonValue(TestDatabase.ColumnType.TIMESTAMP, updatedAt))
                    .as("updated_at of the record %s", e.record()).isEqualTo("2024-01-03T09:00:00.123456");
        });
    }

    /**
     * Rows with a NULL sequence belong to no batch: logged once (reason null_sequence, no sequence) in the first run
     * that applies a batch after they appear, never again, and never applied.
     */
    @Test
    void nullSequenceRowsAreLoggedOnceAndNeverApplied() {
        RawTable raw = customers(fixture);
        ModelSettings m = model(raw).build();
        IterativeSnapshot snap = fixture.engine(null);
        raw.insert(1, "Active", "A", ts("2024-01-01 09:00"), date("2024-01-01"));
        raw.insert(7, "Ghost", "A", ts("2024-01-01 09:00"), null);
        RunResult first = snap.run(m);
        snap.run(m);
        raw.insert(1, "Gold", "A", ts("2024-01-03 09:00"), date("2024-01-03"));
        snap.run(m);
        raw.insert(1, "Premium", "A", ts("2024-01-02 09:00"), date("2024-01-02"));
        snap.run(m);

        assertThat(fixture.errors(MODEL)).extracting(ErrorEntry::reason, ErrorEntry::sequence, ErrorEntry::runId)
                .containsExactly(tuple("null_sequence", null, first.runId()));
        assertThat(fixture.errors(MODEL).get(0).has("status", "\"Ghost\"")).isTrue();
        assertThat(fixture.versions(TARGET, "id", 7)).isEmpty();
        assertThat(fixture.versions(TARGET, "id", 1)).hasSize(3);
    }

    /** Rows set aside for a NULL sequence fire RowsRejected like every other rejection ("nothing silent"). */
    @Test
    void nullSequenceRowsFireRowsRejected() {
        RawTable raw = customers(fixture);
        ModelSettings m = model(raw).build();
        RecordingListener events = new RecordingListener();
        raw.insert(1, "Active", "A", ts("2024-01-01 09:00"), date("2024-01-01"));
        raw.insert(7, "Ghost", "A", ts("2024-01-01 09:00"), null);
        fixture.engine(events).run(m);

        assertThat(fixture.errors(MODEL)).extracting(ErrorEntry::reason).containsExactly("null_sequence");
        assertThat(events.of(SnapshotEvent.RowsRejected.class)).as("an event for the rows set aside")
                .anySatisfy(e -> {
                    assertThat(e.reasons()).containsEntry("null_sequence", 1L);
                    assertThat(e.sequence()).isNull();
                });
    }

    /** A late batch replays the error log exactly: its own rejections are logged once, not once per replay. */
    @Test
    void replayingBatchesDoesNotDuplicateTheirErrorLog() {
        RawTable raw = customers(fixture);
        ModelSettings m = model(raw).build();
        IterativeSnapshot snap = fixture.engine(null);
        raw.insert(1, "Active", "A", ts("2024-01-01 09:00"), date("2024-01-01"));
        snap.run(m);
        raw.insert(2, "Gold", "A", ts("2024-01-03 09:00"), date("2024-01-03"));
        raw.insert(2, "Silver", "A", ts("2024-01-03 09:00"), date("2024-01-03"));
        RunResult third = snap.run(m);
        raw.insert(1, "Premium", "A", ts("2024-01-02 09:00"), date("2024-01-02"));
        RunResult late = snap.run(m);
        snap.replayFrom(m, date("2024-01-01"));

        assertThat(fixture.errors(MODEL)).extracting(ErrorEntry::reason, ErrorEntry::sequence)
                .containsExactly(tuple("duplicate_key", "2024-01-03"), tuple("duplicate_key", "2024-01-03"));
        assertThat(third.rejected()).isEqualTo(2);
        assertThat(late.batches()).extracting(BatchResult::rejected).containsExactly(0L, 2L);
    }
}
