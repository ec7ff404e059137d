package dev.itersnap.dialect.databricks;

import dev.itersnap.conformance.StatementCountTests;
import dev.itersnap.conformance.TestDatabase;

/**
 * Statements and writes (each a Delta commit) per run on local Spark + Delta: outside the lean selection (its first
 * loads of 100 batches take minutes there); run it with {@code -Ditersnap.spark.all=true
 * -Dtest=SparkStatementCountTest}. The figures it prints are those of the README's Databricks section.
 */
@SparkSelection({})
class SparkStatementCountTest extends StatementCountTests {
    @Override
    protected TestDatabase database() {
        return new SparkTestDatabase();
    }
}
