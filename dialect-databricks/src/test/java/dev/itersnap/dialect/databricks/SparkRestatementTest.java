package dev.itersnap.dialect.databricks;

import dev.itersnap.conformance.RestatementTests;
import dev.itersnap.conformance.TestDatabase;

/**
 * Restated batches on local Spark + Delta. Selected: rows corrected in an applied batch, replayed and equal to a clean
 * run (the content hash through {@code xxhash64} under ANSI mode); its first four files are applied in one run (four
 * runs instead of seven). {@code -Ditersnap.spark.all=true} runs them all
 * (dropping the ledger's column needs Delta column mapping: that case is for H2 and PostgreSQL).
 */
@SparkSelection({"restatedBatchIsReplayedAndEqualsACleanRunOverTheCorrectedSource[ROWS_CORRECTED, hard_deletes IGNORE]"})
class SparkRestatementTest extends RestatementTests {
    @Override
    protected TestDatabase database() {
        return new SparkTestDatabase();
    }

    @Override
    protected boolean appliesTheFilesInOneRun() {
        return true;
    }
}
