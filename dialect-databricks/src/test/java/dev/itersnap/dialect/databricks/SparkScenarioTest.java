package dev.itersnap.dialect.databricks;

import dev.itersnap.conformance.ScenarioTests;
import dev.itersnap.conformance.TestDatabase;

/** The conformance scenarios on local Spark + Delta. */
class SparkScenarioTest extends ScenarioTests {
    @Override
    protected TestDatabase database() {
        return new SparkTestDatabase();
    }
}
