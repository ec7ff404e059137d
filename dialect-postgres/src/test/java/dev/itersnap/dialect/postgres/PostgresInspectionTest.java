package dev.itersnap.dialect.postgres;

import dev.itersnap.conformance.InspectionTests;
import dev.itersnap.conformance.TestDatabase;

/** The read API ({@code IterativeSnapshot.inspect}) on PostgreSQL (embedded). */
class PostgresInspectionTest extends InspectionTests {
    @Override
    protected TestDatabase database() {
        return new PostgresTestDatabase();
    }
}
