package dev.itersnap.spi;

import org.junit.jupiter.api.Test;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a dialect author reads (docs/decisions/0014-the-engine-writes-the-steps.md): {@link Dialect} stays one
 * interface of at most 22 methods, none of them a step of a run; the steps' SQL is the engine's.
 */
class DialectSurfaceTest {
    @Test
    void theDialectInterfaceHasAtMost22MethodsAndNoStep() {
        List<String> methods = Arrays.stream(Dialect.class.getDeclaredMethods())
                .filter(m -> !m.isSynthetic() && !Modifier.isStatic(m.getModifiers())).map(Method::getName).toList();
        assertThat(methods).as("methods of Dialect").hasSizeLessThanOrEqualTo(22).contains("name", "lock", "quote");
        assertThat(methods).as("steps of a run belong to the engine (SqlSteps), not to the dialect")
                .doesNotContain("stageSource", "applyBatches", "rollback", "discoverSequences", "timelineCheck",
                        "fingerprintSequences", "asOf", "describe");
    }

    @Test
    void planHintsAnswerNothingByDefault() {
        PlanHints none = PlanHints.NONE;
        assertThat(none.discoverSequences(null, "t")).isNull();
        assertThat(none.scopedRows(null, "t", StageScope.FRESH, "from", "joined")).isNull();
        assertThat(none.touchedVersions(null, "p")).isNull();
        assertThat(none.statistics(dev.itersnap.core.TableName.parse("table", "s.t"))).isEmpty();
    }
}
