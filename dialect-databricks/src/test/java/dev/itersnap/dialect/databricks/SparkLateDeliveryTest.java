package dev.itersnap.dialect.databricks;

import dev.itersnap.conformance.LateDeliveryTests;
import dev.itersnap.conformance.TestDatabase;

/**
 * Late delivery against in-order delivery on local Spark + Delta, in a lean form: one generated case (5 to 10 batches
 * shuffled into 2 to 4 deliveries, each a run), its in-order side applied in one run. H2 runs 24 cases in each mode
 * and PostgreSQL 5, one run per in-order batch; {@code -Ditersnap.lateCases=N} runs N cases here.
 */
@SparkSelection({"lateDeliveryEndsWithTheHistoryLedgerAndErrorLogOfInOrderDelivery"})
class SparkLateDeliveryTest extends LateDeliveryTests {
    @Override
    protected TestDatabase database() {
        return new SparkTestDatabase();
    }

    @Override
    protected int cases() {
        return Integer.getInteger("itersnap.lateCases", 1);
    }

    @Override
    protected boolean appliesInOrderInOneRun() {
        return true;
    }
}
