package dev.itersnap.dialect.h2;

import dev.itersnap.conformance.FaultInjectionTests;

import javax.sql.DataSource;

/** Retry safety by fault injection (every statement of a replaying run fails in turn) on H2. */
class H2FaultInjectionTest extends FaultInjectionTests {
    @Override
    protected DataSource newDatabase() {
        return H2Databases.fresh();
    }

    @Override
    protected void discard(DataSource database) {
        H2Databases.shutdown(database);
    }
}
