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
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code run}, {@code validate}, {@code status} and {@code doctor} over the models of a project folder ({@code --project}) on file-based H2: three
 * models (customers, orders, products), each on its own raw table, connected through the project's profile.
 */
class ProjectCommandTest {
    @TempDir
    Path dir;
    private Path project;
    private String url;

    /** The model file of {@code name} over {@code raw_<name>}; {@code extra} is appended. */
    static String model(String name, String extra) {
        return """
                name: %s
                target: %s_history
                source: SELECT id, status, updated_at, file_date FROM raw_%s
                unique_key: id
                updated_at: updated_at
                sequence_by: file_date
                lock_timeout: 30s
                """.formatted(name, name, name) + extra;
    }

    @BeforeEach
    void setUp() throws Exception {
        url = "jdbc:h2:" + dir.resolve("warehouse").toAbsolutePath();
        project = Files.createDirectories(dir.resolve("models"));
        for (String name : List.of("customers", "orders", "products")) {
            sql("CREATE TABLE raw_" + name + " (id INT, status VARCHAR(20), updated_at TIMESTAMP, file_date DATE)",
                    "INSERT INTO raw_" + name + " VALUES (1, 'new', TIMESTAMP '2024-01-01 09:00:00', DATE '2024-01-01'),"
                            + " (2, 'new', TIMESTAMP '2024-01-01 10:00:00', DATE '2024-01-01'),"
                            + " (1, 'done', TIMESTAMP '2024-01-02 09:00:00', DATE '2024-01-02')");
        }
        Files.writeString(project.resolve("customers.yml"), model("customers", "tags: [daily]\n"));
        Files.writeString(project.resolve("orders.yml"), model("orders", "tags: [daily, sales]\n"));
        Files.writeString(project.resolve("products.yaml"), model("products", "tags: sales\n"));
        Files.writeString(project.resolve("itersnap_project.yml"), """
                default_profile: dev
                profiles:
                  dev:
                    url: "%s"
                defaults:
                  metadata_schema: snap_meta
                """.formatted(url));
    }

