package dev.itersnap.dialect.databricks;

import dev.itersnap.conformance.RestatementTests;
import dev.itersnap.conformance.TestDatabase;

/**
 * Restated batches on local Spark + Delta. Outside the default build (the case of the full comparison took about five
 * minutes on a 2-core machine): every run of the default selection fingerprints the batches it applies and compares the
 * newest and a swept one (the statements of the bounded comparison), the newest batch corrected and replayed by the
 * next run is part of {@code SourceTypesTests.columnsNamedLikeTheSqlsAliasesAreCarriedThroughEveryKindOfRun} (in the
 * selection), and a restatement is replayed as a late batch is, which the selection covers; the comparison's
 * statements (the fingerprints, the history's sequences) are pinned in {@code databricks-steps.sql}; H2, PostgreSQL and
 * DuckDB run every case. {@code -Ditersnap.spark.all=true} runs
 * every case here, the first four files of a case applied in one run (four runs instead of seven); dropping the
 * ledger's column needs Delta column mapping: that case is for H2 and PostgreSQL.
 */
@SparkSelection({})
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
