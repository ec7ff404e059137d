package dev.itersnap.dialect.databricks;

import dev.itersnap.conformance.StatementCountTests;
import dev.itersnap.conformance.TestDatabase;

/**
 * Statements and writes (each a Delta commit) per run on local Spark + Delta, held to the same budget as on H2 and
 * PostgreSQL, in a lean form: first loads of 1 and 12 batches and late batches 1 and 5 deep (H2 and PostgreSQL
 * measure 1, 30 and 100, and 1 and 20 deep; {@code -Ditersnap.spark.all=true} does so here, many minutes). The figures
 * in dialect-databricks/README.md come from {@code SparkCostFiguresTest}.
 */
@SparkSelection({"statementsPerRunStayTheSameWhateverTheNumberOfBatchesAndHowDeepALateOneIs"})
class SparkStatementCountTest extends StatementCountTests {
    private static final boolean ALL = Boolean.getBoolean("itersnap.spark.all");
    private static String ttlBefore;

    /**
     * A lease TTL of 30 minutes while counting: a run slower than a third of the default TTL (100 s, on a busy
     * machine) would also count a heartbeat, which is not a statement of the run.
     */
    @org.junit.jupiter.api.BeforeAll
    static void longLease() {
        ttlBefore = System.getProperty(DatabricksDialect.TTL_PROPERTY);
        System.setProperty(DatabricksDialect.TTL_PROPERTY, "30m");
    }

    @org.junit.jupiter.api.AfterAll
    static void defaultLease() {
        if (ttlBefore == null) {
            System.clearProperty(DatabricksDialect.TTL_PROPERTY);
        } else {
            System.setProperty(DatabricksDialect.TTL_PROPERTY, ttlBefore);
        }
    }

    @Override
    protected TestDatabase database() {
        return new SparkTestDatabase();
    }

    @Override
    protected int manyBatches() {
        return ALL ? super.manyBatches() : mostBatches(); // one first load of several batches: 12
    }

    @Override
    protected int mostBatches() {
        return ALL ? super.mostBatches() : 12;
    }

    @Override
    protected int deepLate() {
        return ALL ? super.deepLate() : 5;
    }

    /**
     * Spark's count (2026-12-07; 6 of them writes, and the four scratch tables each created by its first INSERT: 10
     * Delta commits with the lease's two): a change that adds a statement to the everyday run fails here.
     */
    @Override
    protected int budgetPerRun() {
        return 20;
    }

    /**
     * Spark's count of a run with nothing new (2026-12-07): one write, its run-log row (one Delta commit), and no
     * lease.
     */
    @Override
    protected int budgetNothingNew() {
        return 5;
    }
}
