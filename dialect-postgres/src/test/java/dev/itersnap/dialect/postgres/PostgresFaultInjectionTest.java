package dev.itersnap.dialect.postgres;

import dev.itersnap.conformance.FaultInjectionTests;
import dev.itersnap.conformance.TestDatabase;

import java.util.List;

/**
 * The conformance suite's FaultInjectionTests on PostgreSQL (embedded, or ITERSNAP_PG_URL). A fault point costs about
 * a second here (a copy of the prepared database, the failing run, the rerun, the replay), so by default every
 * connection fault and every {@value #STRIDE}th point of each kind and scenario, the residue moving with the scenario
 * and the kind so that the sampled statements differ between them (about 90 points and 4 minutes on the 2-core CI
 * machine, beside the replay failed at each of its writes in turn; every kind must be injected in every
 * scenario, which a wider stride no longer guarantees). H2 runs every point of every scenario twice,
 * with and without transactions; PostgreSQL shows that its own statements fail, abort and roll back the same way.
 * {@code -Ditersnap.faults=all} injects at every point (about 1,100).
 */
class PostgresFaultInjectionTest extends FaultInjectionTests {
    /** One point in this many, of every kind and scenario. */
    static final int STRIDE = 16;

    @Override
    protected TestDatabase database() {
        return new PostgresTestDatabase();
    }

    /**
     * The replay failed in turn at each statement that changes something (writes, DDL, commits): a failure at a read
     * aborts the same transaction, and leaves the same state, as one at the next such statement.
     * {@code -Ditersnap.faults=all}: at every statement.
     */
    @Override
    protected boolean injectAt(int k, List<String> script) {
        return "all".equals(System.getProperty("itersnap.faults")) || changes(script.get(k - 1));
    }

    @Override
    protected boolean inject(String scenario, Fault fault, int k, List<String> script) {
        if (!super.inject(scenario, fault, k, script)) {
            return false;
        }
        if ("all".equals(System.getProperty("itersnap.faults")) || fault == Fault.CONNECTION) {
            return true;
        }
        // a different residue per scenario and kind, so the sampled points move around the run
        return Math.floorMod(k + scenario.length() + fault.ordinal(), STRIDE) == 0;
    }
}
