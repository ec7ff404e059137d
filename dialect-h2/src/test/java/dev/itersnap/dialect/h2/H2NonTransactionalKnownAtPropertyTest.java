package dev.itersnap.dialect.h2;

import dev.itersnap.conformance.KnownAtPropertyTest;
import dev.itersnap.conformance.TestDatabase;

/** The known-at check on H2 without transactional DML (see {@link H2NonTransactionalTestDatabase}). */
class H2NonTransactionalKnownAtPropertyTest extends KnownAtPropertyTest {
    @Override
    protected TestDatabase database() {
        return new H2NonTransactionalTestDatabase();
    }
}
