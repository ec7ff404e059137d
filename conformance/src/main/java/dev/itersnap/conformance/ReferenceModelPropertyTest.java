package dev.itersnap.conformance;

import dev.itersnap.conformance.Scenario.Profile;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.fail;

/**
 * Order independence and every documented rule, on generated cases: whatever the arrival order, the split
 * into runs, the retention of the source, the schema changes and the deliberate rebuilds, the engine agrees with the
 * {@link ReferenceModel} after every run: the run's result and events, and everything in the database (every column
 * of the history, the ledger, the error log's records, the archive, the column registry, the pending table, the run
 * log). While the raw table keeps its columns, the model itself must equal one clean in-order run of the batches
 * applied so far.
 *
 * <p>A dialect module subclasses it and supplies a {@link TestDatabase}. Each build runs the fixed seeds
 * {@code 1..N} ({@link #defaultCases()}) plus a block of fresh random seeds ({@link #defaultRandomCases()}) whose first
 * seed it prints. System properties: {@code -Ditersnap.seed=S} (run only seed S, for example one printed by a
 * failure), {@code -Ditersnap.cases=N} (fixed seeds), {@code -Ditersnap.firstSeed=S} (fixed seeds start at S),
 * {@code -Ditersnap.randomCases=M} (size of the random block, 0 for none), {@code -Ditersnap.randomSeed=S} (the random
 * block starts at S), {@code -Ditersnap.profile=small|medium|long} (every case of that size).
 *
 * <p>A case passes or fails. A failure prints the seed with the rerun hint, the batches, the delivery plan, the run
 * that first differed and every difference, and the events; the failing seeds are listed again at the end, smallest
 * case first.
 */
public abstract class ReferenceModelPropertyTest {
    /** Failing cases of the whole class, smallest first, for the summary printed at the end. */
    private static final Set<String> FAILURES = new ConcurrentSkipListSet<>();

    /** The database each case runs on. */
    protected abstract TestDatabase database();

    /** How many fixed seeds to run when {@code itersnap.cases} is not set. */
    protected int defaultCases() {
        return 300;
    }

    /** How many random seeds to run after the fixed ones when {@code itersnap.randomCases} is not set. */
    protected int defaultRandomCases() {
        return 30;
    }

    /** The cases to run: the fixed seeds, then the random block; or only {@code itersnap.seed}. */
    protected List<Scenario> cases() {
        ScenarioGenerator generator = new ScenarioGenerator();
        Profile profile = profile();
        List<Long> seeds = seeds(getClass().getSimpleName(), defaultCases(), defaultRandomCases());
        List<Scenario> out = new ArrayList<>();
        for (long seed : seeds) {
            out.add(profile == null ? generator.generate(seed) : generator.generate(seed, profile));
        }
        return out;
    }

    /** The seeds of a run of the property test, printed (the random block's first seed reruns it). */
    static List<Long> seeds(String who, int fixed, int random) {
        Long only = Long.getLong("itersnap.seed");
        if (only != null) {
            return List.of(only);
        }
        long first = Long.getLong("itersnap.firstSeed", 1L);
        int cases = Integer.getInteger("itersnap.cases", fixed);
        int randomCases = Integer.getInteger("itersnap.randomCases", random);
        long randomFirst = Long.getLong("itersnap.randomSeed",
                1_000_000L + Math.floorMod(System.nanoTime() ^ System.currentTimeMillis() * 31, 1_000_000_000_000L));
        List<Long> seeds = new ArrayList<>();
        for (long s = first; s < first + cases; s++) {
            seeds.add(s);
        }
        for (long s = randomFirst; s < randomFirst + randomCases; s++) {
            seeds.add(s);
        }
        System.out.printf(Locale.ROOT, "itersnap property test [%s]: fixed seeds %d..%d, random block %s "
                        + "(rerun a case with -Ditersnap.seed=S, the block with -Ditersnap.randomSeed=%d)%n", who,
                first, first + cases - 1, randomCases == 0 ? "none" : randomFirst + ".." + (randomFirst + randomCases
                        - 1), randomFirst);
        return seeds;
    }

    private static Profile profile() {
        String p = System.getProperty("itersnap.profile");
        return p == null || p.isBlank() ? null : Profile.valueOf(p.strip().toUpperCase(Locale.ROOT));
    }

    @TestFactory
    Stream<DynamicTest> historyEqualsTheReferenceModel() {
        return cases().stream().map(scenario -> DynamicTest.dynamicTest(scenario.title(), () -> check(scenario)));
    }

    @AfterAll
    static void printFailingSeeds() {
        if (!FAILURES.isEmpty()) {
            System.out.println("itersnap property test: failing seeds, smallest first (rerun one with "
                    + "-Ditersnap.seed=S):");
            FAILURES.forEach(f -> System.out.println("  " + f));
            FAILURES.clear();
        }
    }

    private void check(Scenario scenario) {
        String report = mismatches(scenario);
        if (report != null) {
            FAILURES.add(String.format(Locale.ROOT, "%5d rows  ", scenario.size()) + scenario.title());
            fail(report);
        }
    }

    /**
     * Whether each case also checks the history as known at each run's finish ({@link KnownAtPropertyTest}'s check, on
     * the cases it applies to), on the same database: for a database too slow to run the generated cases twice.
     * Default no.
     */
    protected boolean checksKnownAt() {
        return false;
    }

    /** Null when the engine agrees with the model after every run, else a report to reproduce the case. */
    private String mismatches(Scenario scenario) {
        ScenarioRunner.Result result;
        try {
            if (checksKnownAt() && KnownAtPropertyTest.applies(scenario)) {
                KnownAtPropertyTest.Check knownAt = new KnownAtPropertyTest.Check(scenario, database());
                result = new ScenarioRunner(database()).play(scenario, knownAt.atEnd(), knownAt.afterRun());
                if (result.passed() && knownAt.runs() != scenario.engineRuns()) {
                    return scenario.describe() + "\nthe known-at check recorded " + knownAt.runs() + " of "
                            + scenario.engineRuns() + " runs";
                }
            } else {
                result = new ScenarioRunner(database()).play(scenario);
            }
        } catch (Exception e) {
            return scenario.describe() + "\n" + ScenarioRunner.stackTrace(e);
        }
        if (result.passed()) {
            return null;
        }
        return scenario.describe() + "\nafter " + result.where() + " (" + result.comparisons()
                + " earlier runs agreed):\n" + String.join("\n", result.problems()) + "\nevents:\n  "
                + String.join("\n  ", result.events());
    }
}
