package dev.itersnap.dialect.postgres;

import dev.itersnap.conformance.RestatementTests;
import dev.itersnap.conformance.TestDatabase;

/** Restated batches on PostgreSQL. */
class PostgresRestatementTest extends RestatementTests {
    @Override
    protected TestDatabase database() {
        return new PostgresTestDatabase();
    }
}
