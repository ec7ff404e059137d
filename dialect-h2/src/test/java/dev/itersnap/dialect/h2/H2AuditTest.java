package dev.itersnap.dialect.h2;

import dev.itersnap.conformance.AuditTests;
import dev.itersnap.conformance.TestDatabase;

/** The conformance suite's AuditTests ({@code IterativeSnapshot.audit}) on H2. */
class H2AuditTest extends AuditTests {
    @Override
    protected TestDatabase database() {
        return new H2TestDatabase();
    }
}
