package dev.itersnap.dialect.databricks;

import dev.itersnap.conformance.ScenarioTests;
import dev.itersnap.conformance.TestDatabase;

/**
 * Conformance scenarios on local Spark + Delta. Selected: every kind of rejected row set aside with its reason and
 * counted (SPEC §5 nothing lost, nothing silent), and NULL-sequence rows logged through the counted MERGE with their
 * RowsRejected event.
 */
@SparkSelection({"rowsTheBatchCannotApplyAreSetAsideWithTheirReason", "nullSequenceRowsFireRowsRejected"})
class SparkScenarioTest extends ScenarioTests {
    @Override
    protected TestDatabase database() {
        return new SparkTestDatabase();
    }
}
