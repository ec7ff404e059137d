package dev.itersnap.dialect.h2;

import dev.itersnap.conformance.ReferenceModelPropertyTest;
import dev.itersnap.conformance.TestDatabase;

/** The conformance suite's ReferenceModelPropertyTest on H2 without transactional DML (see {@link H2NonTransactionalTestDatabase}). */
class H2NonTransactionalReferenceModelPropertyTest extends ReferenceModelPropertyTest {
    @Override
    protected TestDatabase database() {
        return new H2NonTransactionalTestDatabase();
    }
}
