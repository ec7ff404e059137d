package dev.itersnap.dialect.postgres;

import dev.itersnap.conformance.ConcurrencyTests;
import dev.itersnap.conformance.TestDatabase;

/** The conformance suite's ConcurrencyTests on PostgreSQL (embedded, or ITERSNAP_PG_URL). */
class PostgresConcurrencyTest extends ConcurrencyTests {
    @Override
    protected TestDatabase database() {
        return new PostgresTestDatabase();
    }
}
