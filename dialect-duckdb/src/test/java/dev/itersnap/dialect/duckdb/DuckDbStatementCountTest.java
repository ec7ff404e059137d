package dev.itersnap.dialect.duckdb;

import dev.itersnap.conformance.StatementCountTests;
import dev.itersnap.conformance.TestDatabase;

/** The conformance suite's StatementCountTests on DuckDB (in memory). */
class DuckDbStatementCountTest extends StatementCountTests {
    @Override
    protected TestDatabase database() {
        return new DuckDbTestDatabase();
    }
}
