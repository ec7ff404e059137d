package dev.itersnap.dialect.h2;

import dev.itersnap.conformance.ScenarioLifecycleTests;

import javax.sql.DataSource;

/** The run-lifecycle scenarios of the conformance suite on H2. */
class H2ScenarioLifecycleTest extends ScenarioLifecycleTests {
    @Override
    protected DataSource newDatabase() {
        return new H2TestDatabase().newDatabase("conformance");
    }

    @Override
    protected void discard(DataSource database) {
        new H2TestDatabase().discard(database);
    }
}
