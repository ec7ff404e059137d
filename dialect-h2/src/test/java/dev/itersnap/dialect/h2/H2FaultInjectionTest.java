package dev.itersnap.dialect.h2;

import dev.itersnap.conformance.FaultInjectionTests;

import javax.sql.DataSource;

/** Retry safety by fault injection (every statement of a replaying run fails in turn) on H2. */
class H2FaultInjectionTest extends FaultInjectionTests {
    @Override
    protected DataSource newDatabase() {
        return new H2TestDatabase().newDatabase("conformance");
    }

    @Override
    protected void discard(DataSource database) {
        new H2TestDatabase().discard(database);
    }
}
