package dev.itersnap.dialect.h2;

import dev.itersnap.conformance.BadInputTests;

import javax.sql.DataSource;

/** Bad settings, bad sources and hostile values on H2. */
class H2BadInputTest extends BadInputTests {
    @Override
    protected DataSource newDatabase() {
        return new H2TestDatabase().newDatabase("conformance");
    }

    @Override
    protected void discard(DataSource database) {
        new H2TestDatabase().discard(database);
    }
}
