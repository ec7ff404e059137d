package dev.itersnap.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.itersnap.dialect.postgres.PostgresServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.postgresql.ds.PGSimpleDataSource;

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
 * validate, status, replay, full-refresh and audit against PostgreSQL (embedded 18, or ITERSNAP_PG_URL): identifiers
 * fold to lower case there, the lock is an advisory lock, timestamps come back as java.sql.Timestamp.
 */
class PostgresCommandsTest {
    @TempDir
    Path dir;
    private DataSource database;
    private Path config;

    @BeforeEach
    void setUp() throws Exception {
        database = PostgresServer.get().newDatabase();
        sql("CREATE TABLE raw_customers (customer_id INT, status VARCHAR(20), tier VARCHAR(20),"
                + " updated_at TIMESTAMP, file_date DATE)");
        config = Files.writeString(dir.resolve("customers.yml"), """
                name: customers
                target: customers_history
                source: SELECT customer_id, status, tier, updated_at, file_date FROM raw_customers
                unique_key: customer_id
                updated_at: updated_at
                sequence_by: file_date
                metadata_schema: ops
                lock_timeout: 30s
                """);
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
        try (Connection c = database.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(query)) {
            while (rs.next()) {
                StringBuilder b = new StringBuilder();
                for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) {
                    b.append(rs.getString(i)).append('|');
                }
                out.add(b.toString());
            }
        }
        return out;
    }

    private Execution cli(String command, boolean withConfig, String... args) {
        List<String> all = new ArrayList<>(List.of(command));
        all.addAll(connectionOptions(database));
        if (withConfig) {
            all.addAll(List.of("--config", config.toString()));
        }
        all.addAll(List.of(args));
        return Execution.of(all.toArray(String[]::new));
    }

    private static JsonNode json(Execution e) throws Exception {
        assertThat(e.exitCode()).as(e.err()).isZero();
        return new ObjectMapper().readTree(e.out());
    }

    private void file(String date, String... rows) throws Exception {
        for (String r : rows) {
            sql("INSERT INTO raw_customers VALUES (" + r + ", DATE '" + date + "')");
        }
    }

    @Test
    void validateStatusLateBatchReplayFullRefreshAndAudit() throws Exception {
        Execution valid = cli("validate", true);
        assertThat(valid.exitCode()).as(valid.err()).isZero();
        assertThat(valid.out()).contains("valid: model customers").contains("sequence_by: file_date (date)");
        assertThat(json(cli("status", true, "--json")).get("metadata_exists").asBoolean()).isFalse();
        assertThat(rows("SELECT 1 FROM information_schema.schemata WHERE schema_name = 'ops'")).isEmpty();

        file("2024-01-01", "1, 'Active', 'basic', TIMESTAMP '2024-01-01 09:00'", "2, 'Active', 'basic', TIMESTAMP '2024-01-01 10:00'");
        file("2024-01-03", "1, 'Gold', 'pro', TIMESTAMP '2024-01-03 09:00'", "2, 'Active', 'basic', TIMESTAMP '2024-01-01 10:00'");
        String first = json(cli("run", true, "--json")).get("run_id").asText();
        file("2024-01-02", "1, 'Premium', 'plus', TIMESTAMP '2024-01-02 09:00'", "NULL, 'Ghost', 'x', TIMESTAMP '2024-01-02 09:00'");

        JsonNode plan = json(cli("replay", true, "--from", "2024-01-03", "--dry-run", "--json"));
        assertThat(plan.get("late_batch_found").asBoolean()).isTrue();
        assertThat(plan.get("replay_point").asText()).isEqualTo("2024-01-02");
        assertThat(plan.get("rolled_back").toString()).isEqualTo("[\"2024-01-03\"]");
        assertThat(rows("SELECT COUNT(*) FROM ops.itersnap_ledger")).containsExactly("2|");

        String late = json(cli("run", true, "--json")).get("run_id").asText();
        JsonNode status = json(cli("status", true, "--json"));
        assertThat(status.get("metadata_schema").asText()).isEqualTo("ops");
        assertThat(status.get("ledger")).hasSize(3);
        assertThat(status.get("ledger").get(0).get("run_id").asText()).isEqualTo(first);
        assertThat(status.get("ledger").get(1).get("sequence").asText()).isEqualTo("2024-01-02");
        assertThat(status.get("ledger").get(1).get("run_id").asText()).isEqualTo(late);
        assertThat(status.get("runs").get(0).get("late_batch").asBoolean()).isTrue();
        assertThat(status.get("runs").get(0).get("duration_ms").isIntegralNumber()).isTrue();
        assertThat(status.get("errors_by_reason").toString()).isEqualTo("[{\"reason\":\"null_key\",\"rows\":1}]");
        assertThat(status.get("lock").get("held").asBoolean()).isFalse();
        Execution text = cli("status", true);
        assertThat(text.exitCode()).as(text.err()).isZero();
        assertThat(text.out()).contains(" 2024-01-02 ").contains(" null_key ");

        Execution refuse = cli("full-refresh", true);
        assertThat(refuse.exitCode()).isEqualTo(ExitCodes.CONFIGURATION);
        List<String> history = rows("SELECT customer_id, status, dbt_valid_from, dbt_valid_to FROM customers_history"
                + " ORDER BY 1, 3");
        JsonNode refreshed = json(cli("full-refresh", true, "--yes", "--json"));
        assertThat(refreshed.get("batches_applied").asInt()).isEqualTo(3);
        assertThat(rows("SELECT customer_id, status, dbt_valid_from, dbt_valid_to FROM customers_history ORDER BY 1, 3"))
                .isEqualTo(history);
        JsonNode replayed = json(cli("replay", true, "--from", "2024-01-02", "--json"));
        assertThat(replayed.get("batches_applied").asInt()).isEqualTo(2);

        Execution asOf = cli("as-of", true, "--sequence", "2024-01-02", "--create-view", "customers_tuesday");
        assertThat(asOf.exitCode()).as(asOf.err()).isZero();
        assertThat(rows("SELECT customer_id, status FROM customers_tuesday ORDER BY 1"))
                .containsExactly("1|Premium|", "2|Active|");
        Execution asOfTime = cli("as-of", true, "--time", "2024-01-01 09:30:00", "--json");
        assertThat(asOfTime.exitCode()).as(asOfTime.err()).isZero();
        assertThat(asOfTime.out()).contains("dbt_valid_from");

        Files.writeString(config, Files.readString(config).replace("FROM raw_customers",
                "FROM raw_customers WHERE customer_id IS NOT NULL"));
        Execution changed = cli("run", true);
        assertThat(changed.exitCode()).isEqualTo(ExitCodes.LOGIC_CHANGE);
        assertThat(changed.errLines()).singleElement().asString().contains("source was");
        assertThat(cli("run", true, "--accept-logic-change").exitCode()).isZero();

        Execution audit = cli("audit", false, "--table", "customers_history", "--key", "customer_id", "--source",
                "SELECT * FROM raw_customers", "--sequence-by", "file_date");
        assertThat(audit.exitCode()).as(audit.out() + audit.err()).isZero();
        assertThat(audit.out()).contains("clean: no problem found");

        sql("UPDATE customers_history SET dbt_valid_to = NULL WHERE customer_id = 1");
        JsonNode corrupted = new ObjectMapper().readTree(cli("audit", false, "--table", "customers_history", "--key",
                "customer_id", "--json").out());
        assertThat(corrupted.get("checks").get("multiple_current").get("count").asLong()).isEqualTo(1);
        assertThat(corrupted.get("checks").get("overlap").get("count").asLong()).isEqualTo(2);
    }

    /**
     * Issue 36: {@code audit --source} with a data-modifying CTE printed "Connection is closed", the real error lost.
     * PostgreSQL refuses a data-modifying WITH inside the audit's query (SQLState 0A000, after which HikariCP closes
     * the connection, and restoring the connection's read-only flag failed instead); the message now says what
     * PostgreSQL said and names the option, and the raw batches are untouched.
     */
    @Test
    void anAuditSourceThatWritesIsRefusedSayingWhy() throws Exception {
        file("2024-01-01", "1, 'Active', 'basic', TIMESTAMP '2024-01-01 09:00'");
        assertThat(cli("run", true).exitCode()).isZero();

        for (String[] options : new String[][] {{}, {"--json"}}) {
            List<String> args = new ArrayList<>(List.of("--table", "customers_history", "--key", "customer_id",
                    "--source", "WITH gone AS (DELETE FROM raw_customers RETURNING *) SELECT * FROM gone",
                    "--sequence-by", "file_date"));
            args.addAll(List.of(options));
            Execution audit = cli("audit", false, args.toArray(String[]::new));

            assertThat(audit.exitCode()).as(audit.err()).isEqualTo(ExitCodes.CONFIGURATION);
            assertThat(audit.errLines()).singleElement().asString().contains("option --source")
                    .contains("WITH clause containing a data-modifying statement must be at the top level")
                    .doesNotContain("Connection is closed");
        }
        assertThat(rows("SELECT customer_id FROM raw_customers")).containsExactly("1|");
    }

    /**
     * Issue 36: validate and doctor accepted a 1,597-column source that run could not create (a PostgreSQL table has
     * at most 1,600 columns, and the history adds the engine's own). All three now refuse it up front, naming the
     * limit and the counts, and nothing is written (the widest sources that run: PostgresWideSourceTest).
     */
    @Test
    void aSourceTooWideForTheHistoryIsRefusedByValidateDoctorAndRun() throws Exception {
        StringBuilder columns = new StringBuilder();
        for (int i = 1; i <= 1597 - 3; i++) {
            columns.append(", c").append(i).append(" INT");
        }
        sql("CREATE TABLE wide (customer_id INT, updated_at TIMESTAMP, file_date DATE" + columns + ")",
                "INSERT INTO wide (customer_id, updated_at, file_date) VALUES (1, TIMESTAMP '2024-01-01 09:00', "
                        + "DATE '2024-01-01')");
        Files.writeString(config, Files.readString(config).replace(
                "SELECT customer_id, status, tier, updated_at, file_date FROM raw_customers", "SELECT * FROM wide"));

        for (String command : new String[] {"validate", "run", "doctor"}) {
            Execution e = cli(command, true);
            assertThat(e.exitCode()).as(command).isEqualTo(ExitCodes.CONFIGURATION);
            assertThat(e.out() + e.err()).as(command).contains("the source query returns 1597 columns, 1594 of them "
                    + "tracked; the engine adds 8, so table customers_history would have 1605 columns, and a postgres table has at most 1600")
                    .contains("postgres allows 1664 in a query: select fewer columns in the source query");
        }
        assertThat(rows("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' "
                + "ORDER BY 1")).containsExactly("raw_customers|", "wide|");
        assertThat(rows("SELECT schema_name FROM information_schema.schemata WHERE schema_name = 'ops'")).isEmpty();
    }

    @Test
    void auditFindsEachCorruptionOfADbtSnapshot() throws Exception {
        sql("CREATE SCHEMA snapshots", "CREATE TABLE snapshots.customers_snapshot (id INT, name TEXT,"
                + " dbt_updated_at TIMESTAMP, dbt_valid_from TIMESTAMP, dbt_valid_to TIMESTAMP)",
                "INSERT INTO snapshots.customers_snapshot VALUES"
                        // clean
                        + " (100, 'a', '2024-01-01', '2024-01-01', '2024-01-04'), (100, 'b', '2024-01-04', '2024-01-04', NULL),"
                        // out of order: the version after Wednesday's is Tuesday's
                        + " (1, 'a', '2024-01-01', '2024-01-01', '2024-01-03'), (1, 'b', '2024-01-03', '2024-01-03', '2024-01-05'),"
                        + " (1, 'c', '2024-01-02', '2024-01-05', NULL),"
                        // overlap
                        + " (2, 'a', '2024-01-01', '2024-01-01', '2024-01-05'), (2, 'b', '2024-01-03', '2024-01-03', NULL),"
                        // gap
                        + " (3, 'a', '2024-01-01', '2024-01-01', '2024-01-02'), (3, 'b', '2024-01-03', '2024-01-03', NULL),"
                        // inverted
                        + " (4, 'a', '2024-01-05', '2024-01-05', '2024-01-02'),"
                        // two current versions (and so an overlap)
                        + " (5, 'a', '2024-01-01', '2024-01-01', NULL), (5, 'b', '2024-01-03', '2024-01-03', NULL)");

        Execution e = cli("audit", false, "--table", "snapshots.customers_snapshot", "--key", "id", "--json");

        assertThat(e.exitCode()).as(e.err()).isEqualTo(ExitCodes.AUDIT_PROBLEMS);
        JsonNode checks = new ObjectMapper().readTree(e.out()).get("checks");
        assertThat(checks.get("out_of_order").get("count").asLong()).isEqualTo(1);
        assertThat(checks.get("out_of_order").get("examples").get(0).get("id").asText()).isEqualTo("1");
        assertThat(checks.get("overlap").get("count").asLong()).isEqualTo(2);
        assertThat(checks.get("gap").get("count").asLong()).isEqualTo(1);
        assertThat(checks.get("gap").get("examples").get(0).get("id").asText()).isEqualTo("3");
        assertThat(checks.get("inverted").get("count").asLong()).isEqualTo(1);
        assertThat(checks.get("inverted").get("examples").get(0).get("id").asText()).isEqualTo("4");
        assertThat(checks.get("multiple_current").get("count").asLong()).isEqualTo(1);
        assertThat(checks.get("multiple_current").get("examples").get(0).get("id").asText()).isEqualTo("5");
    }

    /** The CLI's connection options for a database of the test server. */
    static List<String> connectionOptions(DataSource database) {
        PGSimpleDataSource pg = (PGSimpleDataSource) database;
        List<String> options = new ArrayList<>(List.of("--jdbc-url", pg.getURL(), "--user", pg.getUser()));
        if (pg.getPassword() != null && !pg.getPassword().isEmpty()) {
            options.addAll(List.of("--password", pg.getPassword()));
        }
        return options;
    }

    /** The dbt snapshot of {@link #adoptADbtSnapshot}, with files 1 to 4 in the source. */
    private void dbtSnapshot() throws Exception {
        sql("CREATE TABLE customers_history (customer_id INT, status VARCHAR(20), tier VARCHAR(20), "
                + "updated_at TIMESTAMP, file_date DATE, dbt_scd_id VARCHAR(32), dbt_updated_at TIMESTAMP, "
                + "dbt_valid_from TIMESTAMP, dbt_valid_to TIMESTAMP)");
        String[][] versions = {{"A", "01", "'2024-01-02 09:00'"}, {"B", "02", "'2024-01-04 09:00'"},
                {"D", "04", "'2024-01-03 09:00'"}, {"C", "03", "NULL"}};
        for (String[] v : versions) {
            String at = "TIMESTAMP '2024-01-" + v[1] + " 09:00'";
            file("2024-01-" + v[1], "1, '" + v[0] + "', 'gold', " + at);
            sql("INSERT INTO customers_history VALUES (1, '" + v[0] + "', 'gold', " + at + ", DATE '2024-01-" + v[1]
                    + "', md5('1|2024-01-" + v[1] + " 09:00'), " + at + ", " + at + ", CAST(" + v[2]
                    + " AS TIMESTAMP))");
        }
    }

    /** adopt --rebuild-from on PostgreSQL: files 1 and 2 aged out; the retained range is rebuilt in order. */
    @Test
    void adoptRebuildingADbtSnapshot() throws Exception {
        dbtSnapshot();
        sql("DELETE FROM raw_customers WHERE file_date < DATE '2024-01-03'");
        file("2024-01-05", "1, 'E', 'gold', TIMESTAMP '2024-01-05 09:00'");

        JsonNode o = json(cli("adopt", true, "--rebuild-from", "2024-01-03", "--yes", "--json"));

        assertThat(o.get("changes").get("added").get("count").asLong()).isEqualTo(1);
        assertThat(o.get("changes").get("redated").get("count").asLong()).isEqualTo(3);
        assertThat(o.get("audit_after").get("problems").asLong()).isZero();
        assertThat(rows("SELECT status, dbt_valid_to FROM customers_history ORDER BY dbt_valid_from"))
                .containsExactly("A|2024-01-02 09:00:00|", "B|2024-01-03 09:00:00|", "C|2024-01-04 09:00:00|",
                        "D|2024-01-05 09:00:00|", "E|null|");
        assertThat(rows("SELECT COUNT(*) FROM customers_history_before_adopt")).containsExactly("4|");
    }

    /**
     * adopt on PostgreSQL: a dbt snapshot a late file damaged (Jan 3 applied after Jan 4: an inverted and two
     * overlapping versions) is refused by the audit (exit 5, nothing written), adopted with --accept-problems, runs on
     * with the next file, and a batch before the adoption point is refused (exit 7).
     */
    @Test
    void adoptADbtSnapshot() throws Exception {
        dbtSnapshot();
        String table = "SELECT status, dbt_scd_id, dbt_valid_from, dbt_valid_to FROM customers_history ORDER BY "
                + "dbt_valid_from";
        List<String> before = rows(table);

        Execution refused = cli("adopt", true, "--through", "2024-01-04", "--yes");
        assertThat(refused.exitCode()).as(refused.err()).isEqualTo(ExitCodes.AUDIT_PROBLEMS);
        assertThat(refused.out()).contains("overlap: 2", "inverted: 1", "not adopted");
        assertThat(rows("SELECT column_name FROM information_schema.columns WHERE table_name = 'customers_history'"))
                .hasSize(9);

        JsonNode adopted = json(cli("adopt", true, "--through", "2024-01-04", "--yes", "--accept-problems",
                "--json"));
        assertThat(adopted.get("adopted").asBoolean()).isTrue();
        assertThat(adopted.get("audit").get("problems").asLong()).isEqualTo(3);
        assertThat(rows(table)).isEqualTo(before);

        file("2024-01-05", "1, 'E', 'gold', TIMESTAMP '2024-01-05 09:00'");
        assertThat(json(cli("run", true, "--json")).get("batches_applied").asInt()).isEqualTo(1);
        assertThat(rows("SELECT status, dbt_valid_to FROM customers_history ORDER BY dbt_valid_from"))
                .containsExactly("A|2024-01-02 09:00:00|", "B|2024-01-04 09:00:00|", "C|2024-01-05 09:00:00|",
                        "D|2024-01-03 09:00:00|", "E|null|");

        file("2023-12-31", "2, 'Early', 'gold', TIMESTAMP '2023-12-31 09:00'");
        Execution late = cli("run", true);
        assertThat(late.exitCode()).as(late.err()).isEqualTo(ExitCodes.LATE_BEFORE_ADOPTION);
        assertThat(late.err()).contains("batch 2023-12-31", "adopted through 2024-01-04");
    }
}
