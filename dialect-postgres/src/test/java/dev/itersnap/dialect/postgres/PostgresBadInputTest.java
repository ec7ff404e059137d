package dev.itersnap.dialect.postgres;

import dev.itersnap.conformance.BadInputTests;

import javax.sql.DataSource;

/** The conformance suite's BadInputTests on PostgreSQL (embedded, or ITERSNAP_PG_URL). */
class PostgresBadInputTest extends BadInputTests {
    @Override
    protected DataSource newDatabase() {
        return PostgresServer.get().newDatabase();
    }

    @Override
    protected void discard(DataSource database) {
        PostgresServer.get().drop(database);
    }
}
