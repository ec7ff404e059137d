package dev.itersnap.cli;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.sql.PreparedStatement;
import java.time.LocalDateTime;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code itersnap audit} on file-based H2: a clean itersnap-built history passes; dbt-snapshot-shaped tables
 * corrupted in each of the ways it checks are caught, each by its own check.
 */
class AuditCommandTest {
    private static final String[] CHECKS = {"out_of_order", "overlap", "gap", "multiple_current", "inverted"};

    @TempDir
    Path dir;
    private H2Model db;

    @BeforeEach
    void setUp() throws Exception {
        db = new H2Model(dir);
        db.execute("CREATE TABLE snap (id INT, name VARCHAR(20), dbt_updated_at TIMESTAMP, dbt_valid_from TIMESTAMP,"
                + " dbt_valid_to TIMESTAMP)");
    }

    /** A version: times as day-of-January numbers, 0 for NULL valid_to. */
    private void version(int id, String name, int updated, int from, int to) throws Exception {
        try (var c = db.connect(); PreparedStatement ps = c.prepareStatement("INSERT INTO snap VALUES (?, ?, ?, ?, ?)")) {
            ps.setInt(1, id);
            ps.setString(2, name);
            ps.setObject(3, day(updated));
            ps.setObject(4, day(from));
            ps.setObject(5, to == 0 ? null : day(to));
            ps.executeUpdate();
        }
    }

    private static LocalDateTime day(int d) {
        return LocalDateTime.of(2024, 1, d, 0, 0);
    }

    /** A clean two-version key, so that every corrupted table also holds good rows. */
    private void cleanKey() throws Exception {
        version(100, "ok", 1, 1, 4);
        version(100, "ok2", 4, 4, 0);
    }

    private JsonNode audit(int expectedExit, String... extra) throws Exception {
        String[] args = new String[extra.length + 5];
        args[0] = "--table";
        args[1] = "snap";
        args[2] = "--key";
        args[3] = "id";
        args[4] = "--json";
        System.arraycopy(extra, 0, args, 5, extra.length);
        Execution e = db.cli("audit", args);
        assertThat(e.exitCode()).as(e.err() + e.out()).isEqualTo(expectedExit);
        return H2Model.json(e);
    }

    private static void assertOnly(JsonNode result, String check, long count) {
        if (result.get("checks").has("missing_versions")) {
            assertThat(result.get("checks").get("missing_versions").get("count").asLong()).as("missing_versions")
                    .isEqualTo(check.equals("missing_versions") ? count : 0);
        }
        for (String c : CHECKS) {
            assertThat(result.get("checks").get(c).get("count").asLong()).as(c).isEqualTo(c.equals(check) ? count : 0);
        }
        assertThat(result.get("clean").asBoolean()).isFalse();
    }

    /**
     * A dbt 1.9 snapshot whose current versions carry 9999-12-31: with --valid-to-current the audit counts them as
     * current (two current versions of a key are caught) and an ordinary history passes.
     */
    @Test
    void validToCurrentVersionsAreCurrent() throws Exception {
        cleanKey();
        version(1, "a", 1, 1, 3);
        version(1, "b", 3, 3, 0);
        db.execute("UPDATE snap SET dbt_valid_to = TIMESTAMP '9999-12-31 00:00:00' WHERE dbt_valid_to IS NULL");
        assertThat(audit(0, "--valid-to-current", "'9999-12-31'").get("clean").asBoolean()).isTrue();
        version(1, "c", 5, 5, 0);
        db.execute("UPDATE snap SET dbt_valid_to = TIMESTAMP '9999-12-31 00:00:00' WHERE dbt_valid_to IS NULL");
        JsonNode r = audit(5, "--valid-to-current", "9999-12-31");
        assertThat(r.get("checks").get("multiple_current").get("count").asLong()).isEqualTo(1);
        assertThat(audit(5).get("checks").get("multiple_current").get("count").asLong()).as("without the option")
                .isZero();
        Execution bad = db.cli("audit", "--table", "snap", "--key", "id", "--valid-to-current", "x'; DROP TABLE snap");
        assertThat(bad.exitCode()).isEqualTo(2);
        assertThat(bad.err()).contains("--valid-to-current");
    }

