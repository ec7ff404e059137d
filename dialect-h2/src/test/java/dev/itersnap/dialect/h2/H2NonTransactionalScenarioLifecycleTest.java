package dev.itersnap.dialect.h2;

import dev.itersnap.conformance.ScenarioLifecycleTests;
import dev.itersnap.conformance.TestDatabase;

/** The conformance suite's ScenarioLifecycleTests on H2 without transactional DML (see {@link H2NonTransactionalTestDatabase}). */
class H2NonTransactionalScenarioLifecycleTest extends ScenarioLifecycleTests {
    @Override
    protected TestDatabase database() {
        return new H2NonTransactionalTestDatabase();
    }
}
