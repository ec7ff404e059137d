package dev.itersnap.dialect.databricks;

import dev.itersnap.conformance.ScenarioTests;
import dev.itersnap.conformance.TestDatabase;

/**
 * Conformance scenarios through Spark Connect. Selected: a late batch found, rolled back and replayed (batch 9 after
 * batch 10: the replay's MERGEs, DELETEs and ledger writes and their counts over gRPC). Rows set aside and the other
 * scenarios of the lean Spark selection run on a classic session (dialect-databricks-spark4); the SQL is the same.
 */
@SparkSelection({"integerSequencesOrderNumericallyAcrossRuns"})
class ConnectScenarioTest extends ScenarioTests {
    @Override
    protected TestDatabase database() {
        return new ConnectTestDatabase();
    }
}