    @Test
    void aCleanItersnapHistoryPassesEvenAfterALateBatch() throws Exception {
        db.threeBatchesApplied();
        db.load(1, "Premium", "plus", "2024-01-02T09:00", "2024-01-02");
        db.load(2, "Gone", "basic", "2024-01-02T12:00", "2024-01-02");
        assertThat(db.cli("run").exitCode()).isZero();

        Execution e = db.cli("audit", "--table", "customers_history", "--key", "customer_id");

        assertThat(e.exitCode()).as(e.err() + e.out()).isZero();
        assertThat(e.out()).contains("out_of_order: 0").contains("overlap: 0").contains("gap: 0")
                .contains("multiple_current: 0").contains("inverted: 0").contains("clean: no problem found");
    }

    /**
     * Full-picture batches: a key absent for one day and back unchanged is deleted at that day and returns at it (the
     * later of its updated_at and the deletion), so with {@code new_record} its deletion record lasts no time and the
     * returning version's updated_at is older than the deletion record's; with {@code invalidate} a key back after
     * days leaves a gap. Both are the history of a deletion, which the audit reads from the change type and the
     * deletion flag: clean. A dbt-shaped gap without those columns is still reported.
     */
    @Test
    void deletionsByAbsenceAndReturnsAreClean() throws Exception {
        for (String mode : new String[] {"new_record", "invalidate"}) {
            H2Model m = new H2Model(dir.resolve(mode), "hard_deletes: " + mode + "\n");
            m.load(1, "Active", "basic", "2024-01-01T09:00", "2024-01-01");
            m.load(2, "Active", "basic", "2024-01-01T10:00", "2024-01-01");
            m.load(2, "Active", "basic", "2024-01-01T10:00", "2024-01-02"); // key 1 absent on Jan 2
            m.load(1, "Active", "basic", "2024-01-01T09:00", "2024-01-03"); // and back unchanged
            m.load(2, "Active", "basic", "2024-01-01T10:00", "2024-01-03");
            m.load(1, "Active", "basic", "2024-01-01T09:00", "2024-01-04");
            m.load(1, "Active", "basic", "2024-01-01T09:00", "2024-01-06"); // key 2 absent from Jan 4, back Jan 6
            m.load(2, "Active", "basic", "2024-01-05T10:00", "2024-01-06");
            assertThat(m.cli("run").exitCode()).isZero();
            assertThat(m.rows("SELECT COUNT(*) FROM customers_history WHERE customer_id = 1")).as(mode)
                    .containsExactly(mode.equals("new_record") ? "3|" : "2|");

            Execution e = m.cli("audit", "--table", "customers_history", "--key", "customer_id");

            assertThat(e.exitCode()).as(mode + ": " + e.out() + e.err()).isZero();
            assertThat(e.out()).contains("out_of_order: 0", "gap: 0", "clean: no problem found");
        }
    }

    @Test
    void anEmptyOrCleanDbtSnapshotPasses() throws Exception {
        assertThat(audit(0).get("clean").asBoolean()).isTrue();
        cleanKey();
        JsonNode r = audit(0);
        assertThat(r.get("problems").asLong()).isZero();
    }

    @Test
    void findsTheOutOfOrderFingerprint() throws Exception {
        cleanKey();
        // Monday's state, then Tuesday's file applied after Wednesday's: Wednesday's version is followed by an older one
        version(1, "Active", 1, 1, 3);
        version(1, "Gold", 3, 3, 5);
        version(1, "Premium", 2, 5, 0);

        JsonNode r = audit(ExitCodes.AUDIT_PROBLEMS);

        assertOnly(r, "out_of_order", 1);
        JsonNode example = r.get("checks").get("out_of_order").get("examples").get(0);
        assertThat(example.get("id").asText()).isEqualTo("1");
        assertThat(example.get("updated_at").asText()).isEqualTo("2024-01-02 00:00");
        assertThat(example.get("previous_updated_at").asText()).isEqualTo("2024-01-03 00:00");
    }

