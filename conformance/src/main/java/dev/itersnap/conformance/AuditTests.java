package dev.itersnap.conformance;

import dev.itersnap.core.AuditReport;
import dev.itersnap.core.AuditReport.Check;
import dev.itersnap.core.AuditReport.Finding;
import dev.itersnap.core.AuditSettings;
import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.HardDeletes;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.core.ModelSettings;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static dev.itersnap.conformance.SnapshotFixture.date;
import static dev.itersnap.conformance.SnapshotFixture.ts;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The audit ({@code IterativeSnapshot.audit}): a history the engine wrote, late batch and deletions included, audits
 * clean, also against its raw batches; the same history damaged by hand (a version left open, a validity stretched
 * over the next version's, an updated_at moved back, a version removed) is reported by the check that covers it,
 * with the key, the times and (for a removed version) the batch named; and the audit writes nothing.
 */
public abstract class AuditTests extends ConformanceTestBase {

    /**
     * Keys 1 to 4 over four daily files, day 2 delivered after day 3; key 3 is absent on day 3 (deleted by its
     * absence, {@code hard_deletes: invalidate}) and back on day 4.
     */
    private ModelSettings historyWithALateBatch(ModelSettings.Builder model, RawTable raw) {
        for (int id = 1; id <= 4; id++) {
            raw.insert(id, "Active", "basic", ts("2024-01-01 0" + id + ":00"), date("2024-01-01"));
        }
        for (int id = 1; id <= 4; id++) {
            if (id != 3) {
                raw.insert(id, "Gold", "pro", ts("2024-01-03 0" + id + ":00"), date("2024-01-03"));
            }
        }
        ModelSettings m = model.hardDeletes(HardDeletes.INVALIDATE).build();
        fixture.run(m);
        for (int id = 1; id <= 4; id++) {
            raw.insert(id, "Silver", "plus", ts("2024-01-02 0" + id + ":00"), date("2024-01-02"));
            raw.insert(id, "Platinum", "max", ts("2024-01-04 0" + id + ":00"), date("2024-01-04"));
        }
        assertThat(fixture.run(m).lateBatchFound()).isTrue();
        return m;
    }

    private AuditReport audit(AuditSettings settings) {
        return fixture.engine(null).audit(settings);
    }

    private static Finding finding(AuditReport report, Check check) {
        return report.finding(check).orElseThrow(() -> new AssertionError(check + " did not run: " + report));
    }

    /** The report's counts by check label, for messages that show every count at once. */
    private static Map<String, Long> counts(AuditReport report) {
        java.util.Map<String, Long> m = new java.util.LinkedHashMap<>();
        report.findings().forEach(f -> m.put(f.check().label(), f.count()));
        return m;
    }

    @Test
    void aHistoryTheEngineWroteAuditsCleanAlsoAgainstItsRawBatches() {
        RawTable raw = customers(fixture);
        ModelSettings m = historyWithALateBatch(model(raw), raw);

        AuditReport report = audit(AuditSettings.of(m));

        assertThat(report.clean()).as(report.toString()).isTrue();
        assertThat(report.problems()).isEmpty();
        assertThat(report.findings()).extracting(Finding::check).containsExactly(Check.OUT_OF_ORDER, Check.OVERLAP,
                Check.GAP, Check.MULTIPLE_CURRENT, Check.INVERTED, Check.BOOKKEEPING, Check.CLOSED_WITHOUT_SUCCESSOR);
        assertThat(report.finding(Check.MISSING_VERSIONS)).isEmpty();

        AuditReport withSource = fixture.engine(null).audit(AuditSettings.builder(TARGET).uniqueKey("id")
                .source(raw.selectAll(), "file_date").build());
        assertThat(counts(withSource)).containsEntry("missing_versions", 0L);
        assertThat(withSource.clean()).as(counts(withSource).toString()).isTrue();
        AuditReport ofModel = fixture.engine(null).audit(m);
        assertThat(ofModel.findings()).as("audit(model): the same, and the ledger's counts")
                .isEqualTo(java.util.stream.Stream.concat(report.findings().stream(), ofModel.finding(
                        Check.LEDGER_COUNTS).stream()).toList());
        assertThat(ofModel.finding(Check.LEDGER_COUNTS)).hasValueSatisfying(f -> assertThat(f.count()).isZero());
    }

    /**
     * The history of the clean case damaged four ways, one key each: every damage is found by its check, with the
     * key and the times of the versions concerned in the examples, and a version removed is named with the batch
     * that should have opened it.
     */
    @Test
    void damagedHistoryIsReportedWithTheKeyAndBatchNamed() {
        RawTable raw = customers(fixture);
        ModelSettings m = historyWithALateBatch(model(raw), raw);
        // key 1: its day-2 version left open, as a tool that forgot to close it would
        fixture.execute("UPDATE " + TARGET + " SET dbt_valid_to = NULL WHERE id = 1 AND dbt_valid_from = ?",
                ts("2024-01-02 01:00"));
        // key 2: its day-1 version stretched past the start of day 2's
        fixture.execute("UPDATE " + TARGET + " SET dbt_valid_to = ? WHERE id = 2 AND dbt_valid_from = ?",
                ts("2024-01-02 12:00"), ts("2024-01-01 02:00"));
        // key 4: day 3's version carries an updated_at older than day 2's, the mark of a batch applied out of order
        fixture.execute("UPDATE " + TARGET + " SET dbt_updated_at = ?, updated_at = ? WHERE id = 4 AND "
                + "dbt_valid_from = ?", ts("2023-12-31 00:00"), ts("2023-12-31 00:00"), ts("2024-01-03 04:00"));
        // key 3: day 4's version (its return) removed
        fixture.execute("DELETE FROM " + TARGET + " WHERE id = 3 AND dbt_valid_from = ?", ts("2024-01-04 03:00"));

        AuditReport report = fixture.engine(null).audit(AuditSettings.builder(TARGET).uniqueKey("id")
                .source(raw.selectAll(), "file_date").build());

        assertThat(report.clean()).isFalse();
        assertThat(counts(report)).as("counts").containsExactly(Map.entry("out_of_order", 1L),
                Map.entry("overlap", 2L), Map.entry("gap", 0L), Map.entry("multiple_current", 1L),
                Map.entry("inverted", 0L), Map.entry("missing_versions", 2L), Map.entry("bookkeeping", 1L),
                Map.entry("closed_without_successor", 0L));
        assertThat(report.problemCount()).isEqualTo(7);

        Finding current = finding(report, Check.MULTIPLE_CURRENT);
        assertThat(current.exampleRows()).containsExactly(Map.of("id", "1", "current_versions", "2"));

        Finding overlap = finding(report, Check.OVERLAP);
        assertThat(overlap.columns()).containsExactly("id", "valid_from", "valid_to", "next_valid_from");
        assertThat(overlap.exampleRows()).extracting(r -> r.get("id")).containsExactlyInAnyOrder("1", "2");
        Map<String, String> stretched = overlap.exampleRows().stream().filter(r -> r.get("id").equals("2"))
                .findFirst().orElseThrow();
        assertThat(stretched.get("valid_from")).startsWith("2024-01-01 02:00");
        assertThat(stretched.get("valid_to")).startsWith("2024-01-02 12:00");
        assertThat(stretched.get("next_valid_from")).startsWith("2024-01-02 02:00");

        Finding outOfOrder = finding(report, Check.OUT_OF_ORDER);
        assertThat(outOfOrder.exampleRows()).hasSize(1);
        Map<String, String> late = outOfOrder.exampleRows().get(0);
        assertThat(late.get("id")).isEqualTo("4");
        assertThat(late.get("updated_at")).startsWith("2023-12-31 00:00");
        assertThat(late.get("previous_updated_at")).startsWith("2024-01-02 04:00");

        // the removed version, and key 4's day-3 row whose updated_at no version carries now
        Finding missing = finding(report, Check.MISSING_VERSIONS);
        assertThat(missing.columns()).containsExactly("id", "updated_at", "first_batch");
        assertThat(missing.exampleRows()).extracting(r -> r.get("id") + " " + r.get("first_batch"))
                .containsExactly("3 2024-01-04", "4 2024-01-03");

        // key 1's day-2 version: open, though the batch recorded as closing it did (dbt_closed_seq)
        Finding bookkeeping = finding(report, Check.BOOKKEEPING);
        assertThat(bookkeeping.columns()).containsExactly("id", "valid_from", "valid_to", "opened_seq", "closed_seq");
        assertThat(bookkeeping.exampleRows()).singleElement().satisfies(r -> {
            assertThat(r.get("id")).isEqualTo("1");
            assertThat(r.get("valid_from")).startsWith("2024-01-02 01:00");
            assertThat(r.get("valid_to")).isEmpty();
            assertThat(r.get("closed_seq")).isNotEmpty();
        });
    }

    /**
     * A model whose current versions carry {@code valid_to_current} audits clean under its own settings; a closed
     * version given that value is a second current version of its key.
     */
    @Test
    void validToCurrentVersionsAreTheCurrentOnes() {
        RawTable raw = customers(fixture);
        ModelSettings m = historyWithALateBatch(model(raw).validToCurrent("9999-12-31"), raw);
        assertThat(fixture.query("SELECT COUNT(*) AS n FROM " + TARGET + " WHERE dbt_valid_to IS NULL"))
                .as("no NULL valid_to").containsExactly(Map.of("n", 0L));
        assertThat(audit(AuditSettings.of(m)).clean()).as(counts(audit(AuditSettings.of(m))).toString()).isTrue();

        fixture.execute("UPDATE " + TARGET + " SET dbt_valid_to = ? WHERE id = 2 AND dbt_valid_from = ?",
                ts("9999-12-31 00:00"), ts("2024-01-01 02:00"));

        AuditReport report = audit(AuditSettings.of(m));
        assertThat(finding(report, Check.MULTIPLE_CURRENT).exampleRows())
                .containsExactly(Map.of("id", "2", "current_versions", "2"));
        assertThat(finding(report, Check.MULTIPLE_CURRENT).description()).contains("9999-12-31");
    }

    /**
     * A table that is not there, a column it lacks, a source that does not run: an error naming the table or the
     * setting, and nothing created (the audit of a table no model owns leaves no metadata behind).
     */
    @Test
    void wrongSettingsAreNamedAndNothingIsWritten() {
        fixture.execute("CREATE TABLE dbt_snap (id INT, dbt_updated_at " + type("TIMESTAMP") + ", dbt_valid_from "
                + type("TIMESTAMP") + ", dbt_valid_to " + type("TIMESTAMP") + ")");
        fixture.execute("INSERT INTO dbt_snap VALUES (1, ?, ?, NULL)", ts("2024-01-01 00:00"), ts("2024-01-01 00:00"));
        assertThat(audit(AuditSettings.builder("dbt_snap").uniqueKey("ID").build()).clean()).isTrue();

        assertThatThrownBy(() -> audit(AuditSettings.builder("no_such_table").uniqueKey("id").build()))
                .isInstanceOfSatisfying(ItersnapException.class, e -> assertThat(e.code())
                        .isEqualTo(ErrorCode.INVALID_SETTING))
                .hasMessageContaining("cannot read table no_such_table");
        assertThatThrownBy(() -> audit(AuditSettings.builder("dbt_snap").uniqueKey("id").validTo("valid_until")
                .build())).isInstanceOf(ItersnapException.class)
                .hasMessageContaining("setting 'valid_to' names column 'valid_until'");
        assertThatThrownBy(() -> audit(AuditSettings.builder("dbt_snap").uniqueKey("id")
                .source("SELECT * FROM no_such_raw", "file_date").build()))
                .isInstanceOfSatisfying(ItersnapException.class, e -> assertThat(e.code())
                        .isEqualTo(ErrorCode.INVALID_SOURCE))
                .hasMessageContaining("setting 'source'");
        assertThatThrownBy(() -> AuditSettings.builder("dbt_snap").uniqueKey("id").validToCurrent("x'; DROP TABLE t")
                .build()).isInstanceOf(ItersnapException.class).hasMessageContaining("valid_to_current");
        assertThat(fixture.tableExists(SnapshotFixture.METADATA + ".itersnap_runs")).as("no metadata created")
                .isFalse();
        assertThat(fixture.query("SELECT COUNT(*) AS n FROM dbt_snap")).containsExactly(Map.of("n", 1L));
    }

    /**
     * A finding carries the full count and at most the examples asked for (every key here has more than one current
     * version); a report is a value: its lists cannot be changed by the caller.
     */
    @Test
    void examplesAreCappedAndTheReportIsImmutable() {
        RawTable raw = customers(fixture);
        ModelSettings m = historyWithALateBatch(model(raw), raw);
        fixture.execute("UPDATE " + TARGET + " SET dbt_valid_to = NULL");
        AuditReport report = audit(AuditSettings.builder(TARGET).uniqueKey("id").examples(2).build());
        assertThat(finding(report, Check.MULTIPLE_CURRENT).count()).isEqualTo(4);
        assertThat(finding(report, Check.MULTIPLE_CURRENT).exampleRows()).extracting(r -> r.get("id"))
                .containsExactly("1", "2");
        assertThat(finding(audit(AuditSettings.of(m)), Check.MULTIPLE_CURRENT).examples()).as("all four, under the "
                + "default of " + AuditSettings.DEFAULT_EXAMPLES).hasSize(4);
        List<Finding> findings = report.findings();
        assertThatThrownBy(() -> findings.add(findings.get(0))).isInstanceOf(UnsupportedOperationException.class);
        Finding f = finding(report, Check.MULTIPLE_CURRENT);
        assertThatThrownBy(() -> f.examples().get(0).set(0, "x")).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> f.exampleRows().get(0).put("id", "x"))
                .isInstanceOf(UnsupportedOperationException.class);
    }
}
