package dev.itersnap.dialect.duckdb;

import dev.itersnap.conformance.StatementCountTests;
import dev.itersnap.conformance.TestDatabase;

/** The conformance suite's StatementCountTests on DuckDB (in memory). */
class DuckDbStatementCountTest extends StatementCountTests {
    @Override
    protected TestDatabase database() {
        return new DuckDbTestDatabase();
    }

    /** This database's count (2026-12-07): a change that adds a statement to the everyday run fails here. */
    @Override
    protected int budgetPerRun() {
        return 22;
    }

    /** This database's count of a run with nothing new (2026-12-07; one write, its run-log row, and no lock). */
    @Override
    protected int budgetNothingNew() {
        return 5;
    }
}
