package dev.itersnap.cli;

import dev.itersnap.models.ModelFiles;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The command as a careless or hostile user meets it (issue 14): no secret of a JDBC URL in any output, model files
 * that are too large, binary, not UTF-8 or hold two documents, and the messages of odd settings and options.
 */
class HardeningCommandTest {
    private static final String MODEL = """
            name: customers
            target: customers_history
            source: SELECT * FROM raw_customers
            unique_key: customer_id
            updated_at: updated_at
            sequence_by: file_date
            """;

    @TempDir
    Path dir;

    private Path model(String yaml) throws Exception {
        return Files.writeString(dir.resolve("model.yml"), yaml);
    }

    private Execution run(String url, String yaml, String... extra) throws Exception {
        java.util.List<String> args = new java.util.ArrayList<>(java.util.List.of("run", "--jdbc-url", url,
                "--config", model(yaml).toString()));
        args.addAll(java.util.List.of(extra));
        return Execution.of(args.toArray(String[]::new));
    }

    // ---------------------------------------------------------------- secrets

    @Test
    void aPostgresUrlThatCannotConnectNeverShowsItsPassword() throws Exception {
        for (String verbose : new String[] {"--json", "--verbose"}) {
            Execution e = run("jdbc:postgresql://127.0.0.1:1/warehouse?user=etl&password=hunter2&ssl=false", MODEL,
                    verbose);

            assertThat(e.exitCode()).isEqualTo(ExitCodes.DATABASE);
            assertThat(e.errLines().get(0)).startsWith("itersnap: cannot connect to jdbc:postgresql://127.0.0.1:1/"
                    + "warehouse?user=etl&password=***&ssl=false: ");
            assertThat(e.err() + e.out()).doesNotContain("hunter2");
        }
    }

