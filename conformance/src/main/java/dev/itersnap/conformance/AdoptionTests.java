package dev.itersnap.conformance;

import dev.itersnap.core.AdoptionPlan;
import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.HardDeletes;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.RunResult;
import dev.itersnap.core.SequenceText;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

import static dev.itersnap.conformance.SnapshotFixture.date;
import static dev.itersnap.conformance.SnapshotFixture.ts;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Taking over an existing SCD Type 2 table ({@code IterativeSnapshot.adopt}): a table written the way dbt writes
 * snapshots (dbt's column names and values: {@code dbt_scd_id} an MD5 of key and updated_at, {@code dbt_updated_at},
 * {@code dbt_valid_from}, {@code dbt_valid_to}), damaged by a late file that dbt applied out of order, becomes the
 * model's history through a sequence: its versions are kept as they are, later batches are applied over it, a late
 * batch after the adoption point replays without touching the adopted versions, and a batch at or before it (late or
 * restated) is refused with {@code LATE_BEFORE_ADOPTION} before anything is written.
 */
public abstract class AdoptionTests extends ConformanceTestBase {
    private static final LocalDate D1 = date("2024-01-01");

    private static LocalDate day(int d) {
        return D1.plusDays(d - 1);
    }

    private static LocalDateTime at(int d) {
        return day(d).atTime(9, 0);
    }

    private static final String[] STATUS = {null, "A", "B", "C", "D", "E", "F", "G", "H"};

    /** Day d's file: key 1 changes every day (status A, B, C...), key 2 never changes. */
    private static void file(RawTable raw, int d) {
        raw.insert(1, STATUS[d], "gold", at(d), day(d));
        raw.insert(2, "Active", "silver", ts("2023-12-31 09:00"), day(d));
    }

    private static String scdId(int id, LocalDateTime updatedAt) throws Exception {
        byte[] md5 = MessageDigest.getInstance("MD5").digest((id + "|" + updatedAt.toString().replace('T', ' '))
                .getBytes(StandardCharsets.UTF_8));
        return HexFormat.of().formatHex(md5);
    }

    /**
     * The snapshot dbt wrote (check strategy with {@code updated_at}, so validity comes from the rows) after it ran
     * on files 1, 2 and 4, then on file 3, late: file 3's row closed file 4's version at an earlier time (inverted)
     * and opened a version that overlaps it.
     */
    private void dbtSnapshot() throws Exception {
        fixture.execute("CREATE TABLE " + TARGET + " (id " + type("INT") + ", status " + type("VARCHAR(20)")
                + ", tier " + type("VARCHAR(20)") + ", updated_at " + type("TIMESTAMP") + ", file_date "
                + type("DATE") + ", dbt_scd_id " + type("VARCHAR(32)") + ", dbt_updated_at " + type("TIMESTAMP")
                + ", dbt_valid_from " + type("TIMESTAMP") + ", dbt_valid_to " + type("TIMESTAMP") + ")");
        version(1, 1, at(2));
        version(1, 2, at(4));
        version(1, 4, at(3));
        version(1, 3, null);
        fixture.execute("INSERT INTO " + TARGET + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", 2, "Active", "silver",
                ts("2023-12-31 09:00"), day(1), scdId(2, ts("2023-12-31 09:00")), ts("2023-12-31 09:00"),
                ts("2023-12-31 09:00"), null);
    }

    private void version(int id, int d, LocalDateTime validTo) throws Exception {
        fixture.execute("INSERT INTO " + TARGET + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", id, STATUS[d], "gold", at(d),
                day(d), scdId(id, at(d)), at(d), at(d), validTo);
    }

    /** The adopted table's versions as dbt wrote them: key, status, scd id, validity. */
    private List<Map<String, Object>> dbtVersions() {
        return fixture.query("SELECT id, status, dbt_scd_id, dbt_updated_at, dbt_valid_from, dbt_valid_to FROM "
                + TARGET + " WHERE dbt_opened_seq = ? ORDER BY id, dbt_valid_from, dbt_scd_id", day(4));
    }

    private RawTable adopted(int... files) throws Exception {
        dbtSnapshot();
        RawTable raw = customers(fixture);
        for (int d : files) {
            file(raw, d);
        }
        return raw;
    }

