package dev.itersnap.dialect.duckdb;

import dev.itersnap.conformance.ReferenceModelPropertyTest;
import dev.itersnap.conformance.TestDatabase;

/**
 * The generated cases on DuckDB, compared with the reference model after every run: the fixed seeds 1..48 and a random
 * block of 12 (about a second a case on the 2-core CI machine; 180 cases passed when the dialect was added);
 * {@code -Ditersnap.cases=N}, {@code -Ditersnap.randomCases=M} for more.
 */
class DuckDbReferenceModelPropertyTest extends ReferenceModelPropertyTest {
    @Override
    protected TestDatabase database() {
        return new DuckDbTestDatabase();
    }

    @Override
    protected int defaultCases() {
        return 48;
    }

    @Override
    protected int defaultRandomCases() {
        return 12;
    }
}
