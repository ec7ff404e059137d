package dev.itersnap.cli;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code itersnap as-of} on file-based H2. */
class AsOfCommandTest {
    @TempDir
    Path dir;
    private H2Model db;

    @BeforeEach
    void setUp() throws Exception {
        db = new H2Model(dir);
        db.threeBatchesApplied();
    }

    @Test
    void printsTheSqlOfTheHistoryAsOfATime() throws Exception {
        Execution e = db.cli("as-of", "--time", "2024-01-02 00:00:00");

        assertThat(e.exitCode()).as(e.err()).isZero();
        assertThat(db.rows("SELECT customer_id, status FROM (" + e.out().strip() + ") v ORDER BY 1"))
                .containsExactly("1|Active|", "2|Active|");
        Execution later = db.cli("as-of", "--time", "2024-01-05 12:00:00");
        assertThat(db.rows("SELECT customer_id, status FROM (" + later.out().strip() + ") v ORDER BY 1"))
                .containsExactly("1|Gold|", "2|Active|", "3|New|");
    }

    @Test
    void createsAViewAsOfABatch() throws Exception {
        Execution e = db.cli("as-of", "--sequence", "2024-01-03", "--create-view", "customers_jan3", "--json");

        assertThat(e.exitCode()).as(e.err()).isZero();
        JsonNode j = H2Model.json(e);
        assertThat(j.get("as_of").asText()).isEqualTo("sequence");
        assertThat(j.get("sql").asText()).startsWith("CREATE VIEW");
        assertThat(db.rows("SELECT customer_id, status FROM customers_jan3 ORDER BY 1"))
                .containsExactly("1|Gold|", "2|Active|");
    }

    @Test
    void readsTheHistoryAsItWasKnownBeforeALateFile() throws Exception {
        String beforeTuesday = java.time.LocalDateTime.now().toString().replace('T', ' ');
        Thread.sleep(5); // the run log's clock: the late run finishes after that moment
        db.load(1, "Silver", "pro", "2024-01-02T09:00", "2024-01-02"); // Tuesday's file, late
        Execution late = db.cli("run");
        assertThat(late.exitCode()).as(late.err()).isZero();

        Execution now = db.cli("as-of", "--time", "2024-01-02 12:00:00");
        Execution then = db.cli("as-of", "--time", "2024-01-02 12:00:00", "--known-at", beforeTuesday, "--json");

        assertThat(then.exitCode()).as(then.err()).isZero();
        assertThat(db.rows("SELECT customer_id, status FROM (" + now.out().strip() + ") v ORDER BY 1"))
                .containsExactly("1|Silver|", "2|Active|");
        JsonNode j = H2Model.json(then);
        assertThat(j.get("known_at").asText()).isEqualTo(beforeTuesday);
        assertThat(db.rows("SELECT customer_id, status FROM (" + j.get("sql").asText() + ") v ORDER BY 1"))
                .containsExactly("1|Active|", "2|Active|");
        assertThat(db.cli("as-of", "--sequence", "2024-01-02", "--known-at", beforeTuesday).exitCode())
                .isEqualTo(ExitCodes.CONFIGURATION);
    }

    @Test
    void aViewOfBothTimelinesMadeBeforeALateFileAnswersBothQuestionsAfterIt() throws Exception {
        Execution view = db.cli("as-of", "--bitemporal", "--create-view", "customers_both", "--json");
        assertThat(view.exitCode()).as(view.err()).isZero();
        assertThat(H2Model.json(view).get("as_of").asText()).isEqualTo("bitemporal");
        String beforeTuesday = java.time.LocalDateTime.now().toString().replace('T', ' ');
        Thread.sleep(5);
        db.load(1, "Silver", "pro", "2024-01-02T09:00", "2024-01-02"); // Tuesday's file, late
        Execution late = db.cli("run");
        assertThat(late.exitCode()).as(late.err()).isZero();

        String valid = " dbt_valid_from <= TIMESTAMP '2024-01-02 12:00:00' AND (dbt_valid_to IS NULL OR dbt_valid_to"
                + " > TIMESTAMP '2024-01-02 12:00:00')";
        assertThat(db.rows("SELECT customer_id, status FROM customers_both WHERE itersnap_known_to IS NULL AND"
                + valid + " ORDER BY 1")).containsExactly("1|Silver|", "2|Active|");
        assertThat(db.rows("SELECT customer_id, status FROM customers_both WHERE (itersnap_known_from IS NULL OR "
                + "itersnap_known_from <= TIMESTAMP '" + beforeTuesday + "') AND (itersnap_known_to IS NULL OR "
                + "itersnap_known_to > TIMESTAMP '" + beforeTuesday + "') AND" + valid + " ORDER BY 1"))
                .containsExactly("1|Active|", "2|Active|");
        // the two versions of customer 1 that Tuesday's replay superseded (Active closed on 01-03, Gold) show until
        // the late run's end, then no more
        assertThat(db.rows("SELECT customer_id, status FROM customers_both WHERE itersnap_known_to IS NOT NULL"
                + " ORDER BY 2")).containsExactly("1|Active|", "1|Gold|");
    }

    @Test
    void needsExactlyOnePointAndAReadableValue() throws Exception {
        assertThat(db.cli("as-of").exitCode()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(db.cli("as-of", "--time", "2024-01-02", "--sequence", "2024-01-03").exitCode())
                .isEqualTo(ExitCodes.CONFIGURATION);
        Execution bad = db.cli("as-of", "--sequence", "soon");
        assertThat(bad.exitCode()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(bad.errLines()).hasSize(1);
    }
}
