package dev.itersnap.dialect.h2;

import dev.itersnap.conformance.ConcurrencyTests;

import javax.sql.DataSource;

/** One writer per model on a shared in-memory H2 database (MVStore, DB_CLOSE_DELAY=-1). */
class H2ConcurrencyTest extends ConcurrencyTests {
    @Override
    protected DataSource newDatabase() {
        return new H2TestDatabase().newDatabase("conformance");
    }

    @Override
    protected void discard(DataSource database) {
        new H2TestDatabase().discard(database);
    }
}
