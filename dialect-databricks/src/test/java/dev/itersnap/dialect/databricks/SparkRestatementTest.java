package dev.itersnap.dialect.databricks;

import dev.itersnap.conformance.RestatementTests;
import dev.itersnap.conformance.TestDatabase;

/**
 * Restated batches on local Spark + Delta. The lean selection runs the case of the full comparison: an older batch
 * found only by a full check ({@code runWithFullCheck}: every batch compared, the history's sequences read in full).
 * The bounded comparison (the newest batch corrected and replayed by the next run: a bound list of batches compared,
 * the fingerprint of the staged rows) runs in the lean selection as part of
 * {@code SourceTypesTests.columnsNamedLikeTheSqlsAliasesAreCarriedThroughEveryKindOfRun} (its restated newest day,
 * then one clean run compared), so its own case here runs with the rest. The other cases replay a restatement as a late batch is replayed, which the
 * selection covers, and their detection is dialect-neutral (H2 and PostgreSQL run them all in CI).
 * {@code -Ditersnap.spark.all=true} runs them all here, the first four files of a case applied in one run (four runs
 * instead of seven); dropping the ledger's column needs Delta column mapping: that case is for H2 and PostgreSQL.
 */
@SparkSelection({"restatementOutsideTheLookbackIsFoundByAFullCheck"})
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
