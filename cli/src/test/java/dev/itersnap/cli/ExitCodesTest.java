package dev.itersnap.cli;

import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.ItersnapException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.sql.SQLException;

import static org.assertj.core.api.Assertions.assertThat;

class ExitCodesTest {

    @ParameterizedTest
    @CsvSource({"INVALID_SETTING, 2", "INVALID_SOURCE, 2", "NO_DIALECT, 2", "LOCK_TIMEOUT, 3", "DATABASE_ERROR, 4",
            "INCOMPATIBLE_SCHEMA_CHANGE, 1", "INVALID_SEQUENCE, 2", "LOGIC_CHANGE, 6", "TARGET_NOT_OWNED, 2",
            "LATE_BEFORE_ADOPTION, 7", "HISTORY_EDITED, 8"})
    void mapsEachErrorCode(ErrorCode code, int exitCode) {
        assertThat(ExitCodes.of(new ItersnapException(code, "boom"))).isEqualTo(exitCode);
    }

    /** A new error code needs a row above: its exit code is a decision, not the default that happens to apply. */
    @Test
    void everyErrorCodeHasItsExitCodeListed() throws NoSuchMethodException {
        String listed = String.join(" ", ExitCodesTest.class.getDeclaredMethod("mapsEachErrorCode", ErrorCode.class,
                int.class).getAnnotation(CsvSource.class).value());
        for (ErrorCode code : ErrorCode.values()) {
            assertThat(listed).as("exit code of %s listed in mapsEachErrorCode", code).contains(code.name() + ",");
        }
    }

    /** A command over many models exits with the most severe of their codes: a person's work before a retry's. */
    @Test
    void theMostSevereCodeOfManyModelsWins() {
        assertThat(ExitCodes.mostSevere(java.util.List.of())).isEqualTo(ExitCodes.OK);
        assertThat(ExitCodes.mostSevere(java.util.List.of(0, 0))).isEqualTo(ExitCodes.OK);
        assertThat(ExitCodes.mostSevere(java.util.List.of(0, 3, 4))).isEqualTo(ExitCodes.DATABASE);
        assertThat(ExitCodes.mostSevere(java.util.List.of(4, 1, 3))).isEqualTo(ExitCodes.FAILED);
        assertThat(ExitCodes.mostSevere(java.util.List.of(1, 6, 4))).isEqualTo(ExitCodes.LOGIC_CHANGE);
        assertThat(ExitCodes.mostSevere(java.util.List.of(6, 7))).isEqualTo(ExitCodes.LATE_BEFORE_ADOPTION);
        assertThat(ExitCodes.mostSevere(java.util.List.of(7, 8, 3))).isEqualTo(ExitCodes.HISTORY_EDITED);
        assertThat(ExitCodes.mostSevere(java.util.List.of(8, 2, 0))).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(ExitCodes.SEVERITY).as("every code has its place").containsExactlyInAnyOrder(0, 1, 2, 3, 4, 5, 6,
                7, 8);
    }

    @Test
    void mapsFailuresThatAreNotItersnapExceptions() {
        assertThat(ExitCodes.of(new ConfigException("bad file"))).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(ExitCodes.of(new RuntimeException("wrapped", new SQLException("gone", "08006"))))
                .isEqualTo(ExitCodes.DATABASE);
        assertThat(ExitCodes.of(new IllegalStateException("bug"))).isEqualTo(ExitCodes.FAILED);
    }

    @Test
    void describesAFailureInOneLineWithTheSqlState() {
        ItersnapException e = new ItersnapException(ErrorCode.DATABASE_ERROR, "model customers: step apply failed:\n"
                + "Table \"X\" not found;\n SQL statement:\nSELECT 1", "apply", "SELECT 1", new SQLException("x", "42S02"));

        assertThat(ErrorReporter.describe(e)).isEqualTo(
                "model customers: step apply failed: Table \"X\" not found; SQL statement: SELECT 1 (SQLState 42S02)");
        assertThat(ErrorReporter.describe(new NullPointerException())).isEqualTo("java.lang.NullPointerException");
    }

    @Test
    void helpListsEveryExitCode() {
        Execution help = Execution.of("run", "--help");

        assertThat(help.exitCode()).isZero();
        assertThat(help.out()).contains("Exit codes:", "0   success", "2   usage or configuration error",
                "3   lock timeout", "4   database error", "1   any other failure");
    }
}
