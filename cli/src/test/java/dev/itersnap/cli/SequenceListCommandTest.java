package dev.itersnap.cli;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A model with {@code sequence_by: [file_date, file_no]} through the commands: every batch is shown as its tuple
 * (validate, run, status, replay and its dry run), in business order (file 10 after file 9), and a tuple names the
 * point of a replay, with or without parentheses.
 */
class SequenceListCommandTest {
    @TempDir
    Path dir;
    private String url;
    private Path config;

    @BeforeEach
    void setUp() throws Exception {
        url = "jdbc:h2:" + dir.resolve("warehouse").toAbsolutePath();
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE raw_files (id INT, status VARCHAR(20), updated_at TIMESTAMP, file_date DATE,"
                    + " file_no INT)");
        }
        config = Files.writeString(dir.resolve("files.yml"), """
                name: files
                target: files_history
                source: SELECT id, status, updated_at, file_date, file_no FROM raw_files
                unique_key: id
                updated_at: updated_at
                sequence_by: [file_date, file_no]
                """);
        load(1, "new", "2024-01-01T08:00", "2024-01-01", 9);
        load(1, "active", "2024-01-02T08:00", "2024-01-02", 1);
    }

    private void load(int id, String status, String updatedAt, String fileDate, int fileNo) throws Exception {
        try (Connection c = DriverManager.getConnection(url);
             PreparedStatement ps = c.prepareStatement("INSERT INTO raw_files VALUES (?, ?, ?, ?, ?)")) {
            ps.setInt(1, id);
            ps.setString(2, status);
            ps.setObject(3, LocalDateTime.parse(updatedAt));
            ps.setObject(4, LocalDate.parse(fileDate));
            ps.setInt(5, fileNo);
            ps.executeUpdate();
        }
    }

    private Execution cli(String command, String... args) {
        List<String> all = new ArrayList<>(List.of(command, "--jdbc-url", url, "--config", config.toString()));
        all.addAll(List.of(args));
        return Execution.of(all.toArray(String[]::new));
    }

    private static Execution ok(Execution e) {
        assertThat(e.exitCode()).as(e.err()).isZero();
        return e;
    }

    @Test
    void everyCommandShowsTheBatchesAsTuplesInBusinessOrder() throws Exception {
        assertThat(ok(cli("validate")).out()).containsIgnoringCase("sequence_by: file_date, file_no (list: date, integer)");
        ok(cli("run"));
        load(1, "pending", "2024-01-01T20:00", "2024-01-01", 10);

        Execution late = ok(cli("run"));
        assertThat(late.out()).contains("replayed from (2024-01-01, 10)");
        assertThat(late.err()).contains("late batch detected: (2024-01-01, 10) < (2024-01-02, 1), replaying from "
                + "(2024-01-01, 10)");

        JsonNode status = H2Model.json(ok(cli("status", "--json")));
        List<String> ledger = new ArrayList<>();
        status.get("ledger").forEach(r -> ledger.add(r.get("sequence").asText()));
        assertThat(ledger).containsExactly("(2024-01-01, 9)", "(2024-01-01, 10)", "(2024-01-02, 1)");

        JsonNode plan = H2Model.json(ok(cli("replay", "--from", "(2024-01-01, 10)", "--dry-run", "--json")));
        assertThat(plan.get("replay_point").asText()).isEqualTo("(2024-01-01, 10)");
        assertThat(plan.get("rolled_back").toString()).isEqualTo("[\"(2024-01-01, 10)\",\"(2024-01-02, 1)\"]");

        Execution replay = ok(cli("replay", "--from", "2024-01-01,10"));
        assertThat(replay.out()).contains("(2024-01-01, 10)");

        Execution bad = cli("replay", "--from", "2024-01-01");
        assertThat(bad.exitCode()).isNotZero();
        assertThat(bad.err()).containsIgnoringCase("file_date, file_no").contains("needs 2");

        // both timelines need one sequence column: refused naming the list and the read that answers instead
        Execution both = cli("as-of", "--bitemporal");
        assertThat(both.exitCode()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(both.err()).containsIgnoringCase("file_date, file_no").contains("--known-at");
    }
}
