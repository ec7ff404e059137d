package dev.itersnap.dialect.postgres;

import dev.itersnap.conformance.ChangingSourceTests;
import dev.itersnap.conformance.TestDatabase;

/** A source that changes while a run reads it, on PostgreSQL. */
class PostgresChangingSourceTest extends ChangingSourceTests {
    @Override
    protected TestDatabase database() {
        return new PostgresTestDatabase();
    }
}
