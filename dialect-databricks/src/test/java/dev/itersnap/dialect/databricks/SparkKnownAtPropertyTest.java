package dev.itersnap.dialect.databricks;

import dev.itersnap.conformance.KnownAtPropertyTest;
import dev.itersnap.conformance.TestDatabase;

/**
 * The known-at check on local Spark + Delta: every run's history read back as known at that run's finish. In the lean
 * selection it runs inside {@link SparkReferenceModelPropertyTest} on that test's case (a generated case costs minutes
 * here, so the same case serves both checks); {@code -Ditersnap.spark.all=true} runs the fixed seeds 1..2 here as well
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
