package dev.itersnap.dialect.h2;

import dev.itersnap.conformance.ChangingSourceTests;
import dev.itersnap.conformance.TestDatabase;

/** A source that changes while a run reads it, on H2. */
class H2ChangingSourceTest extends ChangingSourceTests {
    @Override
    protected TestDatabase database() {
        return new H2TestDatabase();
    }
}
