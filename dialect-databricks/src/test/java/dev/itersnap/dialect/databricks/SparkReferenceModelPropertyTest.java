package dev.itersnap.dialect.databricks;

import dev.itersnap.conformance.ReferenceModelPropertyTest;
import dev.itersnap.conformance.TestDatabase;

/**
 * Generated scenarios (random batches, arrival orders, run splits, retention) against the in-memory reference model,
 * on local Spark + Delta (SPEC §5 order independence). A generated case is up to a dozen engine runs (5 minutes
 * locally), so it runs only with {@code -Ditersnap.spark.all=true}, two cases unless {@code -Ditersnap.cases=N}.
 */
@SparkSelection({})
class SparkReferenceModelPropertyTest extends ReferenceModelPropertyTest {
    @Override
    protected TestDatabase database() {
        return new SparkTestDatabase();
    }

    @Override
    protected int defaultCases() {
        return 2;
    }
}
