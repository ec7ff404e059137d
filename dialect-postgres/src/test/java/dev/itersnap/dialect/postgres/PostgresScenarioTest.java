package dev.itersnap.dialect.postgres;

import dev.itersnap.conformance.ScenarioTests;

import javax.sql.DataSource;

/** The conformance suite's ScenarioTests on PostgreSQL (embedded, or ITERSNAP_PG_URL). */
class PostgresScenarioTest extends ScenarioTests {
    @Override
    protected DataSource newDatabase() {
        return PostgresServer.get().newDatabase();
    }

    @Override
    protected void discard(DataSource database) {
        PostgresServer.get().drop(database);
    }
}
