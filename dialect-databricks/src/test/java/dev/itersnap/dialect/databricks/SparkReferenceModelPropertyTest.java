package dev.itersnap.dialect.databricks;

import dev.itersnap.conformance.KnownAtPropertyTest;
import dev.itersnap.conformance.ReferenceModel;
import dev.itersnap.conformance.ReferenceModelPropertyTest;
import dev.itersnap.conformance.Scenario;
import dev.itersnap.conformance.ScenarioGenerator;
import dev.itersnap.conformance.TestDatabase;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Generated scenarios against the in-memory reference model on local Spark + Delta, compared after every run like
 * on H2 and PostgreSQL, and read back as known at each run's finish ({@link #checksKnownAt}). One engine run costs 20-40 s here, so CI runs the cheapest cases that still replay: two
 * batches delivered in the wrong order over two runs (the second run finds the late batch, rolls back and replays),
 * {@link #CHEAP_FIXED} of them from the fixed seeds (from 1), plus one from a random block when
 * {@code -Ditersnap.randomSeed=S} names its first seed (each case costs about two minutes on the 2-core CI machine).
 * {@code -Ditersnap.seed=S} runs one case whatever its size; {@code -Ditersnap.spark.all=true} runs the fixed seeds
 * and the random block of every size ({@code -Ditersnap.cases=N}, default 2; {@code -Ditersnap.randomCases=M},
 * default 0).
 */
@SparkSelection({"historyEqualsTheReferenceModel"})
class SparkReferenceModelPropertyTest extends ReferenceModelPropertyTest {
    /** Cheap cases from the fixed seeds. */
    static final int CHEAP_FIXED = 1;

    /**
     * On a session set like Databricks' defaults ({@link SparkTestSession#databricksLike}: several shuffle partitions,
     * adaptive execution, code generation, MERGE sources materialized): the one generated case of every build runs
     * the engine's plans as a cluster would run them, not as the test session's single-partition settings do.
     */
    @Override
    protected TestDatabase database() {
        return new SparkTestDatabase(SparkTestSession::databricksLike);
    }

    /**
     * The known-at check rides on the case of every build ({@code SparkKnownAtPropertyTest} runs its own cases only
     * with {@code -Ditersnap.spark.all=true}): each run's history, as the case produced it, read back as known at the
     * run's finish, on the same database.
     */
    @Override
    protected boolean checksKnownAt() {
        return true;
    }

    @Override
    protected int defaultCases() {
        return 2;
    }

    @Override
    protected int defaultRandomCases() {
        return 0;
    }

    @Override
    protected List<Scenario> cases() {
        if (Long.getLong("itersnap.seed") != null || Boolean.getBoolean("itersnap.spark.all")) {
            return super.cases();
        }
        ScenarioGenerator generator = new ScenarioGenerator();
        List<Scenario> out = new ArrayList<>();
        for (long seed = 1; out.size() < CHEAP_FIXED; seed++) {
            Scenario s = generator.generate(seed);
            if (cheap(s) && KnownAtPropertyTest.applies(s)
                    && out.stream().noneMatch(o -> o.hardDeletes() == s.hardDeletes())) {
                out.add(s);
            }
        }
        Long random = Long.getLong("itersnap.randomSeed");
        if (random != null) {
            long seed = random;
            Scenario picked = generator.generate(seed);
            while (!cheap(picked)) {
                picked = generator.generate(++seed);
            }
            out.add(picked);
        }
        System.out.printf(Locale.ROOT, "itersnap property test [%s]: the cheapest cases that replay: seeds %s (rerun "
                + "one with -Ditersnap.seed=S; add the first such case from a random seed with "
                + "-Ditersnap.randomSeed=S)%n", getClass().getSimpleName(), out.stream().map(Scenario::seed).toList());
        return out;
    }

    /**
     * Two batches over two runs, the later batch first: the second run finds a late batch and replays. No schema
     * change, no rebuild step.
     */
    static boolean cheap(Scenario s) {
        if (s.batches().size() != 2 || s.plan().size() != 2 || s.engineRuns() != 2 || s.changesSchema()) {
            return false;
        }
        Scenario.Step first = s.plan().get(0);
        Scenario.Step second = s.plan().get(1);
        return first.operation() == ReferenceModel.Operation.RUN && second.operation() == ReferenceModel.Operation.RUN
                && first.deliver().equals(List.of(1)) && second.deliver().equals(List.of(0));
    }
}
