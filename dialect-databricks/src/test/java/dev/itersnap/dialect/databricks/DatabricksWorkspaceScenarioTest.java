package dev.itersnap.dialect.databricks;

import dev.itersnap.conformance.ScenarioTests;
import dev.itersnap.conformance.TestDatabase;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.lang.reflect.Method;
import java.util.Set;

/**
 * The conformance suite's ScenarioTests on a real Databricks workspace through the JDBC driver; runs only when
 * {@code ITERSNAP_DATABRICKS_URL} and {@code ITERSNAP_DATABRICKS_CATALOG} are set. Each statement is a Delta commit
 * of a second or more, so by default only {@link #LEAN}, a subset covering late batches and replay, every
 * hard-delete mode, delete_when, duplicates and NULL sequences, composite keys; {@code ITERSNAP_DATABRICKS_FULL=true}
 * runs every scenario a single schema can isolate. Left out always: the two scenarios that need a second database
 * while the first is open (Alice's in-order twin) or fixed schema names ({@code etl_meta}, {@code history}), because a
 * scenario's database here is a schema of one shared catalog.
 */
@EnabledIfEnvironmentVariable(named = DatabricksWorkspace.URL, matches = ".+")
@EnabledIfEnvironmentVariable(named = DatabricksWorkspace.CATALOG, matches = ".+")
@ExtendWith(DatabricksWorkspaceScenarioTest.Subset.class)
class DatabricksWorkspaceScenarioTest extends ScenarioTests {
    static final Set<String> LEAN = Set.of(
            "integerSequencesOrderNumericallyAcrossRuns",
            "hardDeletesInvalidateClosesAbsentKeysAtTheBatchDateAndReturningKeysNeverOverlap",
            "hardDeletesNewRecordAddsDeletionRecordsThatAReturningKeyCloses",
            "deleteWhenClosesTheKeyAtTheRowsUpdatedAt",
            "compositeKeysIdentifyCustomersByAllTheirColumns",
            "duplicateKeysAreAllSetAsideAndTheKeyIsUntouched",
            "nullSequenceRowsAreLoggedOnceAndNeverApplied");
    static final Set<String> NEVER = Set.of(
            "aliceStoryTuesdayArrivingAfterWednesdayIsReplayedInBusinessOrder",
            "renamedMetaColumnsQualifiedTargetAndOwnMetadataSchemaWork");

    private static final DatabricksWorkspace WORKSPACE = new DatabricksWorkspace();

    @Override
    protected TestDatabase database() {
        return WORKSPACE;
    }

    /** Enables the lean subset, or with ITERSNAP_DATABRICKS_FULL=true every scenario but {@link #NEVER}. */
    static final class Subset implements ExecutionCondition {
        @Override
        public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
            Method method = context.getTestMethod().orElse(null);
            if (method == null) {
                return ConditionEvaluationResult.enabled("class");
            }
            String name = method.getName();
            if (NEVER.contains(name)) {
                return ConditionEvaluationResult.disabled("needs a second database or fixed schema names at once");
            }
            boolean full = "true".equalsIgnoreCase(System.getenv("ITERSNAP_DATABRICKS_FULL"));
            return full || LEAN.contains(name) ? ConditionEvaluationResult.enabled("in the subset")
                    : ConditionEvaluationResult.disabled("not in the lean subset (ITERSNAP_DATABRICKS_FULL=true runs it)");
        }
    }
}
