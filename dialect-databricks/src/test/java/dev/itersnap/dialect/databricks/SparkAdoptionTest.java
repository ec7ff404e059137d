package dev.itersnap.dialect.databricks;

import dev.itersnap.conformance.AdoptionTests;
import dev.itersnap.conformance.TestDatabase;

/**
 * Taking over a dbt snapshot on local Spark + Delta (the bookkeeping columns added with {@code ADD COLUMNS}, the
 * change types filled by MERGE, Delta refusing subqueries in an UPDATE). Not in the CI selection (each case is several
 * engine runs, minutes on local Spark); {@code -Ditersnap.spark.all=true} runs them, for example
 * {@code -Dtest=SparkAdoptionTest -Ditersnap.spark.all=true}.
 */
@SparkSelection({})
class SparkAdoptionTest extends AdoptionTests {
    @Override
    protected TestDatabase database() {
        return new SparkTestDatabase();
    }
}
