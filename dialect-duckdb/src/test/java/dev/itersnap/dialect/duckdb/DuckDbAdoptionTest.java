package dev.itersnap.dialect.duckdb;

import dev.itersnap.conformance.AdoptionTests;
import dev.itersnap.conformance.TestDatabase;

/** The conformance suite's AdoptionTests on DuckDB (in memory). */
class DuckDbAdoptionTest extends AdoptionTests {
    @Override
    protected TestDatabase database() {
        return new DuckDbTestDatabase();
    }
}
