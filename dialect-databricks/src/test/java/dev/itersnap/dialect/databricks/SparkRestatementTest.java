package dev.itersnap.dialect.databricks;

import dev.itersnap.conformance.RestatementTests;
import dev.itersnap.conformance.TestDatabase;

/**
 * Restated batches on local Spark + Delta. The lean selection runs the two cases of the bounded comparison: the
 * newest batch corrected and replayed by the next run (the comparison of a bound list of batches, the fingerprint of
 * the staged rows), and an older one found only by a full check ({@code runWithFullCheck}: every batch compared, the
 * history's sequences read in full). The other cases replay a restatement as a late batch is replayed, which the
 * selection covers, and their detection is dialect-neutral (H2 and PostgreSQL run them all in CI).
 * {@code -Ditersnap.spark.all=true} runs them all here, the first four files of a case applied in one run (four runs
 * instead of seven); dropping the ledger's column needs Delta column mapping: that case is for H2 and PostgreSQL.
 */
@SparkSelection({"restatementOfTheNewestBatchIsReplayedByTheNextRun", "restatementOutsideTheLookbackIsFoundByAFullCheck"})
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
