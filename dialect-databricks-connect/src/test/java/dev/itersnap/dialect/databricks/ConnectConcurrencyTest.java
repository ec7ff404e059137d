package dev.itersnap.dialect.databricks;

import dev.itersnap.conformance.ConcurrencyTests;
import dev.itersnap.conformance.TestDatabase;

/**
 * The lease through Spark Connect: while one run holds the model, a second run gives up after its lock_timeout,
 * naming the holder; then the holder finishes and a later run takes the lease. The lease's statements run outside the
 * statement window there too (on the Connect session, concurrently with the run's).
 */
@SparkSelection({"runWaitingLongerThanLockTimeoutFailsNamingTheModelAndTheHolder"})
class ConnectConcurrencyTest extends ConcurrencyTests {
    @Override
    protected TestDatabase database() {
        return new ConnectTestDatabase();
    }

    @Override
    protected long patience(long millis) {
        return millis * 5;
    }
}
