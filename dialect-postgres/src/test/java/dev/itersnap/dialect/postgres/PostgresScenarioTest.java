package dev.itersnap.dialect.postgres;

import dev.itersnap.conformance.ScenarioTests;
import dev.itersnap.conformance.TestDatabase;

/** The conformance suite's ScenarioTests on PostgreSQL (embedded, or ITERSNAP_PG_URL). */
class PostgresScenarioTest extends ScenarioTests {
    @Override
    protected TestDatabase database() {
        return new PostgresTestDatabase();
    }
}
