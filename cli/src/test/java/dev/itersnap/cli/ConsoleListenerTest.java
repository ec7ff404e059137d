package dev.itersnap.cli;

import dev.itersnap.core.SnapshotEvent;
import org.junit.jupiter.api.Test;

import java.time.LocalDate;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The progress lines of a run read as English for one and for many (issue 29: "1 batches", "batch null"). */
class ConsoleListenerTest {
    @Test
    void oneBatchIsSingular() {
        LocalDate day = LocalDate.of(2024, 1, 2);
        assertThat(ConsoleListener.describe(new SnapshotEvent.LedgerRepaired("m", "r", List.of(day))))
                .isEqualTo("ledger repaired: the history carries 1 batch the ledger lost (2024-01-02); replaying from "
                        + "2024-01-02");
        assertThat(ConsoleListener.describe(new SnapshotEvent.HistoryAdopted("m", "r", day, 1, 3, List.of())))
                .isEqualTo("adopted 3 versions through 2024-01-02: 1 batch declared applied");
        assertThat(ConsoleListener.describe(new SnapshotEvent.HistoryAdopted("m", "r", day, 2, 3, List.of())))
                .isEqualTo("adopted 3 versions through 2024-01-02: 2 batches declared applied");
    }

    @Test
    void rowsWithoutASequenceAreNotABatchCalledNull() {
        assertThat(ConsoleListener.describe(new SnapshotEvent.RowsRejected("m", "r", null, Map.of("null_sequence", 1L))))
                .isEqualTo("rows without a sequence (in no batch): 1 row set aside in the error log (null_sequence: 1)");
        assertThat(ConsoleListener.describe(new SnapshotEvent.RowsRejected("m", "r", 7L, Map.of("null_key", 2L))))
                .isEqualTo("batch 7: 2 rows set aside in the error log (null_key: 2)");
    }

    @Test
    void aRunWaitingForTheLockSaysWhoHoldsIt() {
        assertThat(ConsoleListener.describe(new SnapshotEvent.WaitingForLock("m", "r", "run 42 by host-a since "
                + "2024-01-02 03:04:05", java.time.Duration.ofSeconds(2))))
                .isEqualTo("waiting for the model lock: another run holds it (run 42 by host-a since 2024-01-02 "
                        + "03:04:05); waiting up to lock_timeout");
    }
}
