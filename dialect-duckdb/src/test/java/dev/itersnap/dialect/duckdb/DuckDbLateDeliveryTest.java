package dev.itersnap.dialect.duckdb;

import dev.itersnap.conformance.LateDeliveryTests;
import dev.itersnap.conformance.TestDatabase;

/**
 * Late delivery against in-order delivery on DuckDB: 6 cases by default (about 1.2 s a case here; H2 runs 24 twice);
 * {@code -Ditersnap.lateCases=N} for more.
 */
class DuckDbLateDeliveryTest extends LateDeliveryTests {
    @Override
    protected TestDatabase database() {
        return new DuckDbTestDatabase();
    }

    @Override
    protected int cases() {
        return Integer.getInteger("itersnap.lateCases", 6);
    }
}
