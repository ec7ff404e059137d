package dev.itersnap.dialect.databricks;

import dev.itersnap.conformance.TamperingTests;
import dev.itersnap.conformance.TestDatabase;

/**
 * Tampering with the metadata and the target on local Spark + Delta. Selected: a second model on the same target under
 * another metadata schema (the owner's comment on a Delta table, read back through the connection's metadata; about
 * 1.5 minutes). The repair of lost ledger entries by replay on a database without transactions runs on H2 without
 * transactions ({@code H2NonTransactionalTamperingTest}); a Spark case costs 4 minutes and more (measured: 237 s for
 * the newest ledger row deleted). {@code -Ditersnap.spark.all=true} runs them all.
 */
@SparkSelection({"secondModelUnderAnotherMetadataSchemaIsRefused"})
class SparkTamperingTest extends TamperingTests {
    @Override
    protected TestDatabase database() {
        return new SparkTestDatabase();
    }
}