    private RunResult adopt(RawTable raw, Object through) {
        return fixture.engine(null).adopt(model(raw).build(), through);
    }

    private static void assertLateBeforeAdoption(Throwable e, String... mentions) {
        assertThat(e).isInstanceOfSatisfying(ItersnapException.class, ie -> {
            assertThat(ie.code()).as(ie.getMessage()).isEqualTo(ErrorCode.LATE_BEFORE_ADOPTION);
            assertThat(ie.getMessage()).contains("'" + MODEL + "'").contains("adopted through 2024-01-04")
                    .contains("Nothing was written").contains("full-refresh --yes");
            for (String m : mentions) {
                assertThat(ie.getMessage()).contains(m);
            }
        });
    }

    /**
     * The adopted table keeps every version as dbt wrote it, with the bookkeeping filled in (opened at the adoption
     * point, closed there when closed, change types from the timeline); the ledger declares the source's batches up
     * to the point applied; the model owns the table, so the next runs apply new batches over it.
     */
    @Test
    void adoptedSnapshotKeepsItsVersionsAndTakesNewBatches() throws Exception {
        RawTable raw = adopted(1, 2, 3, 4);
        List<Map<String, Object>> before = fixture.query("SELECT id, status, dbt_scd_id, dbt_updated_at, "
                + "dbt_valid_from, dbt_valid_to FROM " + TARGET + " ORDER BY id, dbt_valid_from, dbt_scd_id");

        RunResult adoption = adopt(raw, "2024-01-04");

        assertThat(adoption.batches()).hasSize(4);
        assertThat(dbtVersions()).as("every version kept, opened at the adoption point").isEqualTo(before);
        assertThat(fixture.query("SELECT COUNT(*) AS n FROM " + TARGET + " WHERE dbt_closed_seq IS NULL"))
                .containsExactly(Map.of("n", 2L));
        assertThat(fixture.query("SELECT status, dbt_change_type FROM " + TARGET + " WHERE id = 1 ORDER BY "
                + "dbt_valid_from")).extracting(r -> r.get("status") + ":" + r.get("dbt_change_type"))
                .containsExactly("A:update", "B:update", "C:insert", "D:update");
        assertThat(fixture.ledger(MODEL)).extracting(SnapshotFixture.LedgerEntry::sequence)
                .containsExactly("2024-01-01", "2024-01-02", "2024-01-03", "2024-01-04");
        assertThat(fixture.runs(MODEL).get(0).operation()).isEqualTo("adopt");
        assertThat(fixture.engine(null).inspect(model(raw).build()).adoption()).as("the read API's adoption point")
                .contains(new dev.itersnap.core.Inspection.Adoption(adoption.runId(), "2024-01-04"));

        file(raw, 5);
        RunResult next = fixture.run(model(raw).build());

        assertThat(next.batches()).hasSize(1);
        assertThat(dbtVersions()).as("adopted versions closed, never rewritten")
                .hasSize(before.size());
        assertThat(fixture.versions(TARGET, "id", 1)).extracting(v -> v.get("status") + " " + v.validTo())
                .containsExactly("A 2024-01-02T09:00", "B 2024-01-04T09:00", "C 2024-01-05T09:00",
                        "D 2024-01-03T09:00", "E null");
        assertThat(fixture.versions(TARGET, "id", 2)).singleElement()
                .satisfies(v -> assertThat(v.current()).isTrue());
        assertThat(fixture.run(model(raw).build()).batches()).as("nothing new: a no-op").isEmpty();
    }

    /**
     * A late batch after the adoption point replays from itself: the adopted versions (below the point) are never
     * rolled back, and the result is that of the batches after the point applied in order over the adopted table.
     */
    @Test
    void lateBatchAfterTheAdoptionPointReplaysAboveIt() throws Exception {
        RawTable raw = adopted(1, 2, 3, 4);
        adopt(raw, date("2024-01-04"));
        file(raw, 5);
        file(raw, 7);
        fixture.run(model(raw).build());
        file(raw, 6);

        RunResult late = fixture.run(model(raw).build());

        assertThat(late.lateBatchFound()).isTrue();
        assertThat(fixture.versions(TARGET, "id", 1)).extracting(v -> v.get("status") + " " + v.validTo())
                .containsExactly("A 2024-01-02T09:00", "B 2024-01-04T09:00", "C 2024-01-05T09:00",
                        "D 2024-01-03T09:00", "E 2024-01-06T09:00", "F 2024-01-07T09:00", "G null");
        assertThat(dbtVersions()).hasSize(5);
    }

