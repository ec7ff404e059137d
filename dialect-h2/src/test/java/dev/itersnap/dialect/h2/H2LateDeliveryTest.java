package dev.itersnap.dialect.h2;

import dev.itersnap.conformance.LateDeliveryTests;
import dev.itersnap.conformance.TestDatabase;

/** Late delivery against in-order delivery on H2. */
class H2LateDeliveryTest extends LateDeliveryTests {
    @Override
    protected TestDatabase database() {
        return new H2TestDatabase();
    }
}
