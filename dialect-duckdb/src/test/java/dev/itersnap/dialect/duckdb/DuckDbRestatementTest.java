package dev.itersnap.dialect.duckdb;

import dev.itersnap.conformance.RestatementTests;
import dev.itersnap.conformance.TestDatabase;

/** The conformance suite's RestatementTests on DuckDB (in memory). */
class DuckDbRestatementTest extends RestatementTests {
    @Override
    protected TestDatabase database() {
        return new DuckDbTestDatabase();
    }
}
