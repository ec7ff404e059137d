package dev.itersnap.dialect.h2;

import dev.itersnap.conformance.StatementCountTests;
import dev.itersnap.conformance.TestDatabase;

/** Statements per run, per batch and per replayed batch on H2NonTransactional. */
class H2NonTransactionalStatementCountTest extends StatementCountTests {
    @Override
    protected TestDatabase database() {
        return new H2NonTransactionalTestDatabase();
    }
}
