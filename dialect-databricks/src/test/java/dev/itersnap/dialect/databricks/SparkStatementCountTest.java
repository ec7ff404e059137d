package dev.itersnap.dialect.databricks;

import dev.itersnap.conformance.StatementCountTests;
import dev.itersnap.conformance.TestDatabase;

/**
 * Statements and writes (each a Delta commit) per run on local Spark + Delta, held to the same budget as on H2 and
 * PostgreSQL, in a lean form: first loads of 1, 5 and 12 batches and late batches 1 and 5 deep (H2 and PostgreSQL
 * measure 1, 30 and 100, and 1 and 20 deep; {@code -Ditersnap.spark.all=true} does so here, many minutes). The figures
 * in dialect-databricks/README.md come from {@code SparkCostFiguresTest}.
 */
@SparkSelection({"statementsPerRunStayTheSameWhateverTheNumberOfBatchesAndHowDeepALateOneIs"})
class SparkStatementCountTest extends StatementCountTests {
    private static final boolean ALL = Boolean.getBoolean("itersnap.spark.all");

    @Override
    protected TestDatabase database() {
        return new SparkTestDatabase();
    }

    @Override
    protected int manyBatches() {
        return ALL ? super.manyBatches() : 5;
    }

    @Override
    protected int mostBatches() {
        return ALL ? super.mostBatches() : 12;
    }

    @Override
    protected int deepLate() {
        return ALL ? super.deepLate() : 5;
    }
}
