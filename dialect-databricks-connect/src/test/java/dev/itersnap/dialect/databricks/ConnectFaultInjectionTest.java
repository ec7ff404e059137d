package dev.itersnap.dialect.databricks;

import dev.itersnap.conformance.TestDatabase;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Retry safety through Spark Connect: a late file replayed over an aged-out batch, then that replay failed at the
 * statement that leaves the most to recover (the roll back's first write to the history, see
 * {@link SparkFaultInjectionTest}), then rerun; the history, ledger, error log, archive, registry and pending table
 * must equal those of an uninterrupted run. Not in the default build (eight minutes on a 2-core machine): the fault is
 * injected above the transport, so what it adds to the Spark 4.2 module's run of the same case is the recovery's SQL
 * over gRPC, which {@link ConnectScenarioTest}'s replay runs too. {@code -Ditersnap.spark.faults=ci} (or any of
 * that setting's values) runs it.
 */
@SparkSelection({"replayOnOneDatabaseSurvivesAFailureAtEveryStatementInTurn"})
@EnabledIfSystemProperty(named = "itersnap.spark.faults", matches = ".+")
class ConnectFaultInjectionTest extends SparkFaultInjectionTest {
    @Override
    protected TestDatabase database() {
        return new ConnectTestDatabase();
    }
}
