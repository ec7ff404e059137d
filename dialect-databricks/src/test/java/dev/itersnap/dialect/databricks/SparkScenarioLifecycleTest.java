package dev.itersnap.dialect.databricks;

import dev.itersnap.conformance.ScenarioLifecycleTests;
import dev.itersnap.conformance.TestDatabase;

/**
 * Lifecycle scenarios on local Spark + Delta. Selected: a column added to the source (schema change, ADD COLUMNS and
 * the fill MERGE). A late batch whose replay range holds an aged-out batch under hard_deletes new_record with explicit
 * deletes, compared with the in-order history, and the next run undoing writes the ledger does not record, run in
 * {@link SparkFaultInjectionTest} (the one-database replay), which covers both at less cost.
 */
@SparkSelection({"addedColumnJoinsTheHistoryWithoutOpeningVersionsAndDroppedColumnStaysNull"})
class SparkScenarioLifecycleTest extends ScenarioLifecycleTests {
    @Override
    protected TestDatabase database() {
        return new SparkTestDatabase();
    }
}
