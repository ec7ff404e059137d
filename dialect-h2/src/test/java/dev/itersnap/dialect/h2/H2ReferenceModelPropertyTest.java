package dev.itersnap.dialect.h2;

import dev.itersnap.conformance.ReferenceModelPropertyTest;
import dev.itersnap.conformance.TestDatabase;

/** The generated order-independence cases on in-memory H2 (300 by default; {@code -Ditersnap.cases=N}). */
class H2ReferenceModelPropertyTest extends ReferenceModelPropertyTest {
    @Override
    protected TestDatabase database() {
        return new H2TestDatabase();
    }
}
