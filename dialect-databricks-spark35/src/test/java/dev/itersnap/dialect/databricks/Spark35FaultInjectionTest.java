package dev.itersnap.dialect.databricks;

/**
 * A late batch's replay and one fault point on Spark 3.5 + Delta 3.3 (Databricks Runtime 15.4 / 16.4 LTS): a late
 * file replayed over an aged-out batch (its reproduced flags asserted), then that replay failed at the roll back's
 * first write to the history and rerun; everything must equal an uninterrupted run (see
 * {@link SparkFaultInjectionTest}).
 */
@SparkSelection({"replayOnOneDatabaseSurvivesAFailureAtEveryStatementInTurn"})
class Spark35FaultInjectionTest extends SparkFaultInjectionTest {
}