    @Test
    void findsOverlappingValidity() throws Exception {
        cleanKey();
        version(1, "a", 1, 1, 5);
        version(1, "b", 3, 3, 0);
        assertOnly(audit(ExitCodes.AUDIT_PROBLEMS), "overlap", 1);
    }

    @Test
    void findsGaps() throws Exception {
        cleanKey();
        version(1, "a", 1, 1, 2);
        version(1, "b", 3, 3, 0);
        JsonNode r = audit(ExitCodes.AUDIT_PROBLEMS);
        assertOnly(r, "gap", 1);
        assertThat(r.get("checks").get("gap").get("examples").get(0).get("next_valid_from").asText())
                .isEqualTo("2024-01-03 00:00");
    }

    @Test
    void findsMoreThanOneCurrentVersionPerKey() throws Exception {
        cleanKey();
        version(1, "a", 1, 1, 0);
        version(1, "b", 3, 3, 0);
        JsonNode r = audit(ExitCodes.AUDIT_PROBLEMS);
        assertThat(r.get("checks").get("multiple_current").get("count").asLong()).isEqualTo(1);
        assertThat(r.get("checks").get("multiple_current").get("examples").get(0).get("current_versions").asText())
                .isEqualTo("2");
        // the first current version is also still valid when the second starts
        assertThat(r.get("checks").get("overlap").get("count").asLong()).isEqualTo(1);
        assertThat(r.get("checks").get("gap").get("count").asLong()).isZero();
        assertThat(r.get("checks").get("inverted").get("count").asLong()).isZero();
    }

    @Test
    void findsValidToBeforeValidFrom() throws Exception {
        cleanKey();
        version(1, "a", 5, 5, 2);
        assertOnly(audit(ExitCodes.AUDIT_PROBLEMS), "inverted", 1);
    }

    @Test
    void findsACorruptedItersnapHistory() throws Exception {
        db.threeBatchesApplied();
        db.execute("UPDATE customers_history SET dbt_valid_to = NULL WHERE customer_id = 1");

        Execution e = db.cli("audit", "--table", "customers_history", "--key", "customer_id");

        assertThat(e.exitCode()).isEqualTo(ExitCodes.AUDIT_PROBLEMS);
        assertThat(e.out()).contains("multiple_current: 1").contains("problems found");
    }

    @Test
    void printsAtMostFiveExamplesAndTheFullCount() throws Exception {
        for (int id = 1; id <= 7; id++) {
            version(id, "a", 1, 1, 0);
            version(id, "b", 2, 2, 0);
        }
        Execution e = db.cli("audit", "--table", "snap", "--key", "id");
        assertThat(e.exitCode()).isEqualTo(ExitCodes.AUDIT_PROBLEMS);
        assertThat(e.out()).contains("multiple_current: 7").contains("(5 rows)");
        JsonNode r = audit(ExitCodes.AUDIT_PROBLEMS);
        assertThat(r.get("checks").get("multiple_current").get("examples")).hasSize(5);
    }

    @Test
    void compositeKeysAndOwnColumnNames() throws Exception {
        db.execute("CREATE SCHEMA dw", "CREATE TABLE dw.hist (region VARCHAR(5), id INT, modified TIMESTAMP,"
                + " valid_from TIMESTAMP, valid_until TIMESTAMP)",
                "INSERT INTO dw.hist VALUES ('eu', 1, TIMESTAMP '2024-01-01 00:00:00', TIMESTAMP '2024-01-01 00:00:00',"
                        + " NULL)",
                "INSERT INTO dw.hist VALUES ('us', 1, TIMESTAMP '2024-01-02 00:00:00', TIMESTAMP '2024-01-02 00:00:00',"
                        + " NULL)");
        String[] args = {"--table", "dw.hist", "--key", "region,id", "--updated-at", "modified", "--valid-from",
                "valid_from", "--valid-to", "valid_until"};
        assertThat(db.cli("audit", args).exitCode()).isZero();

        db.execute("INSERT INTO dw.hist VALUES ('eu', 1, TIMESTAMP '2023-12-01 00:00:00',"
                + " TIMESTAMP '2024-01-05 00:00:00', NULL)");
        Execution e = db.cli("audit", args);
        assertThat(e.exitCode()).isEqualTo(ExitCodes.AUDIT_PROBLEMS);
        assertThat(e.out()).contains("out_of_order: 1").contains("multiple_current: 1").contains("overlap: 1")
                .contains(" region | id ");
    }

