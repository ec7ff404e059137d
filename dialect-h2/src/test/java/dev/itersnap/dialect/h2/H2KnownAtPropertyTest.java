package dev.itersnap.dialect.h2;

import dev.itersnap.conformance.KnownAtPropertyTest;
import dev.itersnap.conformance.TestDatabase;

/** The history as known at each run's finish is what that run produced, on generated cases, on in-memory H2. */
class H2KnownAtPropertyTest extends KnownAtPropertyTest {
    @Override
    protected TestDatabase database() {
        return new H2TestDatabase();
    }
}
