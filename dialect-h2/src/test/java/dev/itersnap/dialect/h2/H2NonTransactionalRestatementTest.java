package dev.itersnap.dialect.h2;

import dev.itersnap.conformance.RestatementTests;
import dev.itersnap.conformance.TestDatabase;

/** Restated batches on H2 without transactional DML. */
class H2NonTransactionalRestatementTest extends RestatementTests {
    @Override
    protected TestDatabase database() {
        return new H2NonTransactionalTestDatabase();
    }
}
