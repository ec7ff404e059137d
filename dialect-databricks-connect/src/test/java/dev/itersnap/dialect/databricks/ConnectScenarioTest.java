package dev.itersnap.dialect.databricks;

import dev.itersnap.conformance.ScenarioTests;
import dev.itersnap.conformance.TestDatabase;

/**
 * Conformance scenarios through Spark Connect. Selected: a late batch found, rolled back and replayed (batch 9 after
 * batch 10: the replay's MERGEs, DELETEs and ledger writes and their counts over gRPC), and rows set aside with their
 * JSON records (the counted MERGE, the error log's text).
 */
@SparkSelection({"integerSequencesOrderNumericallyAcrossRuns", "nullSequenceRowsFireRowsRejected"})
class ConnectScenarioTest extends ScenarioTests {
    @Override
    protected TestDatabase database() {
        return new ConnectTestDatabase();
    }
}
