package dev.itersnap.dialect.h2;

import dev.itersnap.conformance.LeaseFencingTests;
import dev.itersnap.conformance.TestDatabase;

import java.time.Duration;

/**
 * The lease's fencing by fault injection on H2 run the way itersnap runs on Delta Lake: no transactional DML, and
 * the model lock a lease ({@code LeaseLock}, the Databricks dialect's lock) of 200 ms instead of H2's lock row.
 * Every write point of both scenarios; each waits one TTL for the lease to lapse.
 */
class H2LeaseFencingTest extends LeaseFencingTests {
    private static final Duration TTL = Duration.ofMillis(200);

    @Override
    protected Duration leaseTtl() {
        return TTL;
    }

    @Override
    protected TestDatabase database() {
        return new H2NonTransactionalTestDatabase(new H2Dialect(false, TTL));
    }
}
