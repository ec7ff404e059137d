package dev.itersnap.dialect.h2;

import dev.itersnap.conformance.BadInputTests;
import dev.itersnap.conformance.TestDatabase;

/** Bad settings, bad sources and hostile values on H2. */
class H2BadInputTest extends BadInputTests {
    @Override
    protected TestDatabase database() {
        return new H2TestDatabase();
    }
}
