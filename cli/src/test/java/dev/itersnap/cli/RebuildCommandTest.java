package dev.itersnap.cli;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code itersnap replay} and {@code itersnap full-refresh}, with and without --dry-run, on file-based H2. */
class RebuildCommandTest {
    private static final String HISTORY = "SELECT * FROM customers_history ORDER BY customer_id, dbt_valid_from";
    private static final String LEDGER = "SELECT * FROM itersnap_metadata.itersnap_ledger ORDER BY sequence_value";
    private static final String RUNS = "SELECT * FROM itersnap_metadata.itersnap_runs ORDER BY started_at";

    @TempDir
    Path dir;
    private H2Model db;

    @BeforeEach
    void setUp() throws Exception {
        db = new H2Model(dir);
        db.threeBatchesApplied();
    }

    private List<List<String>> snapshot() throws Exception {
        return List.of(db.rows(HISTORY), db.rows(LEDGER), db.rows(RUNS));
    }

    @Test
    void replayDryRunListsRolledBackBatchesAndWhereEachComesFromAndWritesNothing() throws Exception {
        db.execute("DELETE FROM raw_customers WHERE file_date = DATE '2024-01-03'"); // aged out of the source
        db.load(3, "Gold", "pro", "2024-01-06T08:00", "2024-01-06");
        List<List<String>> before = snapshot();

        Execution e = db.cli("replay", "--from", "2024-01-02", "--dry-run", "--json");

        assertThat(e.exitCode()).as(e.err()).isZero();
        JsonNode plan = H2Model.json(e);
        assertThat(plan.get("dry_run").asBoolean()).isTrue();
        assertThat(plan.get("replay_point").asText()).isEqualTo("2024-01-02");
        assertThat(plan.get("rolled_back").toString()).isEqualTo("[\"2024-01-03\",\"2024-01-05\"]");
        assertThat(plan.get("batches").toString()).isEqualTo("["
                + "{\"sequence\":\"2024-01-03\",\"replayed\":true,\"read_from\":\"history\"},"
                + "{\"sequence\":\"2024-01-05\",\"replayed\":true,\"read_from\":\"source\"},"
                + "{\"sequence\":\"2024-01-06\",\"replayed\":false,\"read_from\":\"source\"}]");
        assertThat(snapshot()).isEqualTo(before);

        Execution text = db.cli("replay", "--from", "2024-01-02", "--dry-run");
        assertThat(text.exitCode()).as(text.err()).isZero();
        assertThat(text.out()).contains("dry run of replay from 2024-01-02; nothing was written")
                .contains("rolled back from 2024-01-02: 2 batches (2024-01-03, 2024-01-05)")
                .contains("history (no longer in the source)");
        assertThat(snapshot()).isEqualTo(before);
    }

    /**
     * A batch corrected in the source after it was applied: the dry run of a replay from a later batch starts at the
     * restated one and names it, writing nothing; the next run replays from it and says so.
     */
    @Test
    void dryRunAndRunShowARestatedBatch() throws Exception {
        db.execute("UPDATE raw_customers SET status = 'Platinum' WHERE file_date = DATE '2024-01-03' AND "
                + "customer_id = 1");
        List<List<String>> before = snapshot();

        Execution e = db.cli("replay", "--from", "2024-01-05", "--dry-run", "--json");

        assertThat(e.exitCode()).as(e.err()).isZero();
        JsonNode plan = H2Model.json(e);
        assertThat(plan.get("restated").toString()).isEqualTo("[\"2024-01-03\"]");
        assertThat(plan.get("replay_point").asText()).isEqualTo("2024-01-03");
        assertThat(plan.get("rolled_back").toString()).isEqualTo("[\"2024-01-03\",\"2024-01-05\"]");
        Execution text = db.cli("replay", "--from", "2024-01-05", "--dry-run");
        assertThat(text.out()).contains("restated in the source since applied: 2024-01-03");
        assertThat(snapshot()).isEqualTo(before);

        // an ordinary run compares the newest batch and one older one a run (2024-01-05 and, first, 2024-01-01):
        // 2024-01-03 waits for the sweep; a full check compares every batch now
        Execution ordinary = db.cli("run");
        assertThat(ordinary.exitCode()).as(ordinary.err()).isZero();
        assertThat(ordinary.err()).doesNotContain("restated batch");
        Execution run = db.cli("run", "--full-check");
        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(run.err()).contains("restated batch: 2024-01-03 changed in the source since it was applied");
        assertThat(run.out()).contains("replayed from 2024-01-03");
        assertThat(db.rows("SELECT status FROM customers_history WHERE customer_id = 1 ORDER BY dbt_valid_from"))
                .containsExactly("Active|", "Platinum|");
        assertThat(db.rows("SELECT replay_point, operation FROM itersnap_metadata.itersnap_runs ORDER BY started_at "
                + "DESC")).first().isEqualTo("2024-01-03|full_check|");
    }

