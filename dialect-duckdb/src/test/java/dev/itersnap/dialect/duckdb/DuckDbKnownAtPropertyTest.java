package dev.itersnap.dialect.duckdb;

import dev.itersnap.conformance.KnownAtPropertyTest;
import dev.itersnap.conformance.TestDatabase;

/** The known-at check on DuckDB: the fixed seeds 1..24 and a random block of 6. */
class DuckDbKnownAtPropertyTest extends KnownAtPropertyTest {
    @Override
    protected TestDatabase database() {
        return new DuckDbTestDatabase();
    }

    @Override
    protected int defaultCases() {
        return 24;
    }

    @Override
    protected int defaultRandomCases() {
        return 6;
    }
}
