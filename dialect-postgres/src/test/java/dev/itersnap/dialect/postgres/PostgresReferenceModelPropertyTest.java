package dev.itersnap.dialect.postgres;

import dev.itersnap.conformance.ReferenceModelPropertyTest;
import dev.itersnap.conformance.TestDatabase;

/**
 * The generated cases on PostgreSQL, compared with the reference model after every run: the fixed seeds 1..24 and
 * a random block of 8 (an engine run costs ten times what it costs on H2, which runs 300 + 30 twice);
 * {@code -Ditersnap.cases=N}, {@code -Ditersnap.randomCases=M} for more.
 */
class PostgresReferenceModelPropertyTest extends ReferenceModelPropertyTest {
    @Override
    protected TestDatabase database() {
        return new PostgresTestDatabase();
    }

    @Override
    protected int defaultCases() {
        return 24;
    }

    @Override
    protected int defaultRandomCases() {
        return 8;
    }
}
