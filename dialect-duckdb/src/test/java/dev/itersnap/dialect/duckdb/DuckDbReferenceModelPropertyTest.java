package dev.itersnap.dialect.duckdb;

import dev.itersnap.conformance.ReferenceModelPropertyTest;
import dev.itersnap.conformance.TestDatabase;

/** The conformance suite's ReferenceModelPropertyTest on DuckDB (in memory). */
class DuckDbReferenceModelPropertyTest extends ReferenceModelPropertyTest {
    @Override
    protected TestDatabase database() {
        return new DuckDbTestDatabase();
    }
}
