package dev.itersnap.dialect.postgres;

import dev.itersnap.conformance.AdoptionTests;
import dev.itersnap.conformance.TestDatabase;

/** Taking over a dbt snapshot on PostgreSQL. */
class PostgresAdoptionTest extends AdoptionTests {
    @Override
    protected TestDatabase database() {
        return new PostgresTestDatabase();
    }
}
