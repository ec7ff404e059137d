package dev.itersnap.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A history edited by hand through the command line (issue 36): the run that would extend it exits 8 before writing
 * anything, naming the key and the way out; doctor and audit find the edit; the way out ends in a clean history.
 */
class EditedHistoryCommandTest {
    @TempDir
    Path dir;

    @Test
    void aClosedCurrentVersionStopsTheRunWithExitEightAndTheWayOutRepairsIt() throws Exception {
        H2Model model = new H2Model(dir);
        model.threeBatchesApplied();
        model.execute("UPDATE customers_history SET dbt_valid_to = TIMESTAMP '2024-01-02 00:00:00' "
                + "WHERE customer_id = 2 AND dbt_valid_to IS NULL");
        List<String> edited = model.rows("SELECT * FROM customers_history ORDER BY customer_id, dbt_valid_from");
        model.load(2, "Gold", "pro", "2024-01-07T09:00", "2024-01-07");

        Execution run = model.cli("run");

        assertThat(run.exitCode()).as(run.err()).isEqualTo(ExitCodes.HISTORY_EDITED).isEqualTo(8);
        assertThat(run.err()).contains("1 key whose versions are in a state no run of this model leaves")
                .containsIgnoringCase("customer_id=2").contains("replay --from 2024-01-01 ")
                .contains("full-refresh --yes").contains("nothing was written");
        assertThat(model.rows("SELECT * FROM customers_history ORDER BY customer_id, dbt_valid_from"))
                .isEqualTo(edited);

        Execution doctor = model.cli("doctor");
        assertThat(doctor.exitCode()).as(doctor.out()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(doctor.out()).containsIgnoringCase("history").containsIgnoringCase("customer_id=2");

        Execution audit = model.cli("audit", "--table", "customers_history", "--key", "customer_id", "--json");
        assertThat(audit.exitCode()).isEqualTo(ExitCodes.AUDIT_PROBLEMS);
        assertThat(H2Model.json(audit).get("checks").get("bookkeeping").get("count").asLong()).isEqualTo(1);
        assertThat(H2Model.json(audit).get("checks").get("closed_without_successor").get("count").asLong())
                .isEqualTo(1);

        Execution replay = model.cli("replay", "--from", "2024-01-01");
        assertThat(replay.exitCode()).as(replay.err()).isZero();
        assertThat(model.rows("SELECT status FROM customers_history WHERE customer_id = 2 ORDER BY dbt_valid_from"))
                .containsExactly("Active|", "Gold|");
        assertThat(model.cli("run").exitCode()).isZero();
        assertThat(model.cli("audit", "--table", "customers_history", "--key", "customer_id").exitCode()).isZero();
    }
}
