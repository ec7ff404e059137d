package dev.itersnap.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A project of models on one DuckDB file: {@code run --project --threads 2} with a model whose source table is missing
 * among three that work (the others are applied, the exit code is the failed model's), then, with the table there,
 * {@code run} again, {@code status --json} and {@code doctor} of the project.
 */
class ProjectDuckDbTest {
    @TempDir
    Path dir;

    private void execute(String url, String... sql) throws Exception {
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
            for (String q : sql) {
                s.execute(q);
            }
        }
    }

    private List<String> versions(String url, String name) throws Exception {
        List<String> out = new ArrayList<>();
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT status, CASE WHEN dbt_valid_to IS NULL THEN 'open' ELSE 'closed' "
                     + "END FROM " + name + "_history ORDER BY dbt_valid_from")) {
            while (rs.next()) {
                out.add(rs.getString(1) + "|" + rs.getString(2));
            }
        }
        return out;
    }

    private static String[] raw(String name) {
        return new String[] {"CREATE TABLE raw_" + name + " (id INT, status VARCHAR, updated_at TIMESTAMP, file_date DATE)",
                "INSERT INTO raw_" + name + " VALUES (1, 'new', TIMESTAMP '2024-01-01 09:00:00', DATE '2024-01-01'), "
                        + "(1, 'done', TIMESTAMP '2024-01-02 09:00:00', DATE '2024-01-02')"};
    }

    @Test
    void aProjectRunsOnADuckDbFileWithAFailingModelAmongThemAndReportsEachModel() throws Exception {
        String url = "jdbc:duckdb:" + dir.resolve("warehouse.duckdb");
        List<String> names = List.of("customers", "orders", "products");
        Path project = Files.createDirectories(dir.resolve("models"));
        for (String name : names) {
            execute(url, raw(name));
            Files.writeString(project.resolve(name + ".yml"), ProjectCommandTest.model(name, ""));
        }
        Files.writeString(project.resolve("suppliers.yml"), ProjectCommandTest.model("suppliers", ""));
        String[] run = {"run", "--project", project.toString(), "--threads", "2", "--jdbc-url", url};

        Execution first = Execution.of(run);

        assertThat(first.exitCode()).as(first.out() + first.err()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(first.out()).contains("4 models: 3 succeeded, 1 failed; exit code 2");
        assertThat(first.errLines()).anySatisfy(l -> assertThat(l).startsWith("itersnap: suppliers: ")
                .contains("raw_suppliers"));
        for (String name : names) {
            assertThat(versions(url, name)).as(name).containsExactly("new|closed", "done|open");
        }

        execute(url, raw("suppliers"));
        Execution second = Execution.of(run);
        assertThat(second.exitCode()).as(second.out() + second.err()).isZero();
        assertThat(second.out()).contains("4 models: 4 succeeded, 0 failed; exit code 0");
        assertThat(versions(url, "suppliers")).containsExactly("new|closed", "done|open");

        Execution status = Execution.of("status", "--project", project.toString(), "--json", "--jdbc-url", url);
        assertThat(status.exitCode()).as(status.err()).isZero();
        JsonNode json = new ObjectMapper().readTree(status.out());
        assertThat(json).hasSize(4);
        for (JsonNode model : json) {
            assertThat(model.get("ledger")).as(model.get("model").asText()).hasSize(2);
            assertThat(model.get("runs").get(0).get("status").asText()).isEqualTo("success");
        }

        Execution doctor = Execution.of("doctor", "--project", project.toString(), "--jdbc-url", url);
        assertThat(doctor.exitCode()).as(doctor.out() + doctor.err()).isZero();
        assertThat(doctor.out()).contains("4 models: 4 passed, 0 failed; exit code 0");
    }
}
