package dev.itersnap.dialect.h2;

import dev.itersnap.conformance.ScenarioTests;
import dev.itersnap.conformance.TestDatabase;

/** The conformance suite's ScenarioTests on H2 without transactional DML (see {@link H2NonTransactionalTestDatabase}). */
class H2NonTransactionalScenarioTest extends ScenarioTests {
    @Override
    protected TestDatabase database() {
        return new H2NonTransactionalTestDatabase();
    }
}
