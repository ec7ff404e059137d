package dev.itersnap.dialect.databricks;

import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * One fault point on Spark 3.5 + Delta 3.3 (Databricks Runtime 15.4 / 16.4 LTS): a late file replayed over an aged-out
 * batch, then that replay failed at the roll back's first write to the history and rerun; everything must equal an
 * uninterrupted run (see {@link SparkFaultInjectionTest}). Not in the default build (five minutes on a 2-core
 * machine): the fault is injected above the engine's SQL, whose replay and roll back this module's selection runs
 * ({@code SparkScenarioTest}'s late batch before an aged-out one). {@code -Ditersnap.spark.faults=ci} (or any of that
 * setting's values) runs it.
 */
@EnabledIfSystemProperty(named = "itersnap.spark.faults", matches = ".+")
@SparkSelection({"replayOnOneDatabaseSurvivesAFailureAtEveryStatementInTurn"})
class Spark35FaultInjectionTest extends SparkFaultInjectionTest {
}
