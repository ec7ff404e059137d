package dev.itersnap.dialect.postgres;

import dev.itersnap.conformance.FaultInjectionTests;
import dev.itersnap.conformance.TestDatabase;

/** The conformance suite's FaultInjectionTests on PostgreSQL (embedded, or ITERSNAP_PG_URL). */
class PostgresFaultInjectionTest extends FaultInjectionTests {
    @Override
    protected TestDatabase database() {
        return new PostgresTestDatabase();
    }
}
