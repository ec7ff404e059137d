package dev.itersnap.dialect.postgres;

import dev.itersnap.conformance.KnownAtPropertyTest;
import dev.itersnap.conformance.TestDatabase;

/** The known-at check on PostgreSQL: the fixed seeds 1..12 and a random block of 4. */
class PostgresKnownAtPropertyTest extends KnownAtPropertyTest {
    @Override
    protected TestDatabase database() {
        return new PostgresTestDatabase();
    }

    @Override
    protected int defaultCases() {
        return 12;
    }

    @Override
    protected int defaultRandomCases() {
        return 4;
    }
}
