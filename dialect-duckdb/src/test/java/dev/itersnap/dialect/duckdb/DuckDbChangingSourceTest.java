package dev.itersnap.dialect.duckdb;

import dev.itersnap.conformance.ChangingSourceTests;
import dev.itersnap.conformance.TestDatabase;

/** The conformance suite's ChangingSourceTests on DuckDB (in memory), whose transactions read one snapshot each. */
class DuckDbChangingSourceTest extends ChangingSourceTests {
    @Override
    protected TestDatabase database() {
        return new DuckDbTestDatabase();
    }

    @Override
    protected boolean snapshotPerTransaction() {
        return true;
    }
}
