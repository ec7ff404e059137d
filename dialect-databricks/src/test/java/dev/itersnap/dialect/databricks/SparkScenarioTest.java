package dev.itersnap.dialect.databricks;

import dev.itersnap.conformance.ScenarioTests;
import dev.itersnap.conformance.TestDatabase;

/**
 * Conformance scenarios on local Spark + Delta. Selected: every kind of rejected row set aside with its reason and
 * counted (nothing lost, nothing silent; NULL-sequence rows logged through the counted MERGE with their RowsRejected
 * event is opt-in since 2026-12-07, the same error log's SQL), {@code ignore_null_updates} (its NULL-filling windows, a late batch that changes what the NULLs of a batch
 * gone from the source stand for, reproduced from the archive) and {@code untracked_columns: overwrite} (the window
 * that gives a version the values of its last row, the MERGE that overwrites in place, the restoring MERGE of a
 * key-scoped replay). {@code setAsideRecordsKeepEveryValueExactly} (a set-aside record keeps its timestamp's
 * microseconds; to_json's default format keeps milliseconds) passed on Spark 4.2 and 3.5 when the format options came
 * in and is left out of the lean selection (90 s); the SQL it depends on is pinned in {@code databricks-steps.sql}.
 */
@SparkSelection({"rowsTheBatchCannotApplyAreSetAsideWithTheirReason",
        "ignoreNullUpdatesLateBatchBeforeAnAgedOutBatchFillsItsNullsAgain",
        "overwrittenUntrackedColumnsKeepTheLastRowOfEachVersion"})
class SparkScenarioTest extends ScenarioTests {
    @Override
    protected TestDatabase database() {
        return new SparkTestDatabase();
    }
}
