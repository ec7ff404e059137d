package dev.itersnap.cli;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.sql.PreparedStatement;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code itersnap adopt} on file-based H2: a dbt snapshot that a late file damaged is audited first and refused
 * (exit 5, nothing written); with {@code --accept-problems} it is adopted, later batches are applied over it, and a
 * batch at or before the adoption point that arrives later is refused (exit 7).
 */
class AdoptCommandTest {
    @TempDir
    Path dir;
    private H2Model db;

    @BeforeEach
    void setUp() throws Exception {
        db = new H2Model(dir);
        db.execute("CREATE TABLE customers_history (customer_id INT, status VARCHAR(20), tier VARCHAR(20), "
                + "updated_at TIMESTAMP, file_date DATE, dbt_scd_id VARCHAR(32), dbt_updated_at TIMESTAMP, "
                + "dbt_valid_from TIMESTAMP, dbt_valid_to TIMESTAMP)");
        // files of Jan 1, 2 and 4, then Jan 3 late: dbt (check strategy with updated_at) closed Jan 4's version at
        // Jan 3 (inverted) and opened one that overlaps it
        file(1, "A", 1);
        file(1, "B", 2);
        file(1, "C", 3);
        file(1, "D", 4);
        version("A", 1, 2);
        version("B", 2, 4);
        version("D", 4, 3);
        version("C", 3, 0);
    }

    private static LocalDateTime at(int day) {
        return LocalDateTime.of(2024, 1, day, 9, 0);
    }

    private void file(int id, String status, int day) throws Exception {
        db.load(id, status, "gold", at(day).toString(), LocalDate.of(2024, 1, day).toString());
    }

