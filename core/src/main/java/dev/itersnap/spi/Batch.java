package dev.itersnap.spi;

import java.time.LocalDateTime;
import java.util.List;

/**
 * One batch as the statements that apply it need it ({@link Dialect#applyBatch}).
 *
 * @param sequence     the batch's sequence value (bound as the sequence column's type)
 * @param sequenceText the sequence's canonical text (the ledger's and the error log's form; part of dbt_scd_id)
 * @param runId        the run applying it
 * @param loggedAt     the time its set-aside rows are logged at
 * @param untracked    columns not compared in this batch (introduced by it or by a later batch)
 * @param introduced   columns that first appear in this batch, filled in place on the current versions
 * @param deletionTime the batch's deletion time (a value of updated_at's type) when keys absent from it are closed,
 *                     else null
 */
public record Batch(Object sequence, String sequenceText, String runId, LocalDateTime loggedAt, List<String> untracked,
                    List<String> introduced, Object deletionTime) {
    public Batch {
        untracked = List.copyOf(untracked);
        introduced = List.copyOf(introduced);
    }
}
