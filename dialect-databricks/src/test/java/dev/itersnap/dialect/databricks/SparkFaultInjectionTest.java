package dev.itersnap.dialect.databricks;

import dev.itersnap.conformance.FaultInjectionTests;
import dev.itersnap.conformance.TestDatabase;

/**
 * Retry safety by fault injection on local Spark + Delta: every statement of a replaying run fails in turn, on a fresh
 * copy of the scenario each time. Not in the default selection: one fault point costs three engine runs (prepare,
 * faulty run, rerun), about 2 minutes on local Spark, and a late-batch run has about 70 statements (commits included).
 * {@code -Ditersnap.spark.all=true} runs them.
 */
@SparkSelection({})
class SparkFaultInjectionTest extends FaultInjectionTests {
    @Override
    protected TestDatabase database() {
        return new SparkTestDatabase();
    }
}
