package dev.itersnap.cli;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** A changed model: {@code run} stops with exit code 6; {@code --accept-logic-change} or {@code replay} go on. */
class LogicChangeCommandTest {
    private static final String HISTORY = "SELECT * FROM customers_history ORDER BY customer_id, dbt_valid_from";

    @TempDir
    Path dir;
    private H2Model db;

    @BeforeEach
    void setUp() throws Exception {
        db = new H2Model(dir);
        db.threeBatchesApplied();
        Files.writeString(db.config, Files.readString(db.config) + "check_cols: [status]\n");
        db.load(1, "Gold", "platinum", "2024-01-06T09:00", "2024-01-06");
    }

    @Test
    void aRunWithChangedLogicStopsWithExitCode6AndWritesNothing() throws Exception {
        List<String> before = db.rows(HISTORY);

        Execution e = db.cli("run");

        assertThat(e.exitCode()).isEqualTo(ExitCodes.LOGIC_CHANGE);
        assertThat(e.errLines()).hasSize(1);
        assertThat(e.err()).contains("logic changed").contains("check_cols").contains("replay --from")
                .contains("--accept-logic-change");
        assertThat(db.rows(HISTORY)).isEqualTo(before);
    }

    @Test
    void acceptingTheChangeKeepsTheHistoryAndAppliesTheNewLogic() throws Exception {
        Execution e = db.cli("run", "--accept-logic-change", "--json");

        assertThat(e.exitCode()).as(e.err()).isZero();
        JsonNode r = H2Model.json(e);
        assertThat(r.get("batches_applied").asInt()).isEqualTo(1);
        assertThat(r.get("updated").asLong()).as("tier alone is no longer tracked").isZero();
        assertThat(db.cli("run").exitCode()).isZero();
    }

    @Test
    void aReplayRebuildsWithTheNewLogicAndLaterRunsPass() throws Exception {
        Execution e = db.cli("replay", "--from", "2024-01-01", "--json");

        assertThat(e.exitCode()).as(e.err()).isZero();
        assertThat(H2Model.json(e).get("batches_applied").asInt()).isEqualTo(4);
        assertThat(db.cli("run").exitCode()).isZero();
    }
}
