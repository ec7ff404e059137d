package dev.itersnap.dialect.databricks;

import dev.itersnap.conformance.TestDatabase;

/**
 * A late batch and retry safety through Spark Connect: a late file replayed over an aged-out batch (its reproduced
 * flags asserted: the replay's MERGEs, DELETEs and ledger writes and their counts over gRPC), then that replay failed
 * at the statement that leaves the most to recover (the roll back's first write to the history, see {@link SparkFaultInjectionTest}), then rerun; the
 * history, ledger, error log, archive, registry and pending table must equal those of an uninterrupted run.
 */
@SparkSelection({"replayOnOneDatabaseSurvivesAFailureAtEveryStatementInTurn"})
class ConnectFaultInjectionTest extends SparkFaultInjectionTest {
    @Override
    protected TestDatabase database() {
        return new ConnectTestDatabase();
    }
}