    /**
     * A batch at or before the adoption point that reaches the source after the adoption is refused, naming the
     * batch, the point and the ways forward; nothing is written, and the batches after it still wait.
     */
    @Test
    void lateBatchAtOrBeforeTheAdoptionPointIsRefused() throws Exception {
        RawTable raw = adopted(1, 2, 4);
        adopt(raw, "2024-01-04");
        List<Map<String, Object>> adoptedVersions = dbtVersions();
        file(raw, 3);
        file(raw, 5);

        assertThatThrownBy(() -> fixture.run(model(raw).build()))
                .satisfies(e -> assertLateBeforeAdoption(e, "batch 2024-01-03 arrived"));
        assertThat(dbtVersions()).isEqualTo(adoptedVersions);
        assertThat(fixture.ledger(MODEL)).hasSize(3);

        raw.deleteWhere("file_date", day(3));
        assertThat(fixture.run(model(raw).build()).batches()).as("with the batch gone, runs go on").hasSize(1);
    }

    /**
     * The adoption point holds whatever became of the adopting run's row in the run log (a rebuild whose apply failed
     * after the adoption was recorded is logged as failed): a late batch below it is still refused.
     */
    @Test
    void adoptionPointHoldsWhenTheAdoptingRunIsLoggedAsFailed() throws Exception {
        RawTable raw = adopted(1, 2, 4);
        adopt(raw, "2024-01-04");
        fixture.execute("UPDATE " + SnapshotFixture.METADATA + ".itersnap_runs SET status = 'failed' WHERE model = ? "
                + "AND operation = 'adopt'", MODEL);
        List<Map<String, Object>> adoptedVersions = dbtVersions();
        file(raw, 3);

        assertThatThrownBy(() -> fixture.run(model(raw).build()))
                .satisfies(e -> assertLateBeforeAdoption(e, "batch 2024-01-03 arrived"));
        assertThat(dbtVersions()).isEqualTo(adoptedVersions);
    }

