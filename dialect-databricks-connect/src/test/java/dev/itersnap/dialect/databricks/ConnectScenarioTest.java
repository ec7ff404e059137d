package dev.itersnap.dialect.databricks;

import dev.itersnap.conformance.ScenarioTests;
import dev.itersnap.conformance.TestDatabase;

/**
 * Conformance scenarios through Spark Connect. Selected: a late batch before a batch gone from the source, replayed
 * from the archive in the same run (its reproduced flags asserted: the replay's MERGEs, DELETEs, ledger writes and
 * their counts over gRPC, the archive read back; about two minutes in a CI build). The SQL is the Spark dialect's,
 * which the Spark 4.2 module runs in its selection; what this module proves is the transport.
 * {@code -Ditersnap.spark.all=true} runs every scenario.
 */
@SparkSelection({"ignoreNullUpdatesLateBatchBeforeAnAgedOutBatchFillsItsNullsAgain"})
class ConnectScenarioTest extends ScenarioTests {
    @Override
    protected TestDatabase database() {
        return new ConnectTestDatabase();
    }
}
