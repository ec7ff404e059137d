package dev.itersnap.dialect.databricks;

import dev.itersnap.conformance.TamperingTests;
import dev.itersnap.conformance.TestDatabase;

/**
 * Tampering with the metadata and the target on local Spark + Delta. Selected: a second model on the same target
 * (the owners table and the table comment on Delta) and the newest ledger row deleted (the repair by replay on a
 * database without transactions). The other cases take the same code paths; {@code -Ditersnap.spark.all=true} runs
 * them.
 */
@SparkSelection({"secondModelOnTheSameTargetIsRefused", "deletedNewestLedgerRowIsRepairedByReplay"})
class SparkTamperingTest extends TamperingTests {
    @Override
    protected TestDatabase database() {
        return new SparkTestDatabase();
    }
}
