package dev.itersnap.dialect.postgres;

import dev.itersnap.conformance.FaultInjectionTests;
import dev.itersnap.conformance.TestDatabase;

import java.util.List;
import java.util.Set;

/**
 * The conformance suite's FaultInjectionTests on PostgreSQL (embedded, or ITERSNAP_PG_URL). A fault point costs about
 * a second here (a copy of the prepared database, the failing run, the rerun, the replay), so by default: a failure
 * and a crash at every statement of the replay scenarios, as on H2; every connection; and every
 * {@value #STRIDE}th point of the other kinds (executed-then-fail, prepare, next row) and of the first-run,
 * full-refresh and widening scenarios, which H2 runs in full twice (with and without transactions).
 * {@code -Ditersnap.faults=all} injects at every point.
 */
class PostgresFaultInjectionTest extends FaultInjectionTests {
    /** One point in this many of the sampled kinds and scenarios. */
    static final int STRIDE = 4;
    private static final Set<String> SAMPLED_SCENARIOS = Set.of("first run", "full refresh", "widening");

    @Override
    protected TestDatabase database() {
        return new PostgresTestDatabase();
    }

    @Override
    protected boolean inject(String scenario, Fault fault, int k, List<String> script) {
        if (!super.inject(scenario, fault, k, script)) {
            return false;
        }
        if ("all".equals(System.getProperty("itersnap.faults")) || fault == Fault.CONNECTION) {
            return true;
        }
        boolean sampled = fault == Fault.EXECUTED_THEN_FAIL || fault == Fault.PREPARE || fault == Fault.NEXT
                || SAMPLED_SCENARIOS.contains(scenario);
        // a different residue per scenario and kind, so the sampled points move around the run
        return !sampled || Math.floorMod(k + scenario.length() + fault.ordinal(), STRIDE) == 0;
    }
}