    @Test
    void aMissingTableOrColumnIsAConfigurationError() throws Exception {
        Execution noTable = db.cli("audit", "--table", "nope", "--key", "id");
        assertThat(noTable.exitCode()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(noTable.errLines()).hasSize(1);
        assertThat(noTable.err()).contains("cannot read table nope");

        Execution noColumn = db.cli("audit", "--table", "snap", "--key", "id", "--valid-to", "valid_until");
        assertThat(noColumn.exitCode()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(noColumn.errLines()).hasSize(1);
        assertThat(noColumn.err()).contains("--valid-to names column 'valid_until'");

        Execution badName = db.cli("audit", "--table", "snap; DROP TABLE snap", "--key", "id");
        assertThat(badName.exitCode()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(db.rows("SELECT COUNT(*) FROM snap")).containsExactly("0|");
    }

    @Test
    void withTheRawBatchesListsVersionsATimestampSnapshotDroppedSilently() throws Exception {
        // raw daily files: Monday, Wednesday, then Tuesday's late file; a timestamp-strategy snapshot ignored the
        // late row (its updated_at is older than the current version's), so Tuesday's state never became a version
        db.execute("CREATE TABLE raw (id INT, name VARCHAR(20), updated_at TIMESTAMP, file_date DATE)",
                "INSERT INTO raw VALUES (1, 'Active', TIMESTAMP '2024-01-01 00:00:00', DATE '2024-01-01')",
                "INSERT INTO raw VALUES (1, 'Gold', TIMESTAMP '2024-01-03 00:00:00', DATE '2024-01-03')",
                "INSERT INTO raw VALUES (1, 'Premium', TIMESTAMP '2024-01-02 00:00:00', DATE '2024-01-02')",
                "INSERT INTO raw VALUES (2, 'Active', TIMESTAMP '2024-01-01 00:00:00', DATE '2024-01-01')",
                "INSERT INTO raw VALUES (2, 'Active', TIMESTAMP '2024-01-01 00:00:00', DATE '2024-01-03')");
        version(1, "Active", 1, 1, 3);
        version(1, "Gold", 3, 3, 0);
        version(2, "Active", 1, 1, 0);

        JsonNode r = audit(ExitCodes.AUDIT_PROBLEMS, "--source", "SELECT * FROM raw", "--sequence-by", "file_date");

        assertOnly(r, "missing_versions", 1);
        JsonNode example = r.get("checks").get("missing_versions").get("examples").get(0);
        assertThat(example.get("id").asText()).isEqualTo("1");
        assertThat(example.get("updated_at").asText()).isEqualTo("2024-01-02 00:00");
        assertThat(example.get("first_batch").asText()).isEqualTo("2024-01-02");
    }

    @Test
    void anItersnapHistoryHoldsEveryVersionOfItsRawBatches() throws Exception {
        db.threeBatchesApplied();
        db.load(1, "Premium", "plus", "2024-01-02T09:00", "2024-01-02");
        assertThat(db.cli("run").exitCode()).isZero();

        Execution e = db.cli("audit", "--table", "customers_history", "--key", "customer_id", "--source",
                "SELECT * FROM raw_customers", "--sequence-by", "file_date");

        assertThat(e.exitCode()).as(e.out() + e.err()).isZero();
        assertThat(e.out()).contains("missing_versions: 0");
    }

    @Test
    void sourceNeedsSequenceBy() throws Exception {
        Execution e = db.cli("audit", "--table", "snap", "--key", "id", "--source", "SELECT 1 AS id");
        assertThat(e.exitCode()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(e.err()).contains("--source and --sequence-by go together");
    }
}
