package dev.itersnap.dialect.h2;

import dev.itersnap.conformance.ScenarioLifecycleTests;
import dev.itersnap.conformance.TestDatabase;

/** The run-lifecycle scenarios of the conformance suite on H2. */
class H2ScenarioLifecycleTest extends ScenarioLifecycleTests {
    @Override
    protected TestDatabase database() {
        return new H2TestDatabase();
    }
}
