package dev.itersnap.dialect.h2;

import dev.itersnap.conformance.FaultInjectionTests;
import dev.itersnap.conformance.TestDatabase;

/** Retry safety by fault injection (every statement of a replaying run fails in turn) on H2. */
class H2FaultInjectionTest extends FaultInjectionTests {
    @Override
    protected TestDatabase database() {
        return new H2TestDatabase();
    }
}
