package dev.itersnap.dialect.databricks;

import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.util.Arrays;

/**
 * The lean selection of a conformance runner on local Spark: one engine run costs 20-40 s there (every statement is
 * a Spark job and a Delta commit), so of the suite's inherited tests only the listed ones run by default; the others
 * are reported as skipped. {@code -Ditersnap.spark.all=true} runs every test.
 *
 * <p>An entry is a test method's name, or {@code name[part]} for the invocations of a parameterized test whose
 * display name contains {@code part}.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
@ExtendWith(SparkSelection.Condition.class)
@interface SparkSelection {
    String[] value();

    /** Enables the listed tests (and the invocations named) unless every test is asked for. */
    final class Condition implements ExecutionCondition {
        @Override
        public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
            if (Boolean.getBoolean("itersnap.spark.all") || context.getTestMethod().isEmpty()) {
                return ConditionEvaluationResult.enabled("class level, or -Ditersnap.spark.all=true");
            }
            SparkSelection selection = context.getRequiredTestClass().getAnnotation(SparkSelection.class);
            String method = context.getRequiredTestMethod().getName();
            boolean invocation = context.getUniqueId().contains("-invocation:");
            boolean selected = selection != null && Arrays.stream(selection.value()).anyMatch(entry -> {
                if (entry.equals(method)) {
                    return true;
                }
                if (!entry.startsWith(method + "[") || !entry.endsWith("]")) {
                    return false;
                }
                String part = entry.substring(method.length() + 1, entry.length() - 1);
                return !invocation || context.getDisplayName().contains(part);
            });
            return selected ? ConditionEvaluationResult.enabled("in the lean Spark selection")
                    : ConditionEvaluationResult.disabled("not in the lean Spark selection (an engine run costs 20-40 s "
                    + "on local Spark); -Ditersnap.spark.all=true runs it");
        }
    }
}
