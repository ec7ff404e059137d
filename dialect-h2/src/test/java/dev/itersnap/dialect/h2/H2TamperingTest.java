package dev.itersnap.dialect.h2;

import dev.itersnap.conformance.TamperingTests;
import dev.itersnap.conformance.TestDatabase;

/** Tampering with the metadata and the target between runs on H2. */
class H2TamperingTest extends TamperingTests {
    @Override
    protected TestDatabase database() {
        return new H2TestDatabase();
    }
}
