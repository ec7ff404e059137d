package dev.itersnap.cli;

import com.fasterxml.jackson.databind.JsonNode;
import dev.itersnap.models.ModelFiles;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.sql.PreparedStatement;
import java.time.LocalDateTime;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code itersnap status} on file-based H2. */
class StatusCommandTest {
    @TempDir
    Path dir;

    @Test
    void aModelThatNeverRanHasNoMetadata() throws Exception {
        H2Model db = new H2Model(dir);

        Execution text = db.cli("status");
        assertThat(text.exitCode()).as(text.err()).isZero();
        assertThat(text.out()).contains("never run");

        JsonNode json = H2Model.json(db.cli("status", "--json"));
        assertThat(json.get("metadata_exists").asBoolean()).isFalse();
        assertThat(json.get("ledger")).isEmpty();
        assertThat(db.rows("SELECT schema_name FROM information_schema.schemata WHERE schema_name = 'ITERSNAP_METADATA'"))
                .isEmpty();
    }

    @Test
    void showsLedgerRunsErrorsAndTheLockAsOneJsonObject() throws Exception {
        H2Model db = new H2Model(dir);
        db.load(1, "Active", "basic", "2024-01-01T09:00", "2024-01-01");
        db.load(2, "Active", "basic", "2024-01-01T10:00", "2024-01-01");
        db.load(null, "Ghost", "basic", "2024-01-01T10:00", "2024-01-01");
        db.load(1, "Gold", "pro", "2024-01-10T09:00", "2024-01-10");
        String firstRun = H2Model.json(db.cli("run", "--json")).get("run_id").asText();
        db.load(1, "Premium", "plus", "2024-01-02T09:00", "2024-01-02");
        db.load(2, "A", "x", "2024-01-02T09:00", "2024-01-02");
        db.load(2, "B", "y", "2024-01-02T09:00", "2024-01-02");
        String lateRun = H2Model.json(db.cli("run", "--json")).get("run_id").asText();

        Execution e = db.cli("status", "--json");

        assertThat(e.exitCode()).as(e.err()).isZero();
        JsonNode s = H2Model.json(e);
        assertThat(s.get("model").asText()).isEqualTo("customers");
        assertThat(s.get("metadata_exists").asBoolean()).isTrue();
        JsonNode ledger = s.get("ledger");
        assertThat(ledger).hasSize(3);
        // business order (2024-01-10 after 2024-01-02), every batch of the late run's replay carries its run id
        assertThat(ledger.get(0).get("sequence").asText()).isEqualTo("2024-01-01");
        assertThat(ledger.get(0).get("run_id").asText()).isEqualTo(firstRun);
        assertThat(ledger.get(0).get("source_rows").asLong()).isEqualTo(3);
        assertThat(ledger.get(0).get("inserted").asLong()).isEqualTo(2);
        assertThat(ledger.get(0).get("rejected").asLong()).isEqualTo(1);
        assertThat(ledger.get(1).get("sequence").asText()).isEqualTo("2024-01-02");
        assertThat(ledger.get(1).get("run_id").asText()).isEqualTo(lateRun);
        assertThat(ledger.get(1).get("rejected").asLong()).isEqualTo(2);
        assertThat(ledger.get(2).get("sequence").asText()).isEqualTo("2024-01-10");
        assertThat(ledger.get(2).get("run_id").asText()).isEqualTo(lateRun);

        JsonNode runs = s.get("runs");
        assertThat(runs).hasSize(2);
        assertThat(runs.get(0).get("run_id").asText()).isEqualTo(lateRun);
        assertThat(runs.get(0).get("status").asText()).isEqualTo("success");
        assertThat(runs.get(0).get("late_batch").asBoolean()).isTrue();
        assertThat(runs.get(0).get("replay_point").asText()).isEqualTo("2024-01-02");
        assertThat(runs.get(0).get("duration_ms").isIntegralNumber()).isTrue();
        assertThat(runs.get(1).get("run_id").asText()).isEqualTo(firstRun);

        // the late run's repair: customer 1's two versions from 2024-01-02 on (the first closed again earlier, the
        // one of 2024-01-10 opened again), kept as they were; the ledger entry of 2024-01-10 it applied again
        JsonNode repairs = s.get("repairs");
        assertThat(repairs).hasSize(1);
        assertThat(repairs.get(0).get("run_id").asText()).isEqualTo(lateRun);
        assertThat(repairs.get(0).get("every_key").asBoolean()).isFalse();
        assertThat(repairs.get(0).get("keys").asLong()).isEqualTo(1);
        assertThat(repairs.get(0).get("versions").asLong()).isEqualTo(2);
        assertThat(repairs.get(0).get("ledger_entries").asLong()).isEqualTo(1);
        assertThat(repairs.get(0).get("example_keys").toString()).isEqualTo("[\"CUSTOMER_ID=1\"]");
        assertThat(repairs.get(0).get("superseded_at").asText()).matches("\\d{4}-\\d\\d-\\d\\d [0-9:.]+");
        assertThat(s.get("repairs_error").isNull()).isTrue();
        assertThat(db.cli("status").out()).contains("repairs (versions superseded, kept as they were; newest first):")
                .contains(lateRun).contains("CUSTOMER_ID=1");

        assertThat(s.get("errors_by_reason").toString())
                .isEqualTo("[{\"reason\":\"duplicate_key\",\"rows\":2},{\"reason\":\"null_key\",\"rows\":1}]");
        assertThat(s.get("errors_by_sequence").toString()).isEqualTo("["
                + "{\"sequence\":\"2024-01-01\",\"reason\":\"null_key\",\"rows\":1},"
                + "{\"sequence\":\"2024-01-02\",\"reason\":\"duplicate_key\",\"rows\":2}]");
        assertThat(s.get("lock").get("held").asBoolean()).isFalse();
        assertThat(s.get("lock").get("according_to").asText()).isEqualTo("database");

        assertThat(H2Model.json(db.cli("status", "--json", "--runs", "1")).get("runs")).hasSize(1);
    }

