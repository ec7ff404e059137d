package dev.itersnap.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.List;

/** A file-based H2 database in a temp dir with a raw_customers table and a customers model file. */
final class H2Model {
    final String url;
    final Path config;

    H2Model(Path dir) throws Exception {
        this(dir, "");
    }

    /** {@code extraYaml} is appended to the model file. */
    H2Model(Path dir, String extraYaml) throws Exception {
        Files.createDirectories(dir);
        url = "jdbc:h2:" + dir.resolve("warehouse").toAbsolutePath();
        execute("CREATE TABLE raw_customers (customer_id INT, status VARCHAR(20), tier VARCHAR(20),"
                + " updated_at TIMESTAMP, file_date DATE)");
        config = Files.writeString(dir.resolve("customers.yml"), """
                name: customers
                target: customers_history
                source: SELECT customer_id, status, tier, updated_at, file_date FROM raw_customers
                unique_key: customer_id
                updated_at: updated_at
                sequence_by: file_date
                lock_timeout: 30s
                """ + extraYaml);
    }

    void load(Integer id, String status, String tier, String updatedAt, String fileDate) throws Exception {
        try (Connection c = connect(); PreparedStatement ps = c.prepareStatement(
                "INSERT INTO raw_customers VALUES (?, ?, ?, ?, ?)")) {
            ps.setObject(1, id);
            ps.setString(2, status);
            ps.setString(3, tier);
            ps.setObject(4, updatedAt == null ? null : LocalDateTime.parse(updatedAt));
            ps.setObject(5, LocalDate.parse(fileDate));
            ps.executeUpdate();
        }
    }

    void execute(String... sql) throws Exception {
        try (Connection c = connect(); Statement s = c.createStatement()) {
            for (String q : sql) {
                s.execute(q);
            }
        }
    }

    /** All rows of a query as text, for before/after comparisons. */
    List<String> rows(String sql) throws Exception {
        List<String> out = new ArrayList<>();
        try (Connection c = connect(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            int n = rs.getMetaData().getColumnCount();
            while (rs.next()) {
                StringBuilder b = new StringBuilder();
                for (int i = 1; i <= n; i++) {
                    b.append(rs.getString(i)).append('|');
                }
                out.add(b.toString());
            }
        }
        return out;
    }

    Connection connect() throws Exception {
        return DriverManager.getConnection(url);
    }

    /** Runs the itersnap command with {@code --jdbc-url} and, where the command takes it, {@code --config}. */
    Execution cli(String command, String... args) {
        List<String> all = new ArrayList<>(List.of(command, "--jdbc-url", url));
        if (!command.equals("audit")) {
            all.addAll(List.of("--config", config.toString()));
        }
        all.addAll(List.of(args));
        return Execution.of(all.toArray(String[]::new));
    }

    static JsonNode json(Execution e) throws Exception {
        return new ObjectMapper().readTree(e.out());
    }

    /** Monday, Wednesday, Friday (three customers, two changes) applied by one run. */
    void threeBatchesApplied() throws Exception {
        load(1, "Active", "basic", "2024-01-01T09:00", "2024-01-01");
        load(2, "Active", "basic", "2024-01-01T10:00", "2024-01-01");
        load(1, "Gold", "pro", "2024-01-03T09:00", "2024-01-03");
        load(2, "Active", "basic", "2024-01-01T10:00", "2024-01-03");
        load(3, "New", "basic", "2024-01-05T08:00", "2024-01-05");
        Execution run = cli("run");
        if (run.exitCode() != 0) {
            throw new AssertionError(run.err());
        }
    }
}
