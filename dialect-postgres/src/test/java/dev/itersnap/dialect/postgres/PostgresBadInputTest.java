package dev.itersnap.dialect.postgres;

import dev.itersnap.conformance.BadInputTests;
import dev.itersnap.conformance.TestDatabase;

/** The conformance suite's BadInputTests on PostgreSQL (embedded, or ITERSNAP_PG_URL). */
class PostgresBadInputTest extends BadInputTests {
    @Override
    protected TestDatabase database() {
        return new PostgresTestDatabase();
    }
}