    private void sql(String... statements) throws Exception {
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
            for (String q : statements) {
                s.execute(q);
            }
        }
    }

    private List<String> rows(String query) throws Exception {
        List<String> out = new ArrayList<>();
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery(query)) {
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

    /** The histories that exist, by table name. */
    private List<String> histories() throws Exception {
        return rows("SELECT LOWER(table_name) FROM information_schema.tables WHERE table_name LIKE '%_HISTORY' "
                + "ORDER BY 1");
    }

    /** The versions of {@code model}'s history: id, status, open or closed. */
    private List<String> versions(String model) throws Exception {
        return rows("SELECT id, status, CASE WHEN dbt_valid_to IS NULL THEN 'open' ELSE 'closed' END FROM " + model
                + "_history ORDER BY id, dbt_valid_from");
    }

    private Execution cli(String command, String... args) {
        List<String> all = new ArrayList<>(List.of(command, "--project", project.toString()));
        all.addAll(List.of(args));
        return Execution.of(all.toArray(String[]::new));
    }

    private static final List<String> APPLIED = List.of("1|new|closed|", "1|done|open|", "2|new|open|");

    @Test
    void threeModelsRunWithOneCommandThroughTheProfileWithTheProjectsDefaults() throws Exception {
        Execution run = cli("run");

        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(run.out()).contains(" model     | result  | exit | batches | inserted")
                .containsPattern("(?m)^ customers \\| applied \\|    0 \\|       2 \\|        3 \\|       1 ")
                .containsPattern("(?m)^ orders    \\| applied \\|")
                .containsPattern("(?m)^ products  \\| applied \\|")
                .contains("3 models: 3 succeeded, 0 failed; exit code 0");
        assertThat(run.err()).contains("customers: batch 2024-01-01 applied").contains("products: batch 2024-01-02");
        for (String model : List.of("customers", "orders", "products")) {
            assertThat(versions(model)).as(model).isEqualTo(APPLIED);
        }
        assertThat(rows("SELECT DISTINCT LOWER(table_schema) FROM information_schema.tables WHERE table_name = "
                + "'ITERSNAP_LEDGER'")).as("the project's default metadata_schema").containsExactly("snap_meta|");

        Execution again = cli("run");
        assertThat(again.exitCode()).as(again.err()).isZero();
        assertThat(again.out()).containsPattern("(?m)^ customers \\| up to date \\|    0 \\|       0 ");
    }

    @Test
    void selectsByNameTagAndGlobAndExcludes() throws Exception {
        Execution sales = cli("run", "--select", "tag:sales");
        assertThat(sales.exitCode()).as(sales.err()).isZero();
        assertThat(histories()).containsExactly("orders_history|", "products_history|");

        Execution byName = cli("run", "--select", "CUSTOMERS", "--exclude", "orders");
        assertThat(byName.exitCode()).as(byName.err()).isZero();
        assertThat(byName.out()).contains("1 model: 1 succeeded").doesNotContain("orders");
        assertThat(histories()).containsExactly("customers_history|", "orders_history|", "products_history|");

        Execution excluded = cli("validate", "--select", "*s", "--exclude", "tag:sales,c?stomers");
        assertThat(excluded.exitCode()).as(excluded.err()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(excluded.errLines()).singleElement().asString()
                .startsWith("itersnap: the selection leaves no model of " + project);

        Execution typo = cli("run", "--select", "tag:weekly");
        assertThat(typo.exitCode()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(typo.errLines()).singleElement().asString().isEqualTo("itersnap: selector 'tag:weekly' matches no "
                + "model of " + project + " (models: customers, orders, products; tags: daily, sales)");
    }

    @Test
    void twoThreadsRunTheModelsOnOnePool() throws Exception {
        Execution run = cli("run", "--threads", "2");

        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(run.out()).contains("3 models: 3 succeeded, 0 failed; exit code 0");
        for (String model : List.of("customers", "orders", "products")) {
            assertThat(versions(model)).as(model).isEqualTo(APPLIED);
            assertThat(rows("SELECT COUNT(*) FROM snap_meta.itersnap_ledger WHERE model = '" + model + "'"))
                    .as(model).containsExactly("2|");
        }
        assertThat(cli("run", "--threads", "0").err()).contains("--threads expected 1 to 32, got 0");
    }

    @Test
    void aFailingModelDoesNotStopTheOthersAndSetsTheExitCode() throws Exception {
        Files.writeString(project.resolve("broken.yml"), model("broken", ""));  // raw_broken does not exist

        Execution run = cli("run");

        assertThat(run.exitCode()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(run.out()).containsPattern("(?m)^ broken    \\| failed  \\|    2 \\|")
                .containsPattern("(?m)^ products  \\| applied \\|    0 \\|")
                .contains("4 models: 3 succeeded, 1 failed; exit code 2");
        assertThat(run.errLines()).anySatisfy(l -> assertThat(l).startsWith("itersnap: broken: ").contains("RAW_BROKEN"));
        for (String model : List.of("customers", "orders", "products")) {
            assertThat(versions(model)).as(model).isEqualTo(APPLIED);
        }
    }

    @Test
    void failFastStartsNoFurtherModel() throws Exception {
        Files.writeString(project.resolve("broken.yml"), model("broken", ""));

        Execution run = cli("run", "--fail-fast");

        assertThat(run.exitCode()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(run.out()).containsPattern("(?m)^ customers \\| not run \\|")
                .contains("4 models: 0 succeeded, 1 failed, 3 not run (--fail-fast); exit code 2");
        assertThat(histories()).isEmpty();
    }

    @Test
    void jsonIsAnArrayOfOneObjectPerModelInTheRunsShape() throws Exception {
        Files.writeString(project.resolve("broken.yml"), model("broken", ""));

        Execution run = cli("run", "--json", "--select", "broken,customers");

        assertThat(run.exitCode()).isEqualTo(ExitCodes.CONFIGURATION);
        JsonNode json = new ObjectMapper().readTree(run.out());
        assertThat(json.isArray()).isTrue();
        assertThat(json).as(run.out()).hasSize(2);
        JsonNode broken = json.get(0);
        assertThat(broken.get("model").asText()).isEqualTo("broken");
        assertThat(broken.get("status").asText()).isEqualTo("failed");
        assertThat(broken.get("exit_code").asInt()).isEqualTo(2);
        assertThat(broken.get("error").asText()).contains("RAW_BROKEN");
        JsonNode customers = json.get(1);
        assertThat(customers.get("model").asText()).isEqualTo("customers");
        assertThat(customers.get("status").asText()).isEqualTo("success");
        assertThat(customers.get("exit_code").asInt()).isZero();
        assertThat(customers.get("batches_applied").asInt()).isEqualTo(2);
        assertThat(customers.get("inserted").asInt()).isEqualTo(3);
        assertThat(customers.get("run_id").asText()).isNotEmpty();
        assertThat(customers.get("batches")).hasSize(2);
    }

    @Test
    void validateChecksEveryModelAndWritesNothing() throws Exception {
        Files.writeString(project.resolve("broken.yml"), model("broken", ""));

        Execution validate = cli("validate", "--threads", "2");

        assertThat(validate.exitCode()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(validate.out()).containsPattern("(?m)^ customers \\| valid  \\|    0 \\| customers_history \\| "
                        + "unique_key ID; sequence_by FILE_DATE; tracked STATUS")
                .containsPattern("(?m)^ broken    \\| failed \\|    2 \\|")
                .contains("4 models: 3 valid, 1 failed; exit code 2");
        assertThat(histories()).isEmpty();
    }

    @Test
    void theCommandLinesUrlWinsAndWithoutOneOrAProfileTheProjectIsRefused() throws Exception {
        Files.delete(project.resolve("itersnap_project.yml"));

        Execution none = cli("run");
        assertThat(none.exitCode()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(none.errLines()).singleElement().asString().isEqualTo("itersnap: no database for the project "
                + project + ": pass --jdbc-url URL or --profile NAME (it has no itersnap_project.yml with profiles)");

        Execution withUrl = cli("run", "--jdbc-url", url, "--select", "orders");
        assertThat(withUrl.exitCode()).as(withUrl.err()).isZero();
        assertThat(versions("orders")).isEqualTo(APPLIED);
    }

    @Test
    void aMissingEnvironmentVariableIsNamed() throws Exception {
        Files.writeString(project.resolve("itersnap_project.yml"), """
                profiles:
                  prod:
                    url: "%s"
                    user: sa
                    password: ${env:ITERSNAP_TEST_UNSET_VARIABLE_40}
                """.formatted(url));

        Execution run = cli("run", "--profile", "prod");

        assertThat(System.getenv("ITERSNAP_TEST_UNSET_VARIABLE_40")).isNull();
        assertThat(run.exitCode()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(run.errLines()).singleElement().asString().isEqualTo("itersnap: " + project.resolve(
                "itersnap_project.yml") + ": the environment variable ITERSNAP_TEST_UNSET_VARIABLE_40 that "
                + "profiles.prod.password (line 5) reads is not set");
        assertThat(histories()).isEmpty();
    }

    /**
     * The profile's password comes from the environment of a real process (a child JVM: a test cannot set its own
     * environment). It opens the database (H2 refuses a wrong one), and no output shows it: not the table, not
     * {@code --json}, not the error of a model whose source quotes it, not the {@code --verbose} stack trace of the
     * driver's exception quoting that source.
     */
    @Test
    void aPasswordFromTheEnvironmentIsNeverPrinted() throws Exception {
        String secret = "Env-Secret-4711";
        String secured = "jdbc:h2:" + dir.resolve("secured").toAbsolutePath();
        try (Connection c = DriverManager.getConnection(secured, "etl", secret); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE raw_orders (id INT, status VARCHAR(20), updated_at TIMESTAMP, file_date DATE)");
            s.execute("INSERT INTO raw_orders VALUES (1, 'new', TIMESTAMP '2024-01-01 09:00:00', DATE '2024-01-01')");
        }
        Path folder = Files.createDirectories(dir.resolve("secured-models"));
        Files.writeString(folder.resolve("orders.yml"), model("orders", ""));
        Files.writeString(folder.resolve("leaky.yml"), model("leaky", "").replace("FROM raw_leaky",
                "FROM missing_table WHERE status <> '" + secret + "'"));
        Files.writeString(folder.resolve("itersnap_project.yml"), """
                default_profile: prod
                profiles:
                  prod:
                    url: "%s"
                    user: etl
                    password: ${env:ITERSNAP_TEST_PASSWORD_40}
                """.formatted(secured));

        for (List<String> args : List.of(List.of("run", "--verbose"), List.of("run", "--json"), List.of("validate"))) {
            List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
                    .toString(), "-cp", System.getProperty("java.class.path"), ItersnapCommand.class.getName()));
            command.addAll(args);
            command.addAll(List.of("--project", folder.toString()));
            ProcessBuilder pb = new ProcessBuilder(command);
            pb.environment().put("ITERSNAP_TEST_PASSWORD_40", secret);
            pb.environment().remove("ITERSNAP_PASSWORD");
            Path out = dir.resolve("out.txt");
            Path err = dir.resolve("err.txt");
            Process p = pb.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
            assertThat(p.waitFor(180, java.util.concurrent.TimeUnit.SECONDS)).as("%s finished", args).isTrue();
            String printed = Files.readString(out) + Files.readString(err);

            assertThat(p.exitValue()).as("%s: %s", args, printed).isEqualTo(ExitCodes.CONFIGURATION);
            assertThat(printed).as("%s", args).contains("leaky").contains("MISSING_TABLE").doesNotContain(secret);
            if (args.contains("--verbose")) {
                // the driver's exception quotes the source, and with it the password, which is masked
                assertThat(printed).contains("WHERE status <> '***'");
            }
        }
        try (Connection c = DriverManager.getConnection(secured, "etl", secret); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM orders_history")) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getInt(1)).as("the password opened the database: orders was applied").isEqualTo(1);
        }
    }

    @Test
    void configAndProjectGoOneAtATime() throws Exception {
        Execution both = Execution.of("run", "--jdbc-url", url, "--config", project.resolve("orders.yml").toString(),
                "--project", project.toString());
        assertThat(both.exitCode()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(both.err()).contains("--config and --project are mutually exclusive");

        Execution neither = Execution.of("validate", "--jdbc-url", url);
        assertThat(neither.exitCode()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(neither.err()).contains("Missing required option: '--config=FILE' or '--project=DIR'");

        Execution select = Execution.of("run", "--jdbc-url", url, "--config", project.resolve("orders.yml").toString(),
                "--select", "orders");
        assertThat(select.exitCode()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(select.err()).contains("--select works on the models of a project");

        Execution one = Execution.of("run", "--jdbc-url", url, "--config", project.resolve("orders.yml").toString());
        assertThat(one.exitCode()).as(one.err()).isZero();
        assertThat(one.out()).startsWith("orders: 2 batches applied");
    }

    @Test
    void statusShowsEveryModelsNewestBatchLastRunAndLockInOneTable() throws Exception {
        Execution before = cli("status");
        assertThat(before.exitCode()).as(before.err()).isZero();
        assertThat(before.out()).containsPattern("(?m)^ customers \\| never run \\|    0 \\|")
                .contains("3 models: 3 read, 0 failed; exit code 0");

        assertThat(cli("run", "--select", "customers,orders").exitCode()).isZero();
        Execution status = cli("status", "--threads", "2");

        assertThat(status.exitCode()).as(status.err()).isZero();
        assertThat(status.out()).contains(" model     | result    | exit | batches | newest batch | applied at ")
                .containsPattern("(?m)^ customers \\| read      \\|    0 \\|       2 \\| 2024-01-02   \\| "
                        + "\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d \\| success \\d{4}-.* \\| free \\|         0 \\|?$")
                .containsPattern("(?m)^ orders    \\| read      \\|    0 \\|       2 \\| 2024-01-02 ")
                .containsPattern("(?m)^ products  \\| never run \\|    0 \\|         \\|")
                .contains("3 models: 3 read, 0 failed; exit code 0");
        assertThat(histories()).as("status writes nothing").containsExactly("customers_history|",
                "orders_history|");

        Execution tagged = cli("status", "--select", "tag:sales", "--exclude", "products");
        assertThat(tagged.out()).contains("1 model: 1 read").doesNotContain("customers");
    }

    @Test
    void statusJsonIsAnArrayOfTodaysObjectsOnePerModel() throws Exception {
        assertThat(cli("run", "--select", "customers").exitCode()).isZero();

        Execution status = cli("status", "--json", "--runs", "1");

        assertThat(status.exitCode()).as(status.err()).isZero();
        JsonNode json = new ObjectMapper().readTree(status.out());
        assertThat(json.isArray()).isTrue();
        assertThat(json).as(status.out()).hasSize(3);
        JsonNode customers = json.get(0);
        assertThat(customers.get("model").asText()).isEqualTo("customers");
        assertThat(customers.get("status").asText()).isEqualTo("success");
        assertThat(customers.get("exit_code").asInt()).isZero();
        assertThat(customers.get("metadata_exists").asBoolean()).isTrue();
        assertThat(customers.get("metadata_schema").asText()).isEqualToIgnoringCase("snap_meta");
        assertThat(customers.get("ledger")).hasSize(2);
        assertThat(customers.get("ledger").get(1).get("sequence").asText()).isEqualTo("2024-01-02");
        assertThat(customers.get("runs")).hasSize(1);
        assertThat(customers.get("runs").get(0).get("status").asText()).isEqualTo("success");
        assertThat(customers.get("runs").get(0).get("finished_at").asText()).isNotBlank();
        assertThat(customers.get("lock").get("held").asBoolean()).isFalse();
        JsonNode orders = json.get(1);
        assertThat(orders.get("model").asText()).isEqualTo("orders");
        assertThat(orders.get("status").asText()).isEqualTo("success");
        assertThat(orders.get("ledger")).isEmpty();
        assertThat(orders.get("runs")).isEmpty();

        // the single-model command prints the same object (the project's default metadata_schema written out),
        // without the project's status and exit_code
        Path alone = Files.writeString(dir.resolve("customers.yml"), model("customers", "metadata_schema: snap_meta\n"));
        Execution one = Execution.of("status", "--jdbc-url", url, "--config", alone.toString(), "--json", "--runs",
                "1");
        ((com.fasterxml.jackson.databind.node.ObjectNode) customers).remove(List.of("status", "exit_code"));
        assertThat(customers).isEqualTo(new ObjectMapper().readTree(one.out()));
    }

    @Test
    void statusOfAModelWhoseMetadataCannotBeReadFailsThatModelOnly() throws Exception {
        // a table in the model's metadata schema named as the ledger, but not the ledger: reading it fails
        sql("CREATE SCHEMA bad_meta", "CREATE TABLE bad_meta.itersnap_ledger (x INT)",
                "CREATE TABLE bad_meta.itersnap_runs (x INT)", "CREATE TABLE bad_meta.itersnap_errors (x INT)");
        Files.writeString(project.resolve("broken.yml"), model("broken", "metadata_schema: bad_meta\n"));
        assertThat(cli("run", "--select", "customers").exitCode()).isZero();

        Execution status = cli("status");
        Execution json = cli("status", "--json");

        assertThat(status.exitCode()).as(status.err()).isEqualTo(ExitCodes.DATABASE);
        assertThat(status.out()).containsPattern("(?m)^ broken    \\| failed    \\|    4 \\|")
                .containsPattern("(?m)^ customers \\| read      \\|    0 \\|       2 \\|")
                .contains("4 models: 3 read, 1 failed; exit code 4");
        assertThat(status.errLines()).anySatisfy(l -> assertThat(l).startsWith("itersnap: broken: "));
        assertThat(json.exitCode()).isEqualTo(ExitCodes.DATABASE);
        JsonNode broken = new ObjectMapper().readTree(json.out()).get(0);
        assertThat(broken.get("status").asText()).isEqualTo("failed");
        assertThat(broken.get("exit_code").asInt()).isEqualTo(ExitCodes.DATABASE);
        assertThat(broken.get("error").asText()).isNotBlank();
    }

    @Test
    void doctorChecksEveryModelAndAFailedCheckIsExitCodeTwo() throws Exception {
        Files.writeString(project.resolve("broken.yml"), model("broken", ""));  // raw_broken does not exist

        Execution doctor = cli("doctor", "--threads", "2");

        assertThat(doctor.exitCode()).as(doctor.err()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(doctor.out()).contains(" model     | result | exit | checks ok | target            | failed checks")
                .containsPattern("(?m)^ broken    \\| failed \\|    2 \\|    \\d of \\d \\| broken_history    \\| "
                        + "source: .*RAW_BROKEN")
                .containsPattern("(?m)^ customers \\| passed \\|    0 \\|    (\\d) of \\1 \\| customers_history \\|$")
                .contains("4 models: 3 passed, 1 failed; exit code 2");
        assertThat(doctor.errLines()).singleElement().asString().startsWith("itersnap: broken: 1 of ")
                .contains("checks failed: source: ").contains("RAW_BROKEN");
        assertThat(rows("SELECT LOWER(table_schema) || '.' || LOWER(table_name) FROM information_schema.tables "
                + "WHERE table_schema NOT IN ('INFORMATION_SCHEMA') ORDER BY 1")).as("only the probe tables came "
                + "and went").containsExactly("public.raw_customers|", "public.raw_orders|",
                "public.raw_products|");

        Execution failFast = cli("doctor", "--fail-fast", "--select", "broken,orders");
        assertThat(failFast.out()).containsPattern("(?m)^ orders +\\| not run \\|")
                .contains("2 models: 0 passed, 1 failed, 1 not run (--fail-fast); exit code 2");
    }

    @Test
    void doctorWithoutADatabaseFailsEachModelsConnectionCheck() throws Exception {
        Files.writeString(project.resolve("itersnap_project.yml"), """
                profiles:
                  nowhere:
                    url: "jdbc:postgresql://127.0.0.1:9/none"
                """);

        Execution doctor = cli("doctor", "--profile", "nowhere", "--select", "customers,orders");

        assertThat(doctor.exitCode()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(doctor.out()).containsPattern("(?m)^ customers \\| failed \\|    2 \\|    0 of 1 \\| "
                        + "customers_history \\| connection: ")
                .contains("2 models: 0 passed, 2 failed; exit code 2");
        assertThat(doctor.errLines()).hasSize(2).allSatisfy(l -> assertThat(l).contains(": 1 of 1 checks failed: "
                + "connection: "));
    }
}
