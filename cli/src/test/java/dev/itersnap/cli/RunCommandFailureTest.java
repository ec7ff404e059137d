package dev.itersnap.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** How {@code itersnap run} fails: exit code, and one line on stderr naming the problem. */
class RunCommandFailureTest {
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

    @Test
    void anInvalidSettingExitsWithTwoAndOneLineNamingIt() throws Exception {
        Execution run = run(MODEL + "strategy: foo\n");

        assertThat(run.exitCode()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(run.errLines()).containsExactly("itersnap: setting 'strategy' expected one of check, timestamp, got 'foo'");
        assertThat(run.out()).isEmpty();
    }

    @Test
    void anUnknownKeyExitsWithTwoAndListsTheValidOnes() throws Exception {
        Execution run = run(MODEL + "unique_keys: [a, b]\n");

        assertThat(run.exitCode()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(run.errLines()).singleElement().asString()
                .startsWith("itersnap: unknown setting 'unique_keys' in ").contains("valid settings: name, target");
    }

    @Test
    void badYamlExitsWithTwoInOneLine() throws Exception {
        Execution run = run("name: customers\n  target: [oops\n");

        assertThat(run.exitCode()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(run.errLines()).singleElement().asString().contains("is not valid YAML");
    }

    @Test
    void aMissingModelFileExitsWithTwo() {
        Execution run = Execution.of("run", "--jdbc-url", "jdbc:h2:mem:unused", "--config", dir.resolve("nope.yml").toString());

        assertThat(run.exitCode()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(run.errLines()).singleElement().asString().startsWith("itersnap: cannot read model file").endsWith("no such file");
    }

    @Test
    void aDatabaseThatCannotBeReachedExitsWithFourInOneLine() throws Exception {
        String url = "jdbc:h2:" + dir.resolve("absent").toAbsolutePath() + ";IFEXISTS=TRUE";
        Execution run = run(url, MODEL);

        assertThat(run.exitCode()).isEqualTo(ExitCodes.DATABASE);
        assertThat(run.errLines()).singleElement().asString().startsWith("itersnap: cannot connect to " + url + ": ");
    }

    @Test
    void aUrlNoBundledDriverAcceptsExitsWithTwoAndSaysWhatToAdd() throws Exception {
        Execution run = run("jdbc:mysql://localhost:3306/warehouse", MODEL);

        assertThat(run.exitCode()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(run.errLines()).singleElement().asString()
                .startsWith("itersnap: no JDBC driver on the class path accepts jdbc:mysql://localhost:3306/warehouse;")
                .contains("java -cp itersnap.jar:");
    }

    @Test
    void verbosePrintsTheStackTraceToo() throws Exception {
        Path config = Files.writeString(dir.resolve("model.yml"), MODEL + "strategy: foo\n");
        Execution run = Execution.of("run", "--verbose", "--jdbc-url", "jdbc:h2:mem:unused", "--config", config.toString());

        assertThat(run.exitCode()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(run.errLines().get(0)).isEqualTo("itersnap: setting 'strategy' expected one of check, timestamp, got 'foo'");
        assertThat(run.err()).contains("at dev.itersnap.models.ModelFiles.parse");
    }

    @Test
    void aMissingOptionIsAUsageError() {
        Execution run = Execution.of("run", "--config", "model.yml");

        assertThat(run.exitCode()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(run.err()).contains("Missing required option: '--jdbc-url=URL'");
    }

    private Execution run(String yaml) throws Exception {
        return run("jdbc:h2:mem:unused", yaml);
    }

    private Execution run(String url, String yaml) throws Exception {
        Path config = Files.writeString(dir.resolve("model.yml"), yaml);
        return Execution.of("run", "--jdbc-url", url, "--config", config.toString());
    }
}
