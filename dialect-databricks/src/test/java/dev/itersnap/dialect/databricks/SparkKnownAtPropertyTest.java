package dev.itersnap.dialect.databricks;

import dev.itersnap.conformance.KnownAtPropertyTest;
import dev.itersnap.conformance.TestDatabase;

/**
 * The known-at check on local Spark + Delta: every run's history read back as known at that run's finish. Not in the
 * lean selection (a generated case costs minutes here); {@code -Ditersnap.spark.all=true} runs the fixed seeds 1..2
 * ({@code -Ditersnap.cases=N} more).
 */
@SparkSelection({})
class SparkKnownAtPropertyTest extends KnownAtPropertyTest {
    @Override
    protected TestDatabase database() {
        return new SparkTestDatabase();
    }

    @Override
    protected int defaultCases() {
        return 2;
    }

    @Override
    protected int defaultRandomCases() {
        return 0;
    }
}
