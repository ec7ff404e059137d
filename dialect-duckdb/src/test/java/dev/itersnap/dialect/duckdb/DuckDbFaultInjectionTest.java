package dev.itersnap.dialect.duckdb;

import dev.itersnap.conformance.FaultInjectionTests;
import dev.itersnap.conformance.TestDatabase;

/**
 * The conformance suite's FaultInjectionTests on DuckDB (in memory), sampled as on PostgreSQL: a fault point costs a
 * fresh scenario (DuckDB copies no database cheaply), the failing run, the rerun and the replay. Every connection
 * fault, every 16th point of the other kinds that fail at a call, every 24th statement a statement fault may take
 * (every 7th crash: an odd stride, so that the sampled crashes alternate between the two places a rerun is failed once
 * more), at least one per kind and scenario, and the replay failed at each of its writes in turn. H2 runs every point
 * twice; DuckDB shows that its own statements fail, abort and roll back the same way. {@code -Ditersnap.faults=all}
 * injects at every point.
 */
class DuckDbFaultInjectionTest extends FaultInjectionTests {
    @Override
    protected TestDatabase database() {
        return new DuckDbTestDatabase();
    }

    @Override
    protected Sampling sampling() {
        return new Sampling(16, 24, 7);
    }
}
