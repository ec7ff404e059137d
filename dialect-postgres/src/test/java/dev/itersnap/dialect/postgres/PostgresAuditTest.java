package dev.itersnap.dialect.postgres;

import dev.itersnap.conformance.AuditTests;
import dev.itersnap.conformance.TestDatabase;

/** The conformance suite's AuditTests ({@code IterativeSnapshot.audit}) on PostgreSQL (embedded). */
class PostgresAuditTest extends AuditTests {
    @Override
    protected TestDatabase database() {
        return new PostgresTestDatabase();
    }
}
