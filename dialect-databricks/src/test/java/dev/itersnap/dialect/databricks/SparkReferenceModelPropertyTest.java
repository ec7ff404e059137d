package dev.itersnap.dialect.databricks;

import dev.itersnap.conformance.ReferenceModelPropertyTest;
import dev.itersnap.conformance.TestDatabase;

/**
 * Generated scenarios (random batches, arrival orders, run splits, retention) against the in-memory reference model,
 * on local Spark + Delta (SPEC §5 order independence). Two cases by default ({@code -Ditersnap.cases=N} for more).
 */
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
