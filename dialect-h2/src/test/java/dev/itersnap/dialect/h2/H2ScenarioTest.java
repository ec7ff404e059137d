package dev.itersnap.dialect.h2;

import dev.itersnap.conformance.ScenarioTests;
import dev.itersnap.conformance.TestDatabase;

/** The batch-rule scenarios of the conformance suite on H2. */
class H2ScenarioTest extends ScenarioTests {
    @Override
    protected TestDatabase database() {
        return new H2TestDatabase();
    }
}
