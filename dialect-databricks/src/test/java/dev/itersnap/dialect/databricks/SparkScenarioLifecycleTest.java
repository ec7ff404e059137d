package dev.itersnap.dialect.databricks;

import dev.itersnap.conformance.ScenarioLifecycleTests;
import dev.itersnap.conformance.TestDatabase;

/**
 * Lifecycle scenarios on local Spark + Delta. Selected: a late batch whose replay range holds an aged-out batch,
 * under hard_deletes new_record with explicit deletes, equal to the in-order history (SPEC §5 order independence;
 * exercises every MERGE rewrite: close absent keys, deletion records); a column added to the source (schema change,
 * ADD COLUMNS and the fill MERGE); the next run undoing history writes the ledger does not hold (retry safety on a
 * database without transactions).
 */
@SparkSelection({"agedOutBatchInsideTheReplayRangeIsReproducedFromTheHistory[NEW_RECORD]",
        "addedColumnJoinsTheHistoryWithoutOpeningVersionsAndDroppedColumnStaysNull",
        "nextRunUndoesHistoryWritesTheLedgerDoesNotRecord"})
class SparkScenarioLifecycleTest extends ScenarioLifecycleTests {
    @Override
    protected TestDatabase database() {
        return new SparkTestDatabase();
    }
}
