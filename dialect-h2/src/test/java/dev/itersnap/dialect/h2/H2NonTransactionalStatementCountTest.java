package dev.itersnap.dialect.h2;

import dev.itersnap.conformance.StatementCountTests;
import dev.itersnap.conformance.TestDatabase;

/** Statements per run, per batch and per replayed batch on H2NonTransactional. */
class H2NonTransactionalStatementCountTest extends StatementCountTests {
    @Override
    protected TestDatabase database() {
        return new H2NonTransactionalTestDatabase();
    }

    /** This database's count (2026-12-07): a change that adds a statement to the everyday run fails here. */
    @Override
    protected int budgetPerRun() {
        return 24;
    }

    /** This database's count of a run with nothing new (2026-12-07; one write, its run-log row, and no lock). */
    @Override
    protected int budgetNothingNew() {
        return 5;
    }

    /** The pending table looked up too: without transactions a failed replay may have left one. */
    @Override
    protected int catalogReadsPerRun() {
        return 3;
    }
}