    @Test
    void aUrlWithUserInformationOrNoDriverNeverShowsItsSecret() throws Exception {
        Execution noDriver = run("jdbc:mysql://etl:hunter2@localhost:3306/warehouse?sessionToken=abc123", MODEL);
        assertThat(noDriver.exitCode()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(noDriver.errLines()).singleElement().asString()
                .contains("jdbc:mysql://etl:***@localhost:3306/warehouse?sessionToken=***")
                .doesNotContain("hunter2").doesNotContain("abc123");
    }

    @Test
    void aPasswordInTheUserInformationIsShownInNoOutput() throws Exception {
        // issue 29: the PostgreSQL driver took snap:hunter2@127.0.0.1 for the host and printed it in the message
        // and in UnknownHostException; H2 printed the password alone as the port it could not read
        for (String url : new String[] {"jdbc:postgresql://snap:hunter2@127.0.0.1:55431/wh",
                "jdbc:postgresql://snap:hun@ter2@127.0.0.1:55431/wh", "jdbc:h2:tcp://snap:hunter2@127.0.0.1:55431/~/wh"}) {
            for (String option : new String[] {"--json", "--verbose"}) {
                Execution e = run(url, MODEL, option);

                assertThat(e.exitCode()).as(url).isEqualTo(ExitCodes.CONFIGURATION);
                assertThat(e.errLines().get(0)).as(url).startsWith("itersnap: --jdbc-url jdbc:")
                        .contains("//snap:***@127.0.0.1:55431/").contains("pass --user and --password");
                assertThat(e.err() + e.out()).as(url).doesNotContain("hunter2").doesNotContain("ter2@");
            }
        }
        // drivers that read no user information either: the message, its causes and the trace are masked
        for (String url : new String[] {
                "jdbc:databricks://token:dapi0123secret@127.0.0.1:1/default;transportMode=http;ssl=0;httpPath=/sql/1",
                "jdbc:mysql://etl:dapi0123secret@localhost:3306/w"}) {
            for (String option : new String[] {"--json", "--verbose"}) {
                Execution e = run(url, MODEL, option);

                assertThat(e.exitCode()).as(url).isIn(ExitCodes.DATABASE, ExitCodes.CONFIGURATION);
                assertThat(e.err()).as(url).contains(":***@");
                assertThat(e.err() + e.out()).as(url).doesNotContain("dapi0123secret");
            }
        }
    }

    @Test
    void everyOutputOfACommandMasksThePasswordOfItsUrl() {
        java.io.StringWriter out = new java.io.StringWriter();
        java.io.PrintWriter masked = MaskingWriter.wrap(new java.io.PrintWriter(out), java.util.List.of("hunter2"));
        masked.print("host 'hunter2@db' not found, ");
        masked.println("jdbc:x://etl:hunter2@db/w");
        masked.print("For input string: \"hunter2@");
        masked.flush();

        assertThat(out.toString()).isEqualTo("host '***@db' not found, jdbc:x://etl:***@db/w" + System.lineSeparator()
                + "For input string: \"***@");
    }

    @Test
    void aDatabricksTokenIsMasked() throws Exception {
        Execution e = run("jdbc:databricks://127.0.0.1:1/default;transportMode=http;ssl=0;httpPath=/sql/1.0/w/1;"
                + "AuthMech=3;UID=token;PWD=dapi0123456789abcdef", MODEL);

        assertThat(e.exitCode()).isIn(ExitCodes.DATABASE, ExitCodes.CONFIGURATION);
        assertThat(e.err()).contains("PWD=***").doesNotContain("dapi0123456789abcdef");
    }

    /**
     * Issue 36: {@code password=Wrong Pw#123} was printed as {@code password=*** Pw#123}, H2's {@code ;PASSWORD=Secret
     * Pw} as {@code *** Pw}. A password with a space, a {@code #} and an {@code @} in each URL form, a wrong one (the
     * driver's own error) and a right one (a run, status, validate, doctor): no part of it in any output, text,
     * {@code --json} or {@code --verbose}.
     */
    @Test
    void aPasswordWithASpaceIsShownInNoOutputNotEvenInPart() throws Exception {
        String file = dir.resolve("secured").toAbsolutePath().toString();
        try (java.sql.Connection c = java.sql.DriverManager.getConnection("jdbc:h2:" + file, "sa", "Right Pw#1@x");
             java.sql.Statement s = c.createStatement()) {
            s.execute("CREATE TABLE raw_customers (customer_id INT, status VARCHAR(20), updated_at TIMESTAMP,"
                    + " file_date DATE)");
            s.execute("INSERT INTO raw_customers VALUES (1, 'Active', TIMESTAMP '2024-01-01 09:00', DATE '2024-01-01')");
        }
        String[][] wrong = {
                {"jdbc:h2:" + file + ";USER=sa;PASSWORD=Qzx Pw#123@x", "Wrong user name or password"},
                {"jdbc:h2:" + file + ";PASSWORD='Qzx Pw#123@x';USER=sa", "Wrong user name or password"},
                {"jdbc:postgresql://127.0.0.1:1/warehouse?user=etl&password=Qzx Pw#123@x&ssl=false", "password=***&ssl"},
                {"jdbc:postgresql://127.0.0.1:1/warehouse?password=Qzx Pw#123@x", "password=***"},
                {"jdbc:postgresql://etl:Qzx Pw#123@x@127.0.0.1:1/warehouse", "etl:***@127.0.0.1"},
                {"jdbc:databricks://127.0.0.1:1/default;transportMode=http;ssl=0;httpPath=/sql/1;AuthMech=3;UID=token;"
                        + "PWD=Qzx Pw#123@x", "PWD=***"}};
        for (String[] c : wrong) {
            // H2 delays every wrong login more, the Databricks driver retries its connection: their other URLs run
            // once, with the option that prints the most
            for (String[] options : c == wrong[0] || c == wrong[2]
                    ? new String[][] {{}, {"--json"}, {"--verbose"}} : new String[][] {{"--verbose"}}) {
                Execution e = run(c[0], MODEL, options);

                assertThat(e.exitCode()).as(c[0]).isIn(ExitCodes.DATABASE, ExitCodes.CONFIGURATION);
                assertThat(e.err()).as(c[0]).contains(c[1]);
                assertThat(e.err() + e.out()).as(c[0]).doesNotContain("Qzx").doesNotContain("Pw").doesNotContain("123@x");
            }
        }
        String right = "jdbc:h2:" + file + ";USER=sa;PASSWORD=Right Pw#1@x";
        Path config = model(MODEL.replace("SELECT * FROM raw_customers",
                "SELECT customer_id, status, updated_at, file_date FROM raw_customers"));
        List<Execution> outputs = new java.util.ArrayList<>();
        outputs.add(Execution.of("run", "--jdbc-url", right, "--config", config.toString(), "--json"));
        outputs.add(Execution.of("run", "--jdbc-url", right, "--config", config.toString(), "--verbose"));
        outputs.add(Execution.of("status", "--jdbc-url", right, "--config", config.toString(), "--json"));
        outputs.add(Execution.of("status", "--jdbc-url", right, "--config", config.toString()));
        outputs.add(Execution.of("validate", "--jdbc-url", right, "--config", config.toString()));
        outputs.add(Execution.of("doctor", "--jdbc-url", right, "--config", config.toString()));
        for (Execution e : outputs) {
            assertThat(e.exitCode()).as(e.err()).isZero();
            assertThat(e.err() + e.out()).doesNotContain("Right").doesNotContain("Pw").doesNotContain("1@x");
        }
    }

    /** Log lines and whatever a driver prints on System.err or System.out while a command runs are masked too. */
    @Test
    void logLinesWhileACommandRunsAreMasked() {
        java.io.PrintStream err = System.err;
        java.io.PrintStream out = System.out;
        java.io.ByteArrayOutputStream captured = new java.io.ByteArrayOutputStream();
        java.io.PrintStream capture = new java.io.PrintStream(captured, true);
        System.setErr(capture);
        System.setOut(capture);
        try {
            picocli.CommandLine cl = ItersnapCommand.commandLine().addSubcommand(new LogLine());
            cl.setOut(new java.io.PrintWriter(new java.io.StringWriter()));
            assertThat(cl.execute("log-line", "--jdbc-url", "jdbc:h2:/w;USER=sa;PASSWORD=Secret Pw;MODE=Regular"))
                    .isZero();
        } finally {
            System.setErr(err);
            System.setOut(out);
        }
        assertThat(captured.toString()).contains("cannot connect to jdbc:h2:/w;USER=sa;PASSWORD=***;MODE=Regular")
                .contains("quoted alone: ***").doesNotContain("Secret").doesNotContain("Pw");
        System.err.println("after the command: not masked, Secret Pw"); // the streams are restored
        assertThat(System.err).isSameAs(err);
    }

    /** A command that logs its URL (an slf4j warning: slf4j-simple writes to System.err) and prints its password. */
    @picocli.CommandLine.Command(name = "log-line")
    static final class LogLine implements java.util.concurrent.Callable<Integer> {
        @picocli.CommandLine.Option(names = "--jdbc-url")
        String url;

        @Override
        public Integer call() {
            org.slf4j.LoggerFactory.getLogger("itersnap.test").warn("cannot connect to {}", url);
            System.out.println("quoted alone: Secret Pw");
            return 0;
        }
    }

    // ---------------------------------------------------------------- model files

    @Test
    void aModelFileLargerThanOneMebibyteIsRefusedBeforeItIsRead() throws Exception {
        Path big = dir.resolve("big.yml");
        Files.writeString(big, "name: \"" + "x".repeat(ModelFiles.MAX_BYTES) + "\"\n");
        long start = System.nanoTime();

        Execution e = Execution.of("run", "--jdbc-url", "jdbc:h2:mem:unused", "--config", big.toString());

        assertThat(e.exitCode()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(e.errLines()).singleElement().asString().contains("bytes; a model file is at most 1048576 bytes");
        assertThat((System.nanoTime() - start) / 1_000_000).as("ms").isLessThan(5_000);
    }

    @Test
    void aBinaryOrNonUtf8ModelFileIsRefusedSayingSo() throws Exception {
        Path binary = Files.write(dir.resolve("model.bin"), new byte[] {(byte) 0x89, 'P', 'N', 'G', 0, 0, 1, 2});
        Execution e = Execution.of("run", "--jdbc-url", "jdbc:h2:mem:unused", "--config", binary.toString());
        assertThat(e.exitCode()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(e.errLines()).singleElement().asString().contains("is a binary file").doesNotContain("Input length");

        Path latin1 = Files.write(dir.resolve("latin1.yml"), (MODEL + "delete_when: \"note = 'caf\u00e9'\"\n")
                .getBytes(StandardCharsets.ISO_8859_1));
        e = Execution.of("run", "--jdbc-url", "jdbc:h2:mem:unused", "--config", latin1.toString());
        assertThat(e.exitCode()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(e.errLines()).singleElement().asString().contains("is not UTF-8 text (byte 0xE9 at offset")
                .doesNotContain("Input length");
    }

    @Test
    void aSecondYamlDocumentIsRefused() throws Exception {
        Execution e = run("jdbc:h2:mem:unused", MODEL + "---\nname: orders\n");

        assertThat(e.exitCode()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(e.errLines()).singleElement().asString().contains("more than one YAML document");
    }

    @Test
    void anAliasBombIsRefusedQuickly() throws Exception {
        StringBuilder yaml = new StringBuilder("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        for (char c = 'b'; c <= 'z'; c++) {
            char p = (char) (c - 1);
            yaml.append(c).append(": &").append(c).append(" [*").append(p).append(", *").append(p).append(", *")
                    .append(p).append(", *").append(p).append(", *").append(p).append("]\n");
        }
        yaml.append(MODEL.replace("name: customers", "name: *z"));
        long start = System.nanoTime();

        Execution e = run("jdbc:h2:mem:unused", yaml.toString());

        assertThat(e.exitCode()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(e.errLines()).singleElement();
        assertThat((System.nanoTime() - start) / 1_000_000).as("ms").isLessThan(5_000);
    }

    // ---------------------------------------------------------------- messages

    @Test
    void aTargetWithAnEmptyPartSaysSo() throws Exception {
        Execution e = run("jdbc:h2:mem:unused", MODEL.replace("target: customers_history", "target: raw..x"));

        assertThat(e.exitCode()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(e.errLines()).containsExactly("itersnap: setting 'target' expected table, schema.table or "
                + "catalog.schema.table, got 'raw..x', which has an empty part");
    }

    @Test
    void aSourceThatIsNotAQuerySaysSo() throws Exception {
        Execution e = run("jdbc:h2:mem:unused", MODEL.replace("SELECT * FROM raw_customers", "DELETE FROM raw_customers"));

        assertThat(e.exitCode()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(e.errLines()).containsExactly("itersnap: setting 'source' must be a query (SELECT, WITH ... SELECT, "
                + "VALUES or TABLE), got a statement starting with 'DELETE'");
    }

    @Test
    void statusRefusesAnUnknownDialectAndANegativeRunCount() throws Exception {
        H2Model db = new H2Model(dir.resolve("db"));

        Execution dialect = db.cli("status", "--dialect", "nosuch");
        assertThat(dialect.exitCode()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(dialect.errLines()).singleElement().asString().contains("no dialect named 'nosuch'");

        Execution runs = db.cli("status", "--runs", "-1");
        assertThat(runs.exitCode()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(runs.err()).contains("'--runs'").contains("-1");
    }

    @Test
    void columnsThatDifferOnlyByCaseAreRefusedNamingBoth() throws Exception {
        H2Model db = new H2Model(dir.resolve("db"));
        db.execute("CREATE TABLE raw_cased (customer_id INT, \"lower\" VARCHAR(10), \"LOWER\" VARCHAR(10), "
                + "updated_at TIMESTAMP, file_date DATE)");
        Path config = Files.writeString(dir.resolve("cased.yml"), MODEL.replace("raw_customers", "raw_cased")
                + "check_cols: [lower]\n");
        for (String command : new String[] {"validate", "run"}) {
            Execution e = Execution.of(command, "--jdbc-url", db.url, "--config", config.toString());
            assertThat(e.exitCode()).as(command).isEqualTo(ExitCodes.CONFIGURATION);
            assertThat(e.errLines()).as(command).singleElement().asString()
                    .contains("'lower' and 'LOWER' differ only by case");
        }
    }

    @Test
    void validateRefusesWhatARunWouldRefuseBeforeWriting() throws Exception {
        H2Model db = new H2Model(dir.resolve("db"));
        db.execute("CREATE TABLE raw_objects (customer_id INT, payload JAVA_OBJECT, updated_at TIMESTAMP, "
                + "file_date DATE)");
        Path objects = Files.writeString(dir.resolve("objects.yml"), MODEL.replace("raw_customers", "raw_objects"));
        Path longTarget = Files.writeString(dir.resolve("long.yml"), MODEL.replace("customers_history",
                "h".repeat(257)));
        Path longName = Files.writeString(dir.resolve("name.yml"), MODEL.replace("name: customers",
                "name: " + "n".repeat(129)));
        for (String command : new String[] {"validate", "run"}) {
            Execution e = Execution.of(command, "--jdbc-url", db.url, "--config", objects.toString());
            assertThat(e.exitCode()).as(command).isEqualTo(ExitCodes.CONFIGURATION);
            assertThat(e.errLines()).as(command).singleElement().asString()
                    .contains("source column 'PAYLOAD' has type JAVA_OBJECT");

            e = Execution.of(command, "--jdbc-url", db.url, "--config", longTarget.toString());
            assertThat(e.exitCode()).as(command).isEqualTo(ExitCodes.CONFIGURATION);
            assertThat(e.errLines()).as(command).singleElement().asString().contains("setting 'target'")
                    .contains("at most 256");

            e = Execution.of(command, "--jdbc-url", db.url, "--config", longName.toString());
            assertThat(e.exitCode()).as(command).isEqualTo(ExitCodes.CONFIGURATION);
            assertThat(e.errLines()).as(command).singleElement().asString().contains("setting 'name'")
                    .contains("at most 128");
        }
        assertThat(db.rows("SELECT table_name FROM information_schema.tables WHERE table_name LIKE 'HHH%'")).isEmpty();
    }

    /** A run against a history another model owns writes nothing and exits 2, naming the owner (TARGET_NOT_OWNED). */
    @Test
    void aSecondModelOnAnOwnedTargetExitsWithAConfigurationError() throws Exception {
        H2Model db = new H2Model(dir.resolve("db"));
        db.load(1, "Active", "T1", "2024-01-01T09:00", "2024-01-01");
        assertThat(Execution.of("run", "--jdbc-url", db.url, "--config", db.config.toString()).exitCode())
                .isEqualTo(ExitCodes.OK);
        Path second = Files.writeString(dir.resolve("second.yml"), Files.readString(db.config)
                .replace("name: customers", "name: customers_copy"));

        Execution e = Execution.of("run", "--jdbc-url", db.url, "--config", second.toString());

        assertThat(e.exitCode()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(e.errLines()).singleElement().asString().containsIgnoringCase("target customers_history belongs to "
                + "model 'customers'");
        assertThat(db.rows("SELECT COUNT(*) FROM customers_history")).singleElement().asString().contains("1");
    }
}
