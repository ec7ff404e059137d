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

/** The command-line tool on DuckDB: a model over a table of a DuckDB file, and one over a folder of CSV files. */
class DuckDbCommandsTest {
    @TempDir
    Path dir;

    private static final ObjectMapper JSON = new ObjectMapper();

    private void execute(String url, String... sql) throws Exception {
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
            for (String q : sql) {
                s.execute(q);
            }
        }
    }

    private List<String> statuses(String url) throws Exception {
        return values(url, "status");
    }

    /** {@code customer_id:column} of every version, in the order of each customer's history. */
    private List<String> values(String url, String column) throws Exception {
        List<String> out = new ArrayList<>();
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT customer_id || ':' || " + column + " FROM customers_history "
                     + "ORDER BY customer_id, dbt_valid_from")) {
            while (rs.next()) {
                out.add(rs.getString(1));
            }
        }
        return out;
    }

    /**
     * Issue 36: a DuckDB file another process has open failed at once with exit 4, where a run on the other databases
     * waits for the model lock up to lock_timeout and exits 3. A command now waits for the file the same way: it says
     * so, runs once the other process lets go, and exits 3 naming the file's holder when lock_timeout passes first.
     */
    @Test
    void aDuckDbFileAnotherProcessHoldsIsWaitedForUpToLockTimeout() throws Exception {
        Path file = dir.resolve("warehouse.duckdb");
        String url = "jdbc:duckdb:" + file;
        execute(url, "CREATE TABLE raw_customers (customer_id INT, status VARCHAR, updated_at TIMESTAMP, "
                + "file_date DATE)", "INSERT INTO raw_customers VALUES (1, 'Active', '2024-01-01 09:00', '2024-01-01')");
        String model = """
                name: customers
                target: customers_history
                source: SELECT * FROM raw_customers
                unique_key: customer_id
                updated_at: updated_at
                sequence_by: file_date
                """;
        Path patient = Files.writeString(dir.resolve("patient.yml"), model + "lock_timeout: 60s\n");
        Path hasty = Files.writeString(dir.resolve("hasty.yml"), model + "lock_timeout: 2s\n");

        try (dev.itersnap.conformance.ChildJvm holder = dev.itersnap.conformance.ChildJvm.start(HoldFile.class,
                "64m", List.of(), url, "600000")) {
            assertThat(holder.nextLine(60_000)).as(holder.output()).isEqualTo("holding");
            long start = System.nanoTime();
            Execution refused = Execution.of("run", "--jdbc-url", url, "--config", hasty.toString());
            long waited = (System.nanoTime() - start) / 1_000_000;

            assertThat(refused.exitCode()).as(refused.err()).isEqualTo(ExitCodes.LOCK_TIMEOUT);
            assertThat(refused.errLines()).first().asString().startsWith("waiting for the DuckDB file: another "
                    + "process holds it (held by ").contains("(PID ").endsWith("waiting up to lock_timeout 2s");
            assertThat(refused.errLines()).last().asString().contains("another process holds the DuckDB file")
                    .contains("not released within lock_timeout 2s");
            assertThat(waited).as("ms").isBetween(1_900L, 30_000L);
        }
        try (dev.itersnap.conformance.ChildJvm holder = dev.itersnap.conformance.ChildJvm.start(HoldFile.class,
                "64m", List.of(), url, "3000")) {
            assertThat(holder.nextLine(60_000)).as(holder.output()).isEqualTo("holding");
            Execution waited = Execution.of("run", "--jdbc-url", url, "--config", patient.toString());

            assertThat(waited.exitCode()).as(waited.err()).isZero();
            assertThat(waited.err()).contains("waiting for the DuckDB file");
            assertThat(statuses(url)).containsExactly("1:Active");
        }
    }

    /** A process that opens a DuckDB file, says "holding", and keeps it open for the given milliseconds. */
    public static final class HoldFile {
        public static void main(String[] args) throws Exception {
            try (Connection c = DriverManager.getConnection(args[0]); Statement s = c.createStatement()) {
                s.execute("SELECT 1");
                System.out.println("holding");
                System.out.flush();
                Thread.sleep(Long.parseLong(args[1]));
            }
        }
    }

    @Test
    void runsAModelOnATableOfADuckDbFile() throws Exception {
        String url = "jdbc:duckdb:" + dir.resolve("warehouse.duckdb");
        execute(url, "CREATE TABLE raw_customers (customer_id INT, status VARCHAR, updated_at TIMESTAMP, "
                + "file_date DATE)", "INSERT INTO raw_customers VALUES (1, 'Active', '2024-01-01 09:00', "
                + "'2024-01-01'), (1, 'Gold', '2024-01-03 09:00', '2024-01-03')");
        Path config = Files.writeString(dir.resolve("customers.yml"), """
                name: customers
                target: customers_history
                source: SELECT * FROM raw_customers
                unique_key: customer_id
                updated_at: updated_at
                sequence_by: file_date
                """);

        Execution first = Execution.of("run", "--jdbc-url", url, "--config", config.toString(), "--json");
        assertThat(first.exitCode()).as(first.err()).isZero();
        assertThat(JSON.readTree(first.out()).get("batches_applied").asInt()).isEqualTo(2);

        execute(url, "INSERT INTO raw_customers VALUES (1, 'Premium', '2024-01-02 09:00', '2024-01-02')");
        Execution late = Execution.of("run", "--jdbc-url", url, "--config", config.toString(), "--json");
        assertThat(late.exitCode()).as(late.err()).isZero();
        assertThat(JSON.readTree(late.out()).get("late_batch_found").asBoolean()).isTrue();
        assertThat(statuses(url)).containsExactly("1:Active", "1:Premium", "1:Gold");

        Execution status = Execution.of("status", "--jdbc-url", url, "--config", config.toString());
        assertThat(status.exitCode()).as(status.err()).isZero();
        assertThat(status.out()).contains("2024-01-03");
    }

    /**
     * The example of examples/folder-of-files as its README runs it, on a copy of the folder (the model's paths are
     * relative to the directory the command runs in, so the copy's absolute path is put in front of them).
     */
    @Test
    void theFolderOfFilesExampleRepairsTheHistoryWhenTuesdaysFileIsLate() throws Exception {
        Path example = Path.of("..", "examples", "folder-of-files");
        Path copy = Files.createDirectories(dir.resolve("example"));
        for (String f : List.of("customers.yml", "exports/customers_2024-03-04.csv",
                "exports/customers_2024-03-06.csv", "late/customers_2024-03-05.csv")) {
            Files.createDirectories(copy.resolve(f).getParent());
            Files.copy(example.resolve(f), copy.resolve(f));
        }
        Path config = copy.resolve("customers.yml");
        Files.writeString(config, Files.readString(config).replace("'exports/", "'" + copy + "/exports/"));
        String url = "jdbc:duckdb:" + copy.resolve("history.duckdb");

        Execution first = Execution.of("run", "--jdbc-url", url, "--config", config.toString());
        assertThat(first.exitCode()).as(first.err()).isZero();
        Files.copy(copy.resolve("late/customers_2024-03-05.csv"), copy.resolve("exports/customers_2024-03-05.csv"));
        Execution late = Execution.of("run", "--jdbc-url", url, "--config", config.toString());
        assertThat(late.exitCode()).as(late.err()).isZero();
        assertThat(late.err()).contains("late batch detected: 2024-03-05 < 2024-03-06, replaying from 2024-03-05");
        assertThat(values(url, "tier")).containsExactly("1:silver", "1:gold", "1:platinum", "2:silver", "2:gold");
        Execution status = Execution.of("status", "--jdbc-url", url, "--config", config.toString());
        assertThat(status.exitCode()).as(status.err()).isZero();
        assertThat(status.out()).contains("2024-03-04", "2024-03-05", "2024-03-06");

        // issue 36: a file without its header was read with made-up columns (column0, ...) and applied as a schema
        // change with exit 0, and a bad date in a file's name was reported without the file; each stops the run
        // now with exit 4, naming the file, and nothing is written
        List<String> history = values(url, "tier");
        for (String[] malformed : new String[][] {
                {"customers_2024-03-07.csv", "1,diamond,2024-03-07 09:00:00\n"}, // one line, no header: the README's
                {"customers_2024-03-07.csv", "1,diamond,2024-03-07 09:00:00\n2,gold,2024-03-06 09:00:00\n"},
                {"customers_2024-03-07.csv", "id,level,changed\n1,diamond,2024-03-07 09:00:00\n"},
                {"customers_2024-03-07.csv", "customer_id,tier,updated_at\n1,diamond,2024-03-07 09:00:00\n2,gold\n"},
                {"customers_2024-03-07.csv", "customer_id,tier,updated_at\none,diamond,2024-03-07 09:00:00\n"},
                {"customers_2024-03-07.csv", "customer_id,tier,updated_at\n"},
                {"customers_2024-02-30.csv", "customer_id,tier,updated_at\n1,diamond,2024-03-07 09:00:00\n"},
                {"customers_latest.csv", "customer_id,tier,updated_at\n1,diamond,2024-03-07 09:00:00\n"}}) {
            Path file = Files.writeString(copy.resolve("exports").resolve(malformed[0]), malformed[1]);
            for (String[] options : new String[][] {{}, {"--json"}}) {
                List<String> args = new ArrayList<>(List.of("run", "--jdbc-url", url, "--config", config.toString()));
                args.addAll(List.of(options));
                Execution refused = Execution.of(args.toArray(String[]::new));
                assertThat(refused.exitCode()).as(malformed[1]).isEqualTo(ExitCodes.DATABASE);
                assertThat(refused.errLines()).as(malformed[1]).last().asString().contains(malformed[0])
                        .doesNotContain("column0").doesNotContain("SQLState null"); // DuckDB gives no SQLState
            }
            assertThat(values(url, "tier")).as("nothing written: " + malformed[1]).isEqualTo(history);
            Files.delete(file);
        }
        Execution after = Execution.of("status", "--jdbc-url", url, "--config", config.toString());
        assertThat(after.out().lines().filter(l -> l.startsWith(" 2024-"))).as("no batch recorded").hasSize(3);

        // the columns are matched by name: a file with them in another order is read as it should be
        Files.writeString(copy.resolve("exports/customers_2024-03-07.csv"),
                "tier,updated_at,customer_id\ndiamond,2024-03-07 09:00:00,1\n");
        Execution reordered = Execution.of("run", "--jdbc-url", url, "--config", config.toString());
        assertThat(reordered.exitCode()).as(reordered.err()).isZero();
        assertThat(values(url, "tier")).containsExactly("1:silver", "1:gold", "1:platinum", "1:diamond", "2:silver",
                "2:gold");
    }

    @Test
    void runsAModelOnAFolderOfCsvFilesAndALateFile() throws Exception {
        Path exports = Files.createDirectories(dir.resolve("exports"));
        Files.writeString(exports.resolve("customers_2024-01-01.csv"), "customer_id,status,updated_at\n"
                + "1,Active,2024-01-01 09:00:00\n2,Active,2024-01-01 09:00:00\n");
        Files.writeString(exports.resolve("customers_2024-01-03.csv"), "customer_id,status,updated_at\n"
                + "1,Gold,2024-01-03 09:00:00\n2,Active,2024-01-01 09:00:00\n");
        String url = "jdbc:duckdb:" + dir.resolve("history.duckdb");
        Path config = Files.writeString(dir.resolve("customers.yml"), """
                name: customers
                target: customers_history
                source: >-
                  SELECT * EXCLUDE (filename),
                         CAST(regexp_extract(filename, 'customers_(\\d{4}-\\d{2}-\\d{2})\\.csv$', 1) AS DATE) AS file_date
                  FROM read_csv('%s/customers_*.csv', filename = true, union_by_name = true,
                                types = {'customer_id': 'INTEGER', 'status': 'VARCHAR', 'updated_at': 'TIMESTAMP'})
                unique_key: customer_id
                updated_at: updated_at
                sequence_by: file_date
                hard_deletes: invalidate
                """.formatted(exports));

        Execution first = Execution.of("run", "--jdbc-url", url, "--config", config.toString(), "--json");
        assertThat(first.exitCode()).as(first.err()).isZero();
        assertThat(JSON.readTree(first.out()).get("batches_applied").asInt()).isEqualTo(2);

        // the file of 2024-01-02 lands after that of 2024-01-03 was applied
        Files.writeString(exports.resolve("customers_2024-01-02.csv"), "customer_id,status,updated_at\n"
                + "1,Premium,2024-01-02 09:00:00\n2,Active,2024-01-01 09:00:00\n");
        Execution late = Execution.of("run", "--jdbc-url", url, "--config", config.toString(), "--json");
        assertThat(late.exitCode()).as(late.err()).isZero();
        JsonNode json = JSON.readTree(late.out());
        assertThat(json.get("late_batch_found").asBoolean()).isTrue();
        assertThat(json.get("replay_point").asText()).isEqualTo("2024-01-02");
        assertThat(statuses(url)).containsExactly("1:Active", "1:Premium", "1:Gold", "2:Active");
    }
}
