package dev.itersnap.dialect.postgres;

import dev.itersnap.conformance.LateDeliveryTests;
import dev.itersnap.conformance.TestDatabase;

/**
 * Late delivery against in-order delivery on PostgreSQL: 5 cases by default (a case costs about 3 s here; H2 runs 24
 * twice, and the generated cases of the reference model replay key by key on PostgreSQL too).
 */
class PostgresLateDeliveryTest extends LateDeliveryTests {
    @Override
    protected TestDatabase database() {
        return new PostgresTestDatabase();
    }

    @Override
    protected int cases() {
        return Integer.getInteger("itersnap.lateCases", 5);
    }
}
