package dev.itersnap.dialect.databricks;

import dev.itersnap.conformance.RestatementTests;
import dev.itersnap.conformance.TestDatabase;

/**
 * Restated batches on local Spark + Delta, outside the lean selection: a restatement is found by the source
 * fingerprint, whose SQL ({@code xxhash64} under ANSI mode) every Spark run of the selection computes, and is then
 * replayed as a late batch is, which the selection covers; the detection itself is dialect-neutral and runs on H2 and
 * PostgreSQL in CI. {@code -Ditersnap.spark.all=true} runs them all here, the first four files of a case applied in
 * one run (four runs instead of seven); dropping the ledger's column needs Delta column mapping: that case is for H2
 * and PostgreSQL.
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