    /** dbt writes its deletion flag as text ('True' / 'False'): refused, naming the column, before anything is written. */
    @Test
    void textDeletionFlagIsRefusedBeforeAnythingIsWritten() throws Exception {
        RawTable raw = adopted(1, 2, 4);
        fixture.execute("ALTER TABLE " + TARGET + " ADD COLUMN dbt_is_deleted " + type("VARCHAR(5)"));
        List<Map<String, Object>> before = fixture.query("SELECT * FROM " + TARGET);

        assertThatThrownBy(() -> fixture.engine(null).adopt(model(raw).hardDeletes(HardDeletes.NEW_RECORD).build(),
                "2024-01-04")).isInstanceOfSatisfying(ItersnapException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.INVALID_SETTING);
                    assertThat(e.getMessage()).containsIgnoringCase("dbt_is_deleted").contains("BOOLEAN")
                            .contains("Nothing was written");
                });
        assertThat(fixture.query("SELECT * FROM " + TARGET)).isEqualTo(before);
        assertThat(fixture.ledger(MODEL)).isEmpty();
    }

    /** An adopted batch whose rows change in the source (restated) would replay into the adopted range: refused. */
    @Test
    void restatedAdoptedBatchIsRefused() throws Exception {
        RawTable raw = adopted(1, 2, 3, 4);
        adopt(raw, "2024-01-04");
        raw.update("tier", "platinum", "file_date", day(2));

        // found when a run compares the batch: every run here (an adopted batch is compared like any other: by the
        // lookback, the sweep, or a full check)
        assertThatThrownBy(() -> fixture.run(model(raw).restatementLookback(ModelSettings.MAX_RESTATEMENT_BATCHES)
                .build()))
                .satisfies(e -> assertLateBeforeAdoption(e, "batch 2024-01-02 changed in the source"));
    }

    /** A deliberate replay from a batch at or before the adoption point is refused too. */
    @Test
    void replayIntoTheAdoptedRangeIsRefused() throws Exception {
        RawTable raw = adopted(1, 2, 3, 4);
        adopt(raw, "2024-01-04");

        assertThatThrownBy(() -> fixture.engine(null).replayFrom(model(raw).build(), "2024-01-02"))
                .satisfies(e -> assertLateBeforeAdoption(e, "would replay from 2024-01-02"));
        assertThat(fixture.ledger(MODEL)).hasSize(4);
    }

    /**
     * The adoption point need not be a batch of the source (here a day between two of its files); a batch at that
     * sequence arriving later is refused like any other below the point (its rows change the empty batch the ledger
     * records there).
     */
    @Test
    void batchAtAnAdoptionPointTheSourceLackedIsRefused() throws Exception {
        RawTable raw = adopted(1, 2, 4);
        AdoptionPlan plan = fixture.engine(null).planAdopt(model(raw).build(), "2024-01-03");
        adopt(raw, "2024-01-03");
        assertThat(fixture.ledger(MODEL)).extracting(SnapshotFixture.LedgerEntry::sequence)
                .containsExactly("2024-01-01", "2024-01-02", "2024-01-03");
        assertThat(plan.batches()).as("the plan made before names what the adoption declared")
                .extracting(SequenceText::of).containsExactly("2024-01-01", "2024-01-02", "2024-01-03");
        assertThat(plan.point()).isEqualTo(date("2024-01-03"));
        file(raw, 3);

        assertThatThrownBy(() -> fixture.run(model(raw).build()))
                .isInstanceOfSatisfying(ItersnapException.class, e -> {
                    assertThat(e.code()).as(e.getMessage()).isEqualTo(ErrorCode.LATE_BEFORE_ADOPTION);
                    assertThat(e.getMessage()).contains("batch 2024-01-03", "adopted through 2024-01-03");
                });
    }

    /**
     * A point after the newest batch the source holds would make every real batch up to it "below the adoption" and
     * refused: the adoption is refused instead, naming the point and the newest batch, before anything is written.
     */
    @Test
    void pointAfterTheNewestBatchOfTheSourceIsRefused() throws Exception {
        RawTable raw = adopted(1, 2, 3, 4);
        List<Map<String, Object>> before = fixture.query("SELECT * FROM " + TARGET);

        for (Object point : new Object[] {"2030-01-01", "2024-01-05"}) {
            assertThatThrownBy(() -> adopt(raw, point)).isInstanceOfSatisfying(ItersnapException.class, e -> {
                assertThat(e.code()).as(e.getMessage()).isEqualTo(ErrorCode.INVALID_SEQUENCE);
                assertThat(e.getMessage()).contains("'" + MODEL + "'", "through " + point,
                        "after 2024-01-04, the newest batch the source holds", "Nothing was written");
            });
        }
        assertThat(fixture.query("SELECT * FROM " + TARGET)).as("the table as it was").isEqualTo(before);
        assertThat(fixture.ledger(MODEL)).isEmpty();

        assertThat(adopt(raw, "2024-01-04").batches()).as("the newest batch itself is a point").hasSize(4);
    }

    /**
     * A point before the table's first version (the table's versions start on Jan 1 at 09:00 for key 1, Dec 31 for
     * key 2) would make the next run apply over the table batches whose versions it already holds: refused, naming the
     * point and the first version's start, before anything is written. A date point covers its whole day.
     */
    @Test
    void pointBeforeTheTablesFirstVersionIsRefused() throws Exception {
        dbtSnapshot();
        fixture.execute("DELETE FROM " + TARGET + " WHERE id = 2"); // key 1's versions only: the first starts Jan 1
        RawTable raw = customers(fixture);
        raw.insert(1, "Z", "gold", ts("2023-12-30 09:00"), date("2023-12-30"));
        for (int d = 1; d <= 4; d++) {
            file(raw, d);
        }
        List<Map<String, Object>> before = fixture.query("SELECT * FROM " + TARGET);

        assertThatThrownBy(() -> adopt(raw, "2023-12-30")).isInstanceOfSatisfying(ItersnapException.class, e -> {
            assertThat(e.code()).as(e.getMessage()).isEqualTo(ErrorCode.INVALID_SEQUENCE);
            assertThat(e.getMessage()).contains("'" + MODEL + "'", "through 2023-12-30",
                    "before the table's first version", "2024-01-01 09:00", "Nothing was written");
        });
        assertThat(fixture.query("SELECT * FROM " + TARGET)).as("the table as it was").isEqualTo(before);
        assertThat(fixture.ledger(MODEL)).isEmpty();

        assertThat(adopt(raw, "2024-01-01").batches()).as("the day the first version starts in is a point")
                .hasSize(2);
    }

    /**
     * The repair path: the source holds files 3 to 5 only (1 and 2 aged out). Rebuilding from file 3 keeps the
     * versions that closed before it as dbt wrote them, reopens each key's version current then, removes the rest and
     * applies files 3 to 5 in order: key 1's damage (file 3 applied after file 4) is gone, and the history is the one
     * an in-order run gives from file 3 on. A file before 3 arriving later is refused.
     */
    @Test
    void rebuildFromTheOldestRetainedBatchRepairsTheRetainedRange() throws Exception {
        RawTable raw = adopted(3, 4, 5);
        AdoptionPlan plan = fixture.engine(null).planAdoptRebuildingFrom(model(raw).build(), "2024-01-03");
        assertThatThrownBy(() -> fixture.engine(null).planAdoptRebuildingFrom(model(raw).build(), "2024-13-01"))
                .isInstanceOfSatisfying(ItersnapException.class, e -> assertThat(e.code()).as(e.getMessage())
                        .isEqualTo(ErrorCode.INVALID_SEQUENCE));

        RunResult rebuilt = fixture.engine(null).adoptRebuildingFrom(model(raw).build(), "2024-01-03");

        assertThat(rebuilt.batches()).extracting(b -> b.sequenceText())
                .containsExactly("2024-01-03", "2024-01-04", "2024-01-05");
        assertThat(plan.batches()).as("the plan made before names the batches the rebuild applied")
                .extracting(SequenceText::of).containsExactly("2024-01-03", "2024-01-04", "2024-01-05");
        assertThat(fixture.versions(TARGET, "id", 1)).extracting(v -> v.get("status") + " " + v.validFrom() + " "
                + v.validTo()).containsExactly(
                "A 2024-01-01T09:00 2024-01-02T09:00",
                "B 2024-01-02T09:00 2024-01-03T09:00",
                "C 2024-01-03T09:00 2024-01-04T09:00",
                "D 2024-01-04T09:00 2024-01-05T09:00",
                "E 2024-01-05T09:00 null");
        assertThat(fixture.versions(TARGET, "id", 1).get(0).scdId()).as("a kept version keeps dbt's id")
                .isEqualTo(scdId(1, at(1)));
        assertThat(fixture.versions(TARGET, "id", 2)).singleElement().satisfies(v -> assertThat(v.current()).isTrue());
        assertThat(fixture.timelineProblems(TARGET, "id")).isEmpty();
        assertThat(fixture.ledger(MODEL)).extracting(SnapshotFixture.LedgerEntry::sequence)
                .containsExactlyInAnyOrder("2024-01-02", "2024-01-03", "2024-01-04", "2024-01-05");
        assertThat(fixture.run(model(raw).build()).batches()).as("nothing new: a no-op").isEmpty();

        file(raw, 2);
        assertThatThrownBy(() -> fixture.engine(null).runWithFullCheck(model(raw).build()))
                .isInstanceOfSatisfying(ItersnapException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.LATE_BEFORE_ADOPTION));
    }

    /** A table that is already an itersnap history, or a model that already has one, is not adopted. */
    @Test
    void ownedTableIsNotAdopted() {
        RawTable raw = customers(fixture);
        file(raw, 1);
        ModelSettings model = model(raw).build();
        fixture.run(model);

        assertThatThrownBy(() -> fixture.engine(null).adopt(model, "2024-01-01"))
                .isInstanceOfSatisfying(ItersnapException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.TARGET_NOT_OWNED));
        assertThat(fixture.ledger(MODEL)).hasSize(1);
    }
}
