package dev.itersnap.dialect.h2;

import dev.itersnap.conformance.FaultInjectionTests;
import dev.itersnap.conformance.TestDatabase;

/**
 * The conformance suite's FaultInjectionTests on H2 without transactional DML (see
 * {@link H2NonTransactionalTestDatabase}): every fault point, the first run's registry inserts and the pending table
 * included.
 */
class H2NonTransactionalFaultInjectionTest extends FaultInjectionTests {
    @Override
    protected TestDatabase database() {
        return new H2NonTransactionalTestDatabase();
    }
}
