package dev.itersnap.dialect.postgres;

import dev.itersnap.conformance.FaultInjectionTests;

import javax.sql.DataSource;

/** The conformance suite's FaultInjectionTests on PostgreSQL (embedded, or ITERSNAP_PG_URL). */
class PostgresFaultInjectionTest extends FaultInjectionTests {
    @Override
    protected DataSource newDatabase() {
        return PostgresServer.get().newDatabase();
    }

    @Override
    protected void discard(DataSource database) {
        PostgresServer.get().drop(database);
    }
}
