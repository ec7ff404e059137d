package dev.itersnap.dialect.databricks;

import dev.itersnap.conformance.BadInputTests;
import dev.itersnap.conformance.TestDatabase;

/**
 * Bad input on local Spark + Delta. Selected: settings validation (no database), an unusable source query, and keys
 * and string sequences holding quotes and SQL, bound as values through late batch, deletion and replay (SPEC §5 safe
 * values).
 */
@SparkSelection({"invalidSettingFailsNamingTheSetting", "unusableSourceQueryIsInvalidSource",
        "keysAndSequencesContainingQuotesAreData"})
class SparkBadInputTest extends BadInputTests {
    @Override
    protected TestDatabase database() {
        return new SparkTestDatabase();
    }
}
