package dev.itersnap.dialect.h2;

import dev.itersnap.conformance.InspectionTests;
import dev.itersnap.conformance.TestDatabase;

/** The read API ({@code IterativeSnapshot.inspect}) on H2. */
class H2InspectionTest extends InspectionTests {
    @Override
    protected TestDatabase database() {
        return new H2TestDatabase();
    }
}
