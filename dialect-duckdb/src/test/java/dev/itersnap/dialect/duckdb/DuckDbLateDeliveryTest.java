package dev.itersnap.dialect.duckdb;

import dev.itersnap.conformance.LateDeliveryTests;
import dev.itersnap.conformance.TestDatabase;

/** The conformance suite's LateDeliveryTests on DuckDB (in memory). */
class DuckDbLateDeliveryTest extends LateDeliveryTests {
    @Override
    protected TestDatabase database() {
        return new DuckDbTestDatabase();
    }
}
