package dev.itersnap.dialect.duckdb;

import dev.itersnap.conformance.BadInputTests;
import dev.itersnap.conformance.TestDatabase;

/** The conformance suite's BadInputTests on DuckDB (in memory). */
class DuckDbBadInputTest extends BadInputTests {
    @Override
    protected TestDatabase database() {
        return new DuckDbTestDatabase();
    }
}
