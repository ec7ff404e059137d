package dev.itersnap.dialect.duckdb;

import dev.itersnap.conformance.ReferenceModelPropertyTest;
import dev.itersnap.conformance.TestDatabase;

/**
 * The generated cases on DuckDB, compared with the reference model after every run: the fixed seeds 1..24 and a random
 * block of 6 (two to five seconds a case on the 2-core CI machine beside the other modules' builds; 180 cases passed
 * when the dialect was added, 60 ran in every build until the build outgrew its half hour; H2 runs 330 in each mode);
 * {@code -Ditersnap.cases=N}, {@code -Ditersnap.randomCases=M} for more.
 */
class DuckDbReferenceModelPropertyTest extends ReferenceModelPropertyTest {
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
