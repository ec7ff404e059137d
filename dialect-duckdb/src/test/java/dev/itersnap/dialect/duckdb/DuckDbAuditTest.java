package dev.itersnap.dialect.duckdb;

import dev.itersnap.conformance.AuditTests;
import dev.itersnap.conformance.TestDatabase;

/** The conformance suite's AuditTests ({@code IterativeSnapshot.audit}) on DuckDB (in memory). */
class DuckDbAuditTest extends AuditTests {
    @Override
    protected TestDatabase database() {
        return new DuckDbTestDatabase();
    }
}