    private void version(String status, int day, int validTo) throws Exception {
        try (var c = db.connect(); PreparedStatement ps = c.prepareStatement(
                "INSERT INTO customers_history VALUES (1, ?, 'gold', ?, ?, ?, ?, ?, ?)")) {
            ps.setString(1, status);
            ps.setObject(2, at(day));
            ps.setObject(3, LocalDate.of(2024, 1, day));
            ps.setString(4, java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("MD5")
                    .digest(("1|" + at(day).toString().replace('T', ' ')).getBytes(
                            java.nio.charset.StandardCharsets.UTF_8))));
            ps.setObject(5, at(day));
            ps.setObject(6, at(day));
            ps.setObject(7, validTo == 0 ? null : at(validTo));
            ps.executeUpdate();
        }
    }

    private List<String> table() throws Exception {
        return db.rows("SELECT customer_id, status, dbt_scd_id, dbt_valid_from, dbt_valid_to FROM customers_history "
                + "ORDER BY dbt_valid_from");
    }

    @Test
    void refusesWithoutYes() {
        Execution e = db.cli("adopt", "--through", "2024-01-04");

        assertThat(e.exitCode()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(e.err()).contains("--yes");
    }

    @Test
    void auditProblemsStopTheAdoptionBeforeWriting() throws Exception {
        List<String> before = table();

        Execution e = db.cli("adopt", "--through", "2024-01-04", "--yes");

        assertThat(e.exitCode()).as(e.err()).isEqualTo(ExitCodes.AUDIT_PROBLEMS);
        assertThat(e.out()).contains("overlap: 2", "inverted: 1", "not adopted", "--accept-problems");
        assertThat(table()).isEqualTo(before);
        assertThat(db.rows("SELECT COUNT(*) FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_NAME = 'CUSTOMERS_HISTORY'"))
                .containsExactly("9|");
    }

    @Test
    void dryRunListsTheAuditAndTheBatchesAndWritesNothing() throws Exception {
        Execution e = db.cli("adopt", "--through", "2024-01-03", "--dry-run", "--accept-problems", "--json");

        assertThat(e.exitCode()).as(e.err()).isZero();
        JsonNode o = H2Model.json(e);
        assertThat(o.get("adopted").asBoolean()).isFalse();
        assertThat(o.get("audit").get("problems").asLong()).isEqualTo(3);
        assertThat(o.get("batches_to_declare").toString())
                .isEqualTo("[\"2024-01-01\",\"2024-01-02\",\"2024-01-03\"]");
        assertThat(db.rows("SELECT COUNT(*) FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_NAME = 'CUSTOMERS_HISTORY'"))
                .containsExactly("9|");
    }

    @Test
    void acceptedProblemsAdoptThenRunsGoOnAndALateBatchBeforeThePointIsRefused() throws Exception {
        List<String> before = table();

        Execution adopt = db.cli("adopt", "--through", "2024-01-04", "--yes", "--accept-problems", "--json");

        assertThat(adopt.exitCode()).as(adopt.err()).isZero();
        JsonNode o = H2Model.json(adopt);
        assertThat(o.get("adopted").asBoolean()).isTrue();
        assertThat(o.get("versions").asLong()).isEqualTo(4);
        assertThat(o.get("batches_declared")).hasSize(4);
        assertThat(table()).as("versions kept as dbt wrote them").isEqualTo(before);

        file(1, "E", 5);
        file(2, "New", 5);
        Execution run = db.cli("run", "--json");
        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(H2Model.json(run).get("batches_applied").asInt()).isEqualTo(1);
        assertThat(db.rows("SELECT status, dbt_valid_to FROM customers_history WHERE customer_id = 1 ORDER BY "
                + "dbt_valid_from")).containsExactly("A|2024-01-02 09:00:00|", "B|2024-01-04 09:00:00|",
                "C|2024-01-05 09:00:00|", "D|2024-01-03 09:00:00|", "E|null|");

        db.load(2, "Early", "gold", "2024-01-02T12:00", "2024-01-02");
        Execution late = db.cli("run");
        assertThat(late.exitCode()).as(late.err()).isEqualTo(ExitCodes.LATE_BEFORE_ADOPTION);
        assertThat(late.err()).contains("batch 2024-01-02", "adopted through 2024-01-04");
    }

    /**
     * {@code --through} after the newest batch the source holds, or before the table's first version: refused (exit
     * 2) naming the point and the value it contradicts, with nothing written.
     */
    @Test
    void impossibleThroughPointsAreRefusedBeforeWriting() throws Exception {
        List<String> before = table();

        Execution late = db.cli("adopt", "--through", "2030-01-01", "--yes", "--accept-problems");
        Execution early = db.cli("adopt", "--through", "2023-06-01", "--yes", "--accept-problems");

        assertThat(late.exitCode()).as(late.err()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(late.err()).contains("2030-01-01", "after 2024-01-04, the newest batch the source holds",
                "Nothing was written");
        assertThat(early.exitCode()).as(early.err()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(early.err()).contains("2023-06-01", "before the table's first version", "2024-01-01 09:00",
                "Nothing was written");
        assertThat(table()).isEqualTo(before);
        assertThat(db.rows("SELECT COUNT(*) FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_NAME = 'CUSTOMERS_HISTORY'"))
                .as("no bookkeeping column added").containsExactly("9|");
        assertThat(db.cli("adopt", "--through", "2024-01-04", "--yes", "--accept-problems").exitCode()).isZero();
    }

    @Test
    void rebuildFromTheOldestRetainedBatchRepairsAndListsTheChanges() throws Exception {
        db.execute("DELETE FROM raw_customers WHERE file_date < DATE '2024-01-03'");
        file(1, "E", 5);

        Execution dry = db.cli("adopt", "--rebuild-from", "2024-01-03", "--dry-run", "--json");
        assertThat(dry.exitCode()).as(dry.err()).isZero();
        assertThat(H2Model.json(dry).get("batches_to_rebuild").toString())
                .isEqualTo("[\"2024-01-03\",\"2024-01-04\",\"2024-01-05\"]");

        Execution e = db.cli("adopt", "--rebuild-from", "2024-01-03", "--yes", "--json");

        assertThat(e.exitCode()).as(e.err()).isZero();
        JsonNode o = H2Model.json(e);
        assertThat(o.get("audit").get("problems").asLong()).isEqualTo(3);
        assertThat(o.get("audit_after").get("problems").asLong()).isZero();
        assertThat(o.get("batches_rebuilt")).hasSize(3);
        assertThat(o.get("changes").get("removed").get("count").asLong()).isZero();
        assertThat(o.get("changes").get("added").get("count").asLong()).isEqualTo(1);
        assertThat(o.get("changes").get("redated").get("count").asLong()).isEqualTo(3);
        assertThat(db.rows("SELECT status, dbt_valid_from, dbt_valid_to FROM customers_history ORDER BY "
                + "dbt_valid_from")).containsExactly("A|2024-01-01 09:00:00|2024-01-02 09:00:00|",
                "B|2024-01-02 09:00:00|2024-01-03 09:00:00|", "C|2024-01-03 09:00:00|2024-01-04 09:00:00|",
                "D|2024-01-04 09:00:00|2024-01-05 09:00:00|", "E|2024-01-05 09:00:00|null|");
        assertThat(db.rows("SELECT COUNT(*) FROM customers_history_before_adopt")).containsExactly("4|");

        Execution text = db.cli("status");
        assertThat(text.exitCode()).as(text.err()).isZero();
        Execution again = db.cli("adopt", "--rebuild-from", "2024-01-03", "--yes");
        assertThat(again.exitCode()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(again.err()).contains("customers_history_before_adopt");
    }

    @Test
    void needsThroughOrRebuildFrom() {
        assertThat(db.cli("adopt", "--yes").exitCode()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(db.cli("adopt", "--yes", "--through", "2024-01-04", "--rebuild-from", "2024-01-03").exitCode())
                .isEqualTo(ExitCodes.CONFIGURATION);
    }
}
