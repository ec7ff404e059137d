package dev.itersnap.dialect.postgres;

import dev.itersnap.conformance.ScenarioLifecycleTests;

import javax.sql.DataSource;

/** The conformance suite's ScenarioLifecycleTests on PostgreSQL (embedded, or ITERSNAP_PG_URL). */
class PostgresScenarioLifecycleTest extends ScenarioLifecycleTests {
    @Override
    protected DataSource newDatabase() {
        return PostgresServer.get().newDatabase();
    }

    @Override
    protected void discard(DataSource database) {
        PostgresServer.get().drop(database);
    }
}
