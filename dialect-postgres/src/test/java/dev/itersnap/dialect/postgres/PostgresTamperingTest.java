package dev.itersnap.dialect.postgres;

import dev.itersnap.conformance.TamperingTests;
import dev.itersnap.conformance.TestDatabase;

/** Tampering with the metadata and the target between runs on PostgreSQL. */
class PostgresTamperingTest extends TamperingTests {
    @Override
    protected TestDatabase database() {
        return new PostgresTestDatabase();
    }
}
