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
 * one pool, each under its own advisory lock, sharing one metadata schema the first of them creates.
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
    }
}
