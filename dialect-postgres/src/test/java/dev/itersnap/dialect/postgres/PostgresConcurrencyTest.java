package dev.itersnap.dialect.postgres;

import dev.itersnap.conformance.ConcurrencyTests;

import javax.sql.DataSource;

/** The conformance suite's ConcurrencyTests on PostgreSQL (embedded, or ITERSNAP_PG_URL). */
class PostgresConcurrencyTest extends ConcurrencyTests {
    @Override
    protected DataSource newDatabase() {
        return PostgresServer.get().newDatabase();
    }

    @Override
    protected void discard(DataSource database) {
        PostgresServer.get().drop(database);
    }
}
