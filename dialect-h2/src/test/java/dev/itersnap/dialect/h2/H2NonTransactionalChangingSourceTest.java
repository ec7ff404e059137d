package dev.itersnap.dialect.h2;

import dev.itersnap.conformance.ChangingSourceTests;
import dev.itersnap.conformance.TestDatabase;

/** A source that changes while a run reads it, on H2 without transactional DML. */
class H2NonTransactionalChangingSourceTest extends ChangingSourceTests {
    @Override
    protected TestDatabase database() {
        return new H2NonTransactionalTestDatabase();
    }

    /** The isolation measurement is the transactional H2's (this database is the same H2). */
    @Override
    protected boolean readsInTransactions() {
        return false;
    }
}
