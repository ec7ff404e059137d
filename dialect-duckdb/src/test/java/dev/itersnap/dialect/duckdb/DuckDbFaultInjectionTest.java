package dev.itersnap.dialect.duckdb;

import dev.itersnap.conformance.FaultInjectionTests;
import dev.itersnap.conformance.TestDatabase;

/** The conformance suite's FaultInjectionTests on DuckDB (in memory). */
class DuckDbFaultInjectionTest extends FaultInjectionTests {
    @Override
    protected TestDatabase database() {
        return new DuckDbTestDatabase();
    }
}
