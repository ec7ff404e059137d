package dev.itersnap.dialect.h2;

import dev.itersnap.conformance.AdoptionTests;
import dev.itersnap.conformance.TestDatabase;

/** Taking over a dbt snapshot on H2. */
class H2AdoptionTest extends AdoptionTests {
    @Override
    protected TestDatabase database() {
        return new H2TestDatabase();
    }
}
