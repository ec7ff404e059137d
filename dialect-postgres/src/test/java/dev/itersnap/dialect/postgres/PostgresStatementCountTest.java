package dev.itersnap.dialect.postgres;

import dev.itersnap.conformance.StatementCountTests;
import dev.itersnap.conformance.TestDatabase;

/** Statements per run, per batch and per replayed batch on PostgreSQL. */
class PostgresStatementCountTest extends StatementCountTests {
    @Override
    protected TestDatabase database() {
        return new PostgresTestDatabase();
    }
}
