package dev.itersnap.cli;

import dev.itersnap.dialect.postgres.PostgresServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.sql.DataSource;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code run --project --threads} on PostgreSQL (embedded 18, or ITERSNAP_PG_URL): four models' first runs at once on
 * one pool, each under its own advisory lock, sharing one metadata schema the first of them creates; then
 * {@code status} and {@code doctor} of the project, two models at a time.
 */
class ProjectPostgresTest {
    @TempDir
    Path dir;
    private DataSource database;

    @BeforeEach
    void setUp() throws Exception {
        database = PostgresServer.get().newDatabase();
    }

    @AfterEach
    void drop() {
        PostgresServer.get().drop(database);
    }

    private void sql(String... statements) throws Exception {
        try (Connection c = database.getConnection(); Statement s = c.createStatement()) {
            for (String q : statements) {
                s.execute(q);
            }
        }
    }

    private List<String> rows(String query) throws Exception {
        List<String> out = new ArrayList<>();
        try (Connection c = database.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery(query)) {
            while (rs.next()) {
                out.add(rs.getString(1) + "|" + rs.getString(2));
            }
        }
        return out;
    }

    @Test
    void fourModelsRunTwoAtATimeOnOnePool() throws Exception {
        List<String> names = List.of("customers", "orders", "products", "suppliers");
        Path project = Files.createDirectories(dir.resolve("models"));
        for (String name : names) {
            sql("CREATE TABLE raw_" + name + " (id INT, status VARCHAR(20), updated_at TIMESTAMP, file_date DATE)",
                    "INSERT INTO raw_" + name + " VALUES (1, 'new', TIMESTAMP '2024-01-01 09:00:00', DATE '2024-01-01'),"
                            + " (1, 'done', TIMESTAMP '2024-01-02 09:00:00', DATE '2024-01-02')");
            Files.writeString(project.resolve(name + ".yml"), ProjectCommandTest.model(name, ""));
        }
        Files.writeString(project.resolve("itersnap_project.yml"), "defaults:\n  metadata_schema: ops\n");
        List<String> args = new ArrayList<>(List.of("run", "--project", project.toString(), "--threads", "2"));
        args.addAll(PostgresCommandsTest.connectionOptions(database));

        Execution run = Execution.of(args.toArray(String[]::new));

        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        assertThat(run.out()).contains("4 models: 4 succeeded, 0 failed; exit code 0");
        assertThat(rows("SELECT model, COUNT(*) FROM ops.itersnap_ledger GROUP BY model ORDER BY model"))
                .containsExactly("customers|2", "orders|2", "products|2", "suppliers|2");
        for (String name : names) {
            assertThat(rows("SELECT status, CASE WHEN dbt_valid_to IS NULL THEN 'open' ELSE 'closed' END FROM "
                    + name + "_history ORDER BY dbt_valid_from")).as(name).containsExactly("new|closed", "done|open");
        }

        Execution status = Execution.of(project(args, "status", "--json"));
        assertThat(status.exitCode()).as(status.err()).isZero();
        com.fasterxml.jackson.databind.JsonNode json = new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(status.out());
        assertThat(json).hasSize(4);
        for (int i = 0; i < names.size(); i++) {
            com.fasterxml.jackson.databind.JsonNode model = json.get(i);
            assertThat(model.get("model").asText()).isEqualTo(names.get(i));
            assertThat(model.get("ledger")).as(names.get(i)).hasSize(2);
            assertThat(model.get("runs").get(0).get("status").asText()).isEqualTo("success");
            // the advisory lock asked of pg_locks: every run released its own
            assertThat(model.get("lock").get("according_to").asText()).isEqualTo("database");
            assertThat(model.get("lock").get("held").asBoolean()).isFalse();
        }

        Execution doctor = Execution.of(project(args, "doctor"));
        assertThat(doctor.exitCode()).as(doctor.out() + doctor.err()).isZero();
        assertThat(doctor.out()).containsPattern("(?m)^ suppliers \\| passed \\|    0 \\|")
                .contains("4 models: 4 passed, 0 failed; exit code 0");
    }

    /** {@code args} (run's) as {@code command}'s, with {@code extra}. */
    private static String[] project(List<String> args, String command, String... extra) {
        List<String> out = new ArrayList<>(args);
        out.set(0, command);
        out.addAll(List.of(extra));
        return out.toArray(String[]::new);
    }
}
