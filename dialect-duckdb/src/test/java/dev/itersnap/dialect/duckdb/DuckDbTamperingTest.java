package dev.itersnap.dialect.duckdb;

import dev.itersnap.conformance.TamperingTests;
import dev.itersnap.conformance.TestDatabase;

/** The conformance suite's TamperingTests on DuckDB (in memory). */
class DuckDbTamperingTest extends TamperingTests {
    @Override
    protected TestDatabase database() {
        return new DuckDbTestDatabase();
    }
}
