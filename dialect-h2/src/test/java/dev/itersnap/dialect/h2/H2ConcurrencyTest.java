package dev.itersnap.dialect.h2;

import dev.itersnap.conformance.ConcurrencyTests;
import dev.itersnap.conformance.TestDatabase;

/** One writer per model on a shared in-memory H2 database (MVStore, DB_CLOSE_DELAY=-1). */
class H2ConcurrencyTest extends ConcurrencyTests {
    @Override
    protected TestDatabase database() {
        return new H2TestDatabase();
    }
}
