package dev.itersnap.dialect.databricks;

import dev.itersnap.conformance.TestDatabase;

/**
 * Retry safety through Spark Connect: the replay over an aged-out batch failed at the statement that leaves the most
 * to recover (the roll back's first write to the history, see {@link SparkFaultInjectionTest}), then rerun; the
 * history, ledger, error log, archive, registry and pending table must equal those of an uninterrupted run.
 */
@SparkSelection({"replayOnOneDatabaseSurvivesAFailureAtEveryStatementInTurn"})
class ConnectFaultInjectionTest extends SparkFaultInjectionTest {
    @Override
    protected TestDatabase database() {
        return new ConnectTestDatabase();
    }
}
