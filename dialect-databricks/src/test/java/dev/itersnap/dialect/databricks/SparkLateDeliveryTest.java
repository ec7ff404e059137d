package dev.itersnap.dialect.databricks;

import dev.itersnap.conformance.LateDeliveryTests;
import dev.itersnap.conformance.TestDatabase;

/**
 * Late delivery against in-order delivery on local Spark + Delta, in a lean form: one generated case (5 to 10 batches
 * shuffled into 2 to 4 deliveries, each a run), its in-order side applied in one run. H2 runs 24 cases in each mode,
 * PostgreSQL 5 and DuckDB 6, one run per in-order batch. Outside the default build here (about five minutes on a
 * 2-core machine): the generated case of {@code SparkReferenceModelPropertyTest} delivers late batches too, checked
 * against the reference model after every run, and the fault-injection and scenario selections replay late batches.
 * {@code -Ditersnap.spark.all=true} runs it, {@code -Ditersnap.lateCases=N} with N cases.
 */
@SparkSelection({})
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
