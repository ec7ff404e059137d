package dev.itersnap.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code itersnap run} end to end against a file-based H2 database. */
class RunCommandTest {
    @TempDir
    Path dir;
    private H2Model model;
    private String url;
    private Path config;

    @BeforeEach
    void createDatabaseAndModel() throws Exception {
        model = new H2Model(dir);
        url = model.url;
        config = model.config;
    }

    @Test
    void appliesNewBatchesAndPrintsTheResultAsJson() throws Exception {
        load(1, "Active", "basic", "2024-01-01T09:00", "2024-01-01");
        load(2, "Active", "basic", "2024-01-01T10:00", "2024-01-01");
        load(1, "Gold", "pro", "2024-01-03T09:00", "2024-01-03");

        Execution first = Execution.of("run", "--jdbc-url", url, "--config", config.toString(), "--json");

        assertThat(first.exitCode()).as(first.err()).isZero();
        JsonNode json = new ObjectMapper().readTree(first.out());
        assertThat(json.get("model").asText()).isEqualTo("customers");
        assertThat(json.get("run_id").asText()).isNotBlank();
        assertThat(json.get("batches_applied").asInt()).isEqualTo(2);
        assertThat(json.get("late_batch_found").asBoolean()).isFalse();
        assertThat(json.get("replay_point").isNull()).isTrue();
        assertThat(json.get("inserted").asLong()).isEqualTo(3);
        assertThat(json.get("updated").asLong()).isEqualTo(1);
        assertThat(json.get("timeline_violations").asLong()).isZero();
        assertThat(json.get("duration_ms").isIntegralNumber()).isTrue();
        assertThat(json.get("batches")).hasSize(2);
        JsonNode monday = json.get("batches").get(0);
        assertThat(monday.get("sequence").asText()).isEqualTo("2024-01-01");
        assertThat(monday.get("source_rows").asLong()).isEqualTo(2);
        assertThat(monday.get("inserted").asLong()).isEqualTo(2);
        assertThat(monday.get("reproduced").asBoolean()).isFalse();
        assertThat(first.err()).contains("batch 2024-01-01 applied: 2 rows, 2 inserted");

        load(1, "Premium", "plus", "2024-01-02T09:00", "2024-01-02");
        Execution late = Execution.of("run", "--jdbc-url", url, "--config", config.toString(), "--json");

        assertThat(late.exitCode()).as(late.err()).isZero();
        JsonNode lateJson = new ObjectMapper().readTree(late.out());
        assertThat(lateJson.get("late_batch_found").asBoolean()).isTrue();
        assertThat(lateJson.get("replay_point").asText()).isEqualTo("2024-01-02");
        assertThat(lateJson.get("batches")).extracting(b -> b.get("sequence").asText())
                .containsExactly("2024-01-02", "2024-01-03");
        assertThat(late.err()).contains("late batch detected: 2024-01-02 < 2024-01-03, replaying from 2024-01-02");
        assertThat(statuses(1)).containsExactly("Active", "Premium", "Gold");
    }

    @Test
    void withoutJsonPrintsASummaryAndANoOpRunSaysUpToDate() throws Exception {
        load(1, "Active", "basic", "2024-01-01T09:00", "2024-01-01");

        Execution first = Execution.of("run", "--jdbc-url", url, "--config", config.toString());
        Execution again = Execution.of("run", "--jdbc-url", url, "--config", config.toString(), "--dialect", "h2");

        assertThat(first.exitCode()).as(first.err()).isZero();
        assertThat(first.out()).startsWith("customers: 1 batch applied; 1 inserted, 0 updated, 0 deleted, 0 rejected in ");
        assertThat(again.exitCode()).as(again.err()).isZero();
        assertThat(again.out()).startsWith("customers: up to date, no new batch");
    }