    @Test
    void aRunThatDiedWithoutFinishingLeavesTheLockFreeAndIsNamed() throws Exception {
        // issue 29: a killed run's row stays 'running' in the run log; status said "lock: held" for ever after
        H2Model db = new H2Model(dir);
        db.threeBatchesApplied();
        try (var c = db.connect(); PreparedStatement ps = c.prepareStatement("INSERT INTO"
                + " itersnap_metadata.itersnap_runs (run_id, model, operation, holder, started_at, status)"
                + " VALUES ('r-42', 'customers', 'run', 'airflow worker 7', ?, 'running')")) {
            ps.setObject(1, LocalDateTime.now()); // the newest run: killed after it started
            ps.executeUpdate();
        }

        Execution e = db.cli("status");

        assertThat(e.exitCode()).as(e.err()).isZero();
        assertThat(e.out()).containsPattern("lock: free \\(left by run r-42 \\(run\\) of airflow worker 7, started "
                + "\\d{4}-\\d\\d-\\d\\d [0-9:.]+, which did not finish").doesNotContain("lock: held");
        assertThat(e.out()).contains("applied batches (ledger):").contains(" sequence ").contains(" 2024-01-05 ")
                .contains("recent runs (newest first):").contains(" success ").contains("(3 rows)")
                .contains("rows set aside (error log) by reason:");
        JsonNode lock = H2Model.json(db.cli("status", "--json")).get("lock");
        assertThat(lock.get("held").asBoolean()).isFalse();
        assertThat(lock.get("according_to").asText()).isEqualTo("database");
        assertThat(lock.get("left_by").get("run_id").asText()).isEqualTo("r-42");
        assertThat(lock.get("left_by").get("holder").asText()).isEqualTo("airflow worker 7");
        assertThat(lock.has("run_id")).isFalse();

        // a later run takes the lock and recovers: the dead run is history, the lock plainly free
        db.load(3, "New", "basic", "2024-01-06T09:00", "2024-01-06");
        assertThat(db.cli("run").exitCode()).isZero();
        assertThat(db.cli("status").out()).contains("lock: free" + System.lineSeparator());
        lock = H2Model.json(db.cli("status", "--json")).get("lock");
        assertThat(lock.get("held").asBoolean()).isFalse();
        assertThat(lock.has("left_by")).isFalse();
    }

    @Test
    void aLiveRunHoldsTheLock() throws Exception {
        H2Model db = new H2Model(dir);
        db.threeBatchesApplied();
        db.load(3, "New", "basic", "2024-01-06T09:00", "2024-01-06");
        org.h2.jdbcx.JdbcDataSource ds = new org.h2.jdbcx.JdbcDataSource();
        ds.setURL(db.url);
        java.util.concurrent.CountDownLatch started = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        String[] runId = new String[1];
        Thread run = new Thread(() -> dev.itersnap.IterativeSnapshot.builder().dataSource(ds).listener(event -> {
            if (event instanceof dev.itersnap.core.SnapshotEvent.RunStarted s) {
                runId[0] = s.runId();
                started.countDown();
                try {
                    release.await(); // the run holds the model lock while it waits here
                } catch (InterruptedException ignored) {
                    Thread.currentThread().interrupt();
                }
            }
        }).build().run(ModelFiles.load(db.config)));
        run.start();
        try {
            assertThat(started.await(60, java.util.concurrent.TimeUnit.SECONDS)).isTrue();

            Execution e = db.cli("status");

            assertThat(e.exitCode()).as(e.err()).isZero();
            assertThat(e.out()).contains("lock: held by run " + runId[0] + " (run) of ");
            JsonNode lock = H2Model.json(db.cli("status", "--json")).get("lock");
            assertThat(lock.get("held").asBoolean()).isTrue();
            assertThat(lock.get("according_to").asText()).isEqualTo("database");
            assertThat(lock.get("run_id").asText()).isEqualTo(runId[0]);
        } finally {
            release.countDown();
            run.join(60_000);
        }
        assertThat(H2Model.json(db.cli("status", "--json")).get("lock").get("held").asBoolean()).isFalse();
    }

    @Test
    void honoursMetadataSchema() throws Exception {
        H2Model db = new H2Model(dir, "metadata_schema: ops_meta\n");
        db.threeBatchesApplied();

        JsonNode s = H2Model.json(db.cli("status", "--json"));

        assertThat(s.get("metadata_schema").asText()).isEqualTo("OPS_META");
        assertThat(s.get("ledger")).hasSize(3);
    }

    @Test
    void aModelNameIsBoundNotSpliced() throws Exception {
        H2Model db = new H2Model(dir);
        db.threeBatchesApplied();
        java.nio.file.Files.writeString(db.config, java.nio.file.Files.readString(db.config)
                .replace("name: customers", "name: other_model"));

        JsonNode s = H2Model.json(db.cli("status", "--json"));

        assertThat(s.get("model").asText()).isEqualTo("other_model");
        assertThat(s.get("ledger")).isEmpty();
        assertThat(s.get("runs")).isEmpty();
    }

    @Test
    void worksWhenTheSourceNoLongerRuns() throws Exception {
        H2Model db = new H2Model(dir);
        db.threeBatchesApplied();
        db.execute("DROP TABLE raw_customers");

        JsonNode s = H2Model.json(db.cli("status", "--json"));

        assertThat(s.get("ledger")).hasSize(3);
        assertThat(s.get("runs")).hasSize(1);
    }
}
