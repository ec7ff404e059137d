package dev.itersnap.dialect.postgres;

import dev.itersnap.conformance.FaultInjectionTests;
import dev.itersnap.conformance.TestDatabase;

/**
 * The conformance suite's FaultInjectionTests on PostgreSQL (embedded, or ITERSNAP_PG_URL). A fault point costs about
 * a second here (a copy of the prepared database, the failing run, the rerun, the replay), so the build samples: every
 * connection fault, every 16th point of the other kinds that fail at a call, every 24th statement a statement fault may
 * take (every 7th crash) and at least one per kind and scenario (about 70 points and 4 minutes on the 2-core CI
 * machine, beside the replay failed at each of its writes in turn). H2 runs every point of every scenario twice, with
 * and without transactions; PostgreSQL shows that its own statements fail, abort and roll back the same way.
 * {@code -Ditersnap.faults=all} injects at every point (about 1,100).
 */
class PostgresFaultInjectionTest extends FaultInjectionTests {
    @Override
    protected TestDatabase database() {
        return new PostgresTestDatabase();
    }

    @Override
    protected Sampling sampling() {
        return new Sampling(16, 24, 7);
    }
}
