package dev.itersnap.dialect.h2;

import dev.itersnap.conformance.FaultInjectionTests;
import dev.itersnap.conformance.TestDatabase;

import java.util.List;
import java.util.Locale;

/**
 * The conformance suite's FaultInjectionTests on H2 without transactional DML (see
 * {@link H2NonTransactionalTestDatabase}).
 *
 * <p>Two open engine bugs of the non-transactional path are worked around until they are fixed (each has a disabled
 * regression test in {@link FaultInjectionTests}, tagged {@code engine-bug}); remove both overrides then:
 * <ol>
 *   <li>a run that fails after saving aged-out batches to the pending table and before its ledger forgets them (or
 *   after its last batch, before clearing the pending table) leaves pending rows that the rerun, having nothing to
 *   apply, never clears: the comparison accepts a non-empty pending table and checks everything else
 *   ({@link #pendingLeftBehindByKnownBug});</li>
 *   <li>a first run that fails after registering some of the history's columns makes the rerun register the others
 *   as introduced by its first batch, so they are untracked, reset and filled as new columns in later replays: the
 *   registry inserts of the first-run scenario are not failed.</li>
 * </ol>
 */
class H2NonTransactionalFaultInjectionTest extends FaultInjectionTests {
    @Override
    protected TestDatabase database() {
        return new H2NonTransactionalTestDatabase();
    }

    @Override
    protected boolean pendingLeftBehindByKnownBug() {
        return true;
    }

    @Override
    protected boolean inject(String scenario, Fault fault, int k, List<String> script) {
        boolean statement = fault == Fault.FAIL || fault == Fault.EXECUTED_THEN_FAIL || fault == Fault.CRASH;
        return super.inject(scenario, fault, k, script)
                && !(statement && partialRegistry(scenario, fault == Fault.EXECUTED_THEN_FAIL, k, script));
    }

    /** Bug 2: a registry insert of the first run that ran (and failed the run) or that follows one that ran. */
    private static boolean partialRegistry(String scenario, boolean executed, int k, List<String> script) {
        if (!scenario.equals("first run") || !registryInsert(script.get(k - 1))) {
            return false;
        }
        return executed || script.subList(0, k - 1).stream().anyMatch(H2NonTransactionalFaultInjectionTest::registryInsert);
    }

    private static boolean registryInsert(String sql) {
        String s = sql == null ? "" : sql.strip().toLowerCase(Locale.ROOT);
        return s.startsWith("insert into") && s.contains("itersnap_columns");
    }
}
