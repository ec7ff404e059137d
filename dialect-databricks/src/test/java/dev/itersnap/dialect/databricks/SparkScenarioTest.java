package dev.itersnap.dialect.databricks;

import dev.itersnap.conformance.ConformanceTestBase;
import dev.itersnap.conformance.ScenarioTests;
import dev.itersnap.conformance.TestDatabase;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Conformance scenarios on local Spark + Delta. Selected: every kind of rejected row set aside with its reason and
 * counted (SPEC §5 nothing lost, nothing silent), and NULL-sequence rows logged through the counted MERGE with their
 * RowsRejected event.
 */
@SparkSelection({"rowsTheBatchCannotApplyAreSetAsideWithTheirReason", "nullSequenceRowsFireRowsRejected"})
class SparkScenarioTest extends ScenarioTests {
    @Override
    protected TestDatabase database() {
        return new SparkTestDatabase();
    }

    /**
     * ENGINE BUG (Databricks dialect): {@code jsonObject} renders the error log's records with {@code to_json}, whose
     * default timestamp format keeps milliseconds only, so a set-aside row's timestamps lose their microseconds (and
     * two NULL-sequence records differing only there count as one). Proposed fix: pass a {@code timestampFormat} with
     * microseconds in the options of {@code to_json}.
     */
    @Override
    @Test
    @Tag(ConformanceTestBase.ENGINE_BUG)
    @Disabled("engine bug: to_json truncates the error log's timestamps to milliseconds on Databricks; see the report "
            + "of issue 16")
    public void setAsideRecordsKeepEveryValueExactly() {
        super.setAsideRecordsKeepEveryValueExactly();
    }
}
