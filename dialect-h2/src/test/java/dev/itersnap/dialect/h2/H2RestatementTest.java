package dev.itersnap.dialect.h2;

import dev.itersnap.conformance.RestatementTests;
import dev.itersnap.conformance.TestDatabase;

/** Restated batches on H2. */
class H2RestatementTest extends RestatementTests {
    @Override
    protected TestDatabase database() {
        return new H2TestDatabase();
    }
}
