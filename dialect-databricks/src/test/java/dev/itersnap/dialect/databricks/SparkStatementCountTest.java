package dev.itersnap.dialect.databricks;

import dev.itersnap.conformance.StatementCountTests;
import dev.itersnap.conformance.TestDatabase;

/**
 * Statements and writes (each a Delta commit) per run on local Spark + Delta, held to the same budget as on H2 and
 * PostgreSQL: outside the lean selection (its first loads of 100 batches take many minutes there); run it with
 * {@code -Ditersnap.spark.all=true -Dtest=SparkStatementCountTest}. (The figures in dialect-databricks/README.md come
 * from {@code SparkCostFiguresTest}.)
 */
@SparkSelection({})
class SparkStatementCountTest extends StatementCountTests {
    @Override
    protected TestDatabase database() {
        return new SparkTestDatabase();
    }
}
