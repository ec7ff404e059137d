package dev.itersnap.dialect.duckdb;

import dev.itersnap.conformance.ScenarioTests;
import dev.itersnap.conformance.TestDatabase;

/** The conformance suite's ScenarioTests on DuckDB (in memory). */
class DuckDbScenarioTest extends ScenarioTests {
    @Override
    protected TestDatabase database() {
        return new DuckDbTestDatabase();
    }
}
