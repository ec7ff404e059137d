package dev.itersnap.dialect.databricks;

import dev.itersnap.conformance.ScenarioTests;
import dev.itersnap.conformance.TestDatabase;

/**
 * Conformance scenarios on local Spark + Delta. Selected: every kind of rejected row set aside with its reason and
 * counted (nothing lost, nothing silent), NULL-sequence rows logged through the counted MERGE with their RowsRejected
 * event, and a set-aside record keeping its timestamp's microseconds (to_json's default format keeps milliseconds).
 */
@SparkSelection({"rowsTheBatchCannotApplyAreSetAsideWithTheirReason", "nullSequenceRowsFireRowsRejected",
        "setAsideRecordsKeepEveryValueExactly"})
class SparkScenarioTest extends ScenarioTests {
    @Override
    protected TestDatabase database() {
        return new SparkTestDatabase();
    }
}
