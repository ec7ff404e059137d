package dev.itersnap.dialect.h2;

import dev.itersnap.conformance.ConcurrencyTests;
import dev.itersnap.conformance.TestDatabase;

/** The conformance suite's ConcurrencyTests on H2 without transactional DML (see {@link H2NonTransactionalTestDatabase}). */
class H2NonTransactionalConcurrencyTest extends ConcurrencyTests {
    @Override
    protected TestDatabase database() {
        return new H2NonTransactionalTestDatabase();
    }
}
