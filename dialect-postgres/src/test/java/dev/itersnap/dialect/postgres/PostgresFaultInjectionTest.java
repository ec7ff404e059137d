package dev.itersnap.dialect.postgres;

import dev.itersnap.conformance.FaultInjectionTests;
import dev.itersnap.conformance.TestDatabase;

import java.util.ArrayList;
import java.util.List;

/**
 * The conformance suite's FaultInjectionTests on PostgreSQL (embedded, or ITERSNAP_PG_URL). A fault point costs about
 * a second here (a copy of the prepared database, the failing run, the rerun, the replay), so by default every
 * connection fault, every {@value #STRIDE}th point of the other kinds that fail at a call (prepare, next), and every
 * {@value #STATEMENT_STRIDE}th of the points where a statement fails (before or after it ran) among those each kind
 * may take, the residue moving with the scenario and the kind so that the sampled statements differ between them,
 * and at least one per kind and scenario (about 70 points and 4 minutes on the 2-core CI machine, beside the replay
 * failed at each of its writes in turn). H2 runs every point of every scenario twice, with and without transactions;
 * PostgreSQL shows that its own statements fail, abort and roll back the same way. {@code -Ditersnap.faults=all}
 * injects at every point (about 1,100).
 */
class PostgresFaultInjectionTest extends FaultInjectionTests {
    /** One point in this many, of the kinds that fail at a call other than a statement's execution. */
    static final int STRIDE = 16;
    /** One point in this many of those a statement fault may take (at least one per kind and scenario). */
    static final int STATEMENT_STRIDE = 24;
    /** One crash point in this many (a crash scenario runs about 60 statements). */
    static final int CRASH_STRIDE = 7;

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
        // a crash (the connection killed mid-transaction) leaves work for recovery only where the run had committed
        // part of its writes (its stage, its DDL): sampled more densely, so that some sampled crash always does
        int statementStride = fault == Fault.CRASH ? CRASH_STRIDE : STATEMENT_STRIDE;
        int residue = Math.floorMod(scenario.length() + fault.ordinal(), script.isEmpty() ? STRIDE : statementStride);
        if (script.isEmpty()) {
            // a different residue per scenario and kind, so the sampled points move around the run
            return Math.floorMod(k + residue, STRIDE) == 0;
        }
        // the statements this kind may fail, in order: every STATEMENT_STRIDE-th from the residue on, or the middle
        // one where there are fewer
        List<Integer> eligible = new ArrayList<>();
        for (int j = 1; j <= script.size(); j++) {
            if (super.inject(scenario, fault, j, script)) {
                eligible.add(j);
            }
        }
        int at = eligible.indexOf(k);
        return eligible.size() > residue ? at % statementStride == residue : at == eligible.size() / 2;
    }
}
