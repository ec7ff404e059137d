package dev.itersnap.conformance;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** The generator's promises: deterministic per seed, and every plan is one a real pipeline could produce. */
class ScenarioGeneratorTest {
    private final ScenarioGenerator generator = new ScenarioGenerator();

    @Test
    void theSameSeedGivesTheSameScenario() {
        assertThat(generator.generate(42).describe()).isEqualTo(generator.generate(42).describe());
        assertThat(generator.generate(42).describe()).isNotEqualTo(generator.generate(43).describe());
    }

    @Test
    void plansDeliverEveryBatchOnceAndRetentionDropsOnlyAppliedBatches() {
        for (long n = 1; n <= 2000; n++) {
            long seed = n;
            Scenario s = generator.generate(seed);
            assertThat(s.batches()).as("seed %d", seed).hasSizeBetween(2, 7);
            s.batches().forEach(b -> assertThat(b.rows()).as("seed %d", seed).isNotEmpty());
            if (!s.dateSequence()) {
                assertThat(s.batches().stream().map(b -> (Object) b.sequence()).toList()).as("seed %d", seed)
                        .contains(9L, 10L);
            }
            List<Integer> delivered = new ArrayList<>();
            Set<Integer> inSource = new HashSet<>();
            for (Scenario.Step step : s.plan()) {
                assertThat(inSource).as("seed %d drops only applied batches still in the source", seed)
                        .containsAll(step.drop());
                step.drop().forEach(inSource::remove);
                delivered.addAll(step.deliver());
                inSource.addAll(step.deliver());
            }
            assertThat(delivered).as("seed %d", seed).doesNotHaveDuplicates().hasSize(s.batches().size());
            assertThat(s.expected().rejections()).as("seed %d", seed).isNotNull(); // the model accepts every case
        }
    }

    @Test
    void casesCoverEverySettingAndRetentionInsideAReplayRange() {
        Set<String> seen = new HashSet<>();
        int reproducing = 0;
        for (long seed = 1; seed <= 300; seed++) {
            Scenario s = generator.generate(seed);
            seen.add(s.strategy() + "/" + s.hardDeletes() + "/" + s.deleteWhen() + "/" + s.dateSequence() + "/"
                    + s.keyColumns().size());
            if (needsReproduction(s)) {
                reproducing++;
            }
        }
        assertThat(seen).hasSizeGreaterThan(30);
        assertThat(reproducing).isGreaterThan(20);
    }

    /** True when some late batch replays over a batch that retention already dropped. */
    static boolean needsReproduction(Scenario s) {
        Set<Integer> dropped = new HashSet<>();
        for (Scenario.Step step : s.plan()) {
            dropped.addAll(step.drop());
            int smallest = step.deliver().stream().min(Integer::compare).orElse(Integer.MAX_VALUE);
            if (dropped.stream().anyMatch(d -> d > smallest)) {
                return true;
            }
        }
        return false;
    }
}
