package dev.itersnap.dialect.postgres;

import dev.itersnap.conformance.ScenarioLifecycleTests;
import dev.itersnap.conformance.TestDatabase;

/** The conformance suite's ScenarioLifecycleTests on PostgreSQL (embedded, or ITERSNAP_PG_URL). */
class PostgresScenarioLifecycleTest extends ScenarioLifecycleTests {
    @Override
    protected TestDatabase database() {
        return new PostgresTestDatabase();
    }
}
