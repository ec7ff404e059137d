package dev.itersnap.dialect.duckdb;

import dev.itersnap.conformance.InspectionTests;
import dev.itersnap.conformance.TestDatabase;

/** The conformance suite's InspectionTests (the read API) on DuckDB (in memory). */
class DuckDbInspectionTest extends InspectionTests {
    @Override
    protected TestDatabase database() {
        return new DuckDbTestDatabase();
    }
}
