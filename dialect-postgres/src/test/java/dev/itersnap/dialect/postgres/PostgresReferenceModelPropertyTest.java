package dev.itersnap.dialect.postgres;

import dev.itersnap.conformance.ReferenceModelPropertyTest;
import dev.itersnap.conformance.TestDatabase;

/** The generated order-independence cases on PostgreSQL ({@code -Ditersnap.cases=N}). */
class PostgresReferenceModelPropertyTest extends ReferenceModelPropertyTest {
    @Override
    protected TestDatabase database() {
        return new PostgresTestDatabase();
    }
}
