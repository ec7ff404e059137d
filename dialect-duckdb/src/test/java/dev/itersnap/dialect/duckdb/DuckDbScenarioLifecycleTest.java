package dev.itersnap.dialect.duckdb;

import dev.itersnap.conformance.ScenarioLifecycleTests;
import dev.itersnap.conformance.TestDatabase;

/** The conformance suite's ScenarioLifecycleTests on DuckDB (in memory). */
class DuckDbScenarioLifecycleTest extends ScenarioLifecycleTests {
    @Override
    protected TestDatabase database() {
        return new DuckDbTestDatabase();
    }
}
