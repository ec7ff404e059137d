package dev.itersnap.dialect.h2;

import dev.itersnap.conformance.ScenarioTests;

import javax.sql.DataSource;

/** The batch-rule scenarios of the conformance suite on H2. */
class H2ScenarioTest extends ScenarioTests {
    @Override
    protected DataSource newDatabase() {
        return new H2TestDatabase().newDatabase("conformance");
    }

    @Override
    protected void discard(DataSource database) {
        new H2TestDatabase().discard(database);
    }
}
