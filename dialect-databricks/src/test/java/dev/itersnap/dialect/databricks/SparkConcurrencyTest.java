package dev.itersnap.dialect.databricks;

import dev.itersnap.conformance.ConcurrencyTests;
import dev.itersnap.conformance.TestDatabase;

/**
 * Concurrency on local Spark + Delta, through the lease lock. Selected: a run waiting longer than lock_timeout fails
 * naming the holder while the holder finishes, and a later run gets the lock (one writer per model).
 */
@SparkSelection({"runWaitingLongerThanLockTimeoutFailsNamingTheModelAndTheHolder"})
class SparkConcurrencyTest extends ConcurrencyTests {
    @Override
    protected TestDatabase database() {
        return new SparkTestDatabase();
    }

    /** One run takes 20-40 s on local Spark, not milliseconds. */
    @Override
    protected long patience(long millis) {
        return millis * 5;
    }
}