    @Test
    void rowsWithoutASequenceAreNamedSoAndCountedAsStatusCountsThem() throws Exception {
        // issue 29: "batch null: 1 row set aside", and a summary of 1 rejected where status counted 2
        load(1, "Active", "basic", "2024-01-01T09:00", "2024-01-01");
        model.load(null, "Ghost", "basic", "2024-01-01T09:00", "2024-01-01");
        model.execute("INSERT INTO raw_customers VALUES (2, 'Active', 'basic', TIMESTAMP '2024-01-01 10:00:00', NULL)");

        Execution run = Execution.of("run", "--jdbc-url", url, "--config", config.toString());

        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(run.err()).contains("rows without a sequence (in no batch): 1 row set aside in the error log "
                + "(null_sequence: 1)").doesNotContain("batch null");
        assertThat(run.out()).startsWith("customers: 1 batch applied; 1 inserted, 0 updated, 0 deleted, 2 rejected "
                + "(1 without a sequence, in no batch) in ");
        JsonNode status = H2Model.json(model.cli("status", "--json"));
        long logged = 0;
        for (JsonNode r : status.get("errors_by_reason")) {
            logged += r.get("rows").asLong();
        }
        assertThat(logged).isEqualTo(2);
    }

    @Test
    void aDialectThatDoesNotMatchTheDatabaseIsRefusedNamingBoth() throws Exception {
        // issue 29: --dialect postgres on H2 failed with Function "PG_ADVISORY_LOCK" not found
        load(1, "Active", "basic", "2024-01-01T09:00", "2024-01-01");
        for (String command : new String[] {"run", "status"}) {
            Execution e = Execution.of(command, "--jdbc-url", url, "--config", config.toString(), "--dialect", "postgres");

            assertThat(e.exitCode()).as(command).isEqualTo(ExitCodes.CONFIGURATION);
            assertThat(e.errLines()).as(command).singleElement().asString()
                    .startsWith("itersnap: dialect 'postgres' does not match the database: it is H2 ")
                    .contains("which dialect 'h2' handles").doesNotContain("PG_ADVISORY_LOCK");
        }
    }

    @Test
    void aModelLockedByAnotherRunExitsWithThreeAfterLockTimeout() throws Exception {
        load(1, "Active", "basic", "2024-01-01T09:00", "2024-01-01");
        assertThat(Execution.of("run", "--jdbc-url", url, "--config", config.toString()).exitCode()).isZero();
        Files.writeString(config, Files.readString(config).replace("lock_timeout: 30s", "lock_timeout: 1s"));
        load(1, "Gold", "basic", "2024-01-02T09:00", "2024-01-02"); // a run with nothing new takes no lock

        Execution run;
        try (Connection holder = DriverManager.getConnection(url); Statement s = holder.createStatement()) {
            holder.setAutoCommit(false);
            s.executeQuery("SELECT * FROM itersnap_metadata.itersnap_lock WHERE model = 'customers' FOR UPDATE").close();
            run = Execution.of("run", "--jdbc-url", url, "--config", config.toString());
        }

        assertThat(run.exitCode()).isEqualTo(ExitCodes.LOCK_TIMEOUT);
        assertThat(run.errLines()).singleElement().asString()
                .startsWith("itersnap: model 'customers' is locked by another run").contains("lock_timeout");
    }

    @Test
    void aSourceThatDoesNotExistExitsWithTwoInOneLine() throws Exception {
        Files.writeString(config, Files.readString(config).replace("FROM raw_customers", "FROM raw_clients"));

        Execution run = Execution.of("run", "--jdbc-url", url, "--config", config.toString());

        assertThat(run.exitCode()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(run.errLines()).singleElement().asString()
                .startsWith("itersnap: model 'customers': cannot read the source query").contains("RAW_CLIENTS");
    }

    private void load(int id, String status, String tier, String updatedAt, String fileDate) throws Exception {
        model.load(id, status, tier, updatedAt, fileDate);
    }

    private List<String> statuses(int id) throws Exception {
        List<String> statuses = new ArrayList<>();
        try (Connection c = model.connect();
             PreparedStatement ps = c.prepareStatement(
                     "SELECT status FROM customers_history WHERE customer_id = ? ORDER BY dbt_valid_from")) {
            ps.setInt(1, id);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    statuses.add(rs.getString(1));
                }
            }
        }
        return statuses;
    }
}
