package dev.itersnap.dialect.postgres;

import dev.itersnap.conformance.LateDeliveryTests;
import dev.itersnap.conformance.TestDatabase;

/** Late delivery against in-order delivery on PostgreSQL. */
class PostgresLateDeliveryTest extends LateDeliveryTests {
    @Override
    protected TestDatabase database() {
        return new PostgresTestDatabase();
    }
}
