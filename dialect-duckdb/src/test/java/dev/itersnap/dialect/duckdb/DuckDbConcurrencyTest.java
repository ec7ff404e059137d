package dev.itersnap.dialect.duckdb;

import dev.itersnap.conformance.ConcurrencyTests;
import dev.itersnap.conformance.TestDatabase;

/** The conformance suite's ConcurrencyTests on DuckDB (in memory). */
class DuckDbConcurrencyTest extends ConcurrencyTests {
    @Override
    protected TestDatabase database() {
        return new DuckDbTestDatabase();
    }
}
