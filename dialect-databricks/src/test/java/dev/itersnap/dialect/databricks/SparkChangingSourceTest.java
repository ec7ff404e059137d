package dev.itersnap.dialect.databricks;

import dev.itersnap.conformance.ChangingSourceTests;
import dev.itersnap.conformance.TestDatabase;

/**
 * A source that changes while a run reads it, on local Spark + Delta, outside the lean selection: each case is five
 * engine runs (about two minutes here), and the engine's handling is dialect-neutral, tested on H2 and PostgreSQL in
 * CI. The case the check after a key-scoped replay's staging ({@code Dialect.fingerprintReplayedKeys}, whose SQL is
 * Spark's too) exists for, a replayed file gone when its keys' rows are staged and back unchanged, passed here in
 * 120 s; run it by putting
 * {@code aFileReplacedWhileTheRunReadsTheSourceLosesNoRow[REPLAYED_FILE, EMPTY_WHEN_STAGED, reloaded UNCHANGED]} in the
 * selection, or every case with {@code -Ditersnap.spark.all=true}.
 */
@SparkSelection({})
class SparkChangingSourceTest extends ChangingSourceTests {
    @Override
    protected TestDatabase database() {
        return new SparkTestDatabase();
    }

    /** Delta commits every statement on its own: no transaction whose reads could be measured. */
    @Override
    protected boolean readsInTransactions() {
        return false;
    }
}
