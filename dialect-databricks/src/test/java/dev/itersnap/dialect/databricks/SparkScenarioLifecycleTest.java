package dev.itersnap.dialect.databricks;

import dev.itersnap.conformance.ScenarioLifecycleTests;
import dev.itersnap.conformance.TestDatabase;

/**
 * Lifecycle scenarios on local Spark + Delta. Selected: a column added to the source and later dropped, in three runs
 * of two batches each (schema change, ADD COLUMNS, the fill MERGE, the column compared from the run's second batch
 * on); the six-run form of the same rules runs with {@code -Ditersnap.spark.all=true}. A late batch whose replay range holds an aged-out batch under hard_deletes new_record with explicit
 * deletes, compared with the in-order history, and the next run undoing writes the ledger does not record, run in
 * {@link SparkFaultInjectionTest} (the one-database replay), which covers both at less cost.
 */
@SparkSelection({"schemaChangesApplyWithinRunsOfSeveralBatches"})
class SparkScenarioLifecycleTest extends ScenarioLifecycleTests {
    @Override
    protected TestDatabase database() {
        return new SparkTestDatabase();
    }
}
