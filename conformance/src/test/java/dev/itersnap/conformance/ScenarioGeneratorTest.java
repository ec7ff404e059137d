package dev.itersnap.conformance;

import dev.itersnap.conformance.Scenario.ColumnChange;
import dev.itersnap.conformance.TestDatabase.ColumnType;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

/** The generator's promises: deterministic per seed, and every plan is one a real pipeline could produce. */
class ScenarioGeneratorTest {
    private final ScenarioGenerator generator = new ScenarioGenerator();

    @Test
    void theSameSeedGivesTheSameScenario() {
        assertThat(generator.generate(42).describe()).isEqualTo(generator.generate(42).describe());
        assertThat(generator.generate(42).describe()).isNotEqualTo(generator.generate(43).describe());
        assertThat(generator.generate(987_654_321_987L).describe())
                .isEqualTo(generator.generate(987_654_321_987L).describe());
    }

    @Test
    void plansDeliverEveryBatchOnceAndRetentionDropsOnlyAppliedBatches() {
        for (long n = 1; n <= 1000; n++) {
            long seed = n;
            Scenario s = generator.generate(seed);
            int min = switch (s.profile()) {
                case SMALL -> 2;
                case MEDIUM -> 8;
                case LONG -> 20;
            };
            assertThat(s.batches()).as("seed %d", seed).hasSizeBetween(min, 40);
            s.batches().forEach(b -> assertThat(b.rows()).as("seed %d", seed)
                    .anyMatch(r -> !Scenario.JUNK.equals(r.get("status"))));
            for (int i = 1; i < s.batches().size(); i++) {
                assertThat(ReferenceModel.compareValues(s.batches().get(i - 1).sequence(),
                        s.batches().get(i).sequence())).as("seed %d: batches in business order", seed).isNegative();
            }
            if (s.sequenceType() == ColumnType.INTEGER) {
                assertThat(s.batches().stream().map(b -> (Object) b.sequence()).toList()).as("seed %d", seed)
                        .contains(9L, 10L);
            }
            List<Integer> delivered = new ArrayList<>();
            Set<Integer> inSource = new HashSet<>();
            Set<String> columns = new HashSet<>(s.columnNames());
            for (Scenario.Step step : s.plan()) {
                assertThat(inSource).as("seed %d drops only applied batches still in the source", seed)
                        .containsAll(step.drop());
                step.drop().forEach(inSource::remove);
                for (ColumnChange c : step.changes()) {
                    switch (c.kind()) {
                        case ADD -> assertThat(columns.add(c.column().name())).as("seed %d adds a new column", seed)
                                .isTrue();
                        case DROP -> {
                            assertThat(columns.remove(c.column().name())).as("seed %d drops a column", seed).isTrue();
                            assertThat(s.checkCols() == null || !s.checkCols().contains(c.column().name()))
                                    .as("seed %d never drops a check_cols column", seed).isTrue();
                        }
                        case WIDEN -> assertThat(columns).as("seed %d", seed).contains(c.column().name());
                    }
                }
                if (step.operation() != ReferenceModel.Operation.RUN) {
                    assertThat(delivered).as("seed %d rebuilds only after a first run", seed).isNotEmpty();
                }
                delivered.addAll(step.deliver());
                inSource.addAll(step.deliver());
            }
            assertThat(delivered).as("seed %d", seed).doesNotHaveDuplicates().hasSize(s.batches().size());
            assertThat(s.plan().get(0).deliver()).as("seed %d: the first step delivers", seed).isNotEmpty();
            assertThatCode(() -> ScenarioRunner.simulate(s)).as("seed %d: the model plays every case", seed)
                    .doesNotThrowAnyException();
        }
    }
}