    @Test
    void replayRollsBackAndReplaysAndReproducesAgedOutBatches() throws Exception {
        db.execute("DELETE FROM raw_customers WHERE file_date = DATE '2024-01-03'");
        List<String> history = db.rows(HISTORY);

        Execution e = db.cli("replay", "--from", "2024-01-03", "--json");

        assertThat(e.exitCode()).as(e.err()).isZero();
        JsonNode r = H2Model.json(e);
        assertThat(r.get("replay_point").asText()).isEqualTo("2024-01-03");
        assertThat(r.get("batches_applied").asInt()).isEqualTo(2);
        assertThat(r.get("batches").get(0).get("reproduced").asBoolean()).isTrue();
        assertThat(db.rows(HISTORY).size()).isEqualTo(history.size());
        assertThat(db.rows("SELECT status FROM customers_history WHERE customer_id = 1 ORDER BY dbt_valid_from"))
                .containsExactly("Active|", "Gold|");
    }

    @Test
    void replayDryRunIncludesALateBatchWaitingInTheSource() throws Exception {
        db.load(1, "Premium", "plus", "2024-01-02T09:00", "2024-01-02");

        Execution e = db.cli("replay", "--from", "2024-01-05", "--dry-run", "--json");

        JsonNode plan = H2Model.json(e);
        assertThat(plan.get("late_batch_found").asBoolean()).isTrue();
        assertThat(plan.get("replay_point").asText()).isEqualTo("2024-01-02");
        assertThat(plan.get("rolled_back").toString()).isEqualTo("[\"2024-01-03\",\"2024-01-05\"]");
        assertThat(plan.get("batches")).hasSize(3);
    }

    @Test
    void replayFromAValueOfTheWrongTypeIsAConfigurationError() throws Exception {
        Execution dry = db.cli("replay", "--from", "yesterday", "--dry-run");
        assertThat(dry.exitCode()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(dry.errLines()).hasSize(1);
        assertThat(dry.err()).contains("'yesterday'");

        Execution real = db.cli("replay", "--from", "yesterday");
        assertThat(real.exitCode()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(real.errLines()).hasSize(1);
    }

    @Test
    void fullRefreshRefusesToStartWithoutYes() throws Exception {
        List<List<String>> before = snapshot();

        Execution e = db.cli("full-refresh");

        assertThat(e.exitCode()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(e.errLines()).hasSize(1);
        assertThat(e.err()).contains("add --yes");
        assertThat(e.out()).isEmpty();
        assertThat(snapshot()).isEqualTo(before);
    }

    @Test
    void fullRefreshDryRunNeedsNoYesAndWritesNothing() throws Exception {
        List<List<String>> before = snapshot();

        Execution e = db.cli("full-refresh", "--dry-run", "--json");

        assertThat(e.exitCode()).as(e.err()).isZero();
        JsonNode plan = H2Model.json(e);
        assertThat(plan.get("operation").asText()).isEqualTo("full refresh");
        assertThat(plan.get("replay_point").asText()).isEqualTo("2024-01-01");
        assertThat(plan.get("rolled_back")).hasSize(3);
        assertThat(snapshot()).isEqualTo(before);
    }

    @Test
    void fullRefreshWithYesRebuildsTheSameHistory() throws Exception {
        List<String> history = db.rows("SELECT customer_id, status, tier, dbt_valid_from, dbt_valid_to"
                + " FROM customers_history ORDER BY 1, 4");

        Execution e = db.cli("full-refresh", "--yes", "--json");

        assertThat(e.exitCode()).as(e.err()).isZero();
        JsonNode r = H2Model.json(e);
        assertThat(r.get("replay_point").asText()).isEqualTo("2024-01-01");
        assertThat(r.get("batches_applied").asInt()).isEqualTo(3);
        assertThat(db.rows("SELECT customer_id, status, tier, dbt_valid_from, dbt_valid_to"
                + " FROM customers_history ORDER BY 1, 4")).isEqualTo(history);
        assertThat(db.rows("SELECT operation, status FROM itersnap_metadata.itersnap_runs ORDER BY started_at"))
                .hasSize(2).last().asString().endsWith("|success|");

        Execution text = db.cli("full-refresh", "--yes");
        assertThat(text.exitCode()).as(text.err()).isZero();
        assertThat(text.out()).contains("customers: 3 batches applied");
    }

    @Test
    void aReplayFromBeyondTheLedgerRollsNothingBack() throws Exception {
        db.load(4, "New", "basic", "2024-01-09T08:00", "2024-01-09");

        Execution e = db.cli("replay", "--from", "2024-01-07", "--dry-run");

        assertThat(e.exitCode()).as(e.err()).isZero();
        assertThat(e.out()).contains("rolled back: nothing").contains("applied in order: 1 batch")
                .contains(" 2024-01-09 | new ");
    }

    @Test
    void aDryRunOfAModelThatNeverRanAppliesEveryBatchAndCreatesNoMetadata() throws Exception {
        H2Model fresh = new H2Model(dir.resolve("fresh"));
        fresh.load(1, "Active", "basic", "2024-01-01T09:00", "2024-01-01");
        fresh.load(1, "Gold", "pro", "2024-01-02T09:00", "2024-01-02");

        JsonNode plan = H2Model.json(fresh.cli("full-refresh", "--dry-run", "--json"));

        assertThat(plan.get("replay_point").isNull()).isTrue();
        assertThat(plan.get("rolled_back")).isEmpty();
        assertThat(plan.get("batches")).hasSize(2);
        assertThat(fresh.rows("SELECT table_name FROM information_schema.tables WHERE table_schema <> "
                + "'INFORMATION_SCHEMA'")).containsExactly("RAW_CUSTOMERS|");
    }
}
