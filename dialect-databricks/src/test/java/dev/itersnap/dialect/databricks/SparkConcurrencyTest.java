package dev.itersnap.dialect.databricks;

import dev.itersnap.conformance.ConcurrencyTests;
import dev.itersnap.conformance.TestDatabase;

/**
 * Concurrency on local Spark + Delta, through the lease lock; opt-in ({@code -Ditersnap.spark.all=true}: a run
 * waiting longer than lock_timeout fails naming the holder while the holder finishes, and every other concurrency
 * case). In every build the lease itself is tested on Delta by {@link LeaseLockDeltaTest} (taken, refused naming the
 * holder, taken over when expired, many first acquisitions at once) and the waiting and the message by the H2 and
 * PostgreSQL runners of the same cases.
 */
@SparkSelection({})
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
