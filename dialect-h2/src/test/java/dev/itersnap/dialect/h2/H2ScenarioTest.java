package dev.itersnap.dialect.h2;

import dev.itersnap.conformance.ScenarioTests;

import javax.sql.DataSource;

/** The batch-rule scenarios of the conformance suite on H2. */
class H2ScenarioTest extends ScenarioTests {
    @Override
    protected DataSource newDatabase() {
        return H2Databases.fresh();
    }

    @Override
    protected void discard(DataSource database) {
        H2Databases.shutdown(database);
    }
}
