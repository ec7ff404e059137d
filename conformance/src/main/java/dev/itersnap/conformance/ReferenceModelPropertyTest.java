package dev.itersnap.conformance;

import dev.itersnap.conformance.ScenarioRunner.LoggedError;
import dev.itersnap.conformance.ScenarioRunner.Outcome;
import dev.itersnap.conformance.ScenarioRunner.PlannedRun;
import dev.itersnap.core.BatchResult;
import dev.itersnap.core.HardDeletes;
import dev.itersnap.core.RunResult;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.fail;

/**
 * SPEC §5 "order independence", tested on generated cases: whatever the arrival order, the split into runs and the
 * retention of the source, the history equals the {@link ReferenceModel} applying every batch once in business order.
 * Also checks that every rejected row is in the error log with its reason, and the shape of each run (which batches
 * were applied or reproduced, whether a late batch was found).
 *
 * <p>A dialect module subclasses it and supplies a {@link TestDatabase}. System properties:
 * {@code -Ditersnap.cases=N} (number of cases, default {@link #defaultCases()}), {@code -Ditersnap.seed=S} (run only
 * seed S, for example one printed by a failure), {@code -Ditersnap.firstSeed=S} (seeds S, S+1, ...),
 * {@code -Ditersnap.acceptKnownLimits=true} (see {@link #knownFailures()}).
 *
 * <p>A failure prints the seed, the batches, the delivery plan, expected vs actual rows, the events, and a diagnosis:
 * the case is replayed in memory with the rollback/reproduction rules of docs/semantics.md ({@link ReplaySimulation})
 * to tell a slip of the engine from a limit of the rules ({@link KnownLimit}).
 */
public abstract class ReferenceModelPropertyTest {
    /** Failing cases of the whole class, smallest first, for the summary printed at the end. */
    private static final Set<String> FAILURES = new ConcurrentSkipListSet<>();

    /** The database each case runs on. */
    protected abstract TestDatabase database();

    /** How many cases to run when {@code itersnap.cases} is not set. */
    protected int defaultCases() {
        return 300;
    }

    /**
     * Seeds of the generated cases that are known to fail, with the {@link KnownLimit}s that explain them. Default:
     * {@code known-failures.txt} of this module (the limits of the documented rules fail alike on every dialect).
     * A listed case still runs: when its diagnosis finds only listed limits it is reported as aborted (skipped) with
     * the full report; anything else fails, and so does a listed case that passes, to keep the list honest.
     * {@code -Ditersnap.acceptKnownLimits=true} accepts any case explained by known limits (for long exploratory
     * runs beyond the listed seeds); they are still printed in the summary.
     */
    protected Map<Long, Set<KnownLimit>> knownFailures() {
        return KnownLimit.knownFailures();
    }

    @TestFactory
    Stream<DynamicTest> historyEqualsTheReferenceModel() {
        ScenarioGenerator generator = new ScenarioGenerator();
        Long only = Long.getLong("itersnap.seed");
        long first = Long.getLong("itersnap.firstSeed", 1L);
        LongStream seeds = only != null ? LongStream.of(only)
                : LongStream.range(first, first + Integer.getInteger("itersnap.cases", defaultCases()));
        Map<Long, Set<KnownLimit>> known = knownFailures();
        return seeds.mapToObj(seed -> {
            Scenario scenario = generator.generate(seed);
            return DynamicTest.dynamicTest(scenario.title(), () -> check(scenario, known.get(seed)));
        });
    }

    @AfterAll
    static void printFailingSeeds() {
        if (!FAILURES.isEmpty()) {
            System.out.println("itersnap property test: failing seeds, smallest first (rerun one with "
                    + "-Ditersnap.seed=S; 'known' ones were skipped):");
            FAILURES.forEach(f -> System.out.println("  " + f));
            FAILURES.clear();
        }
    }

    /** What a failing case showed: the report, the known limits that explain it, and whether anything is left over. */
    static final class Findings {
        final List<String> problems = new ArrayList<>();
        final Set<KnownLimit> limits = EnumSet.noneOf(KnownLimit.class);
        boolean unexplained;

        void unexplained(String problem) {
            problems.add(problem);
            unexplained = true;
        }
    }

    private void check(Scenario scenario, Set<KnownLimit> known) {
        Findings findings = new Findings();
        String report = mismatches(scenario, findings);
        if (report == null) {
            if (known != null) {
                fail("seed " + scenario.seed() + " is listed in known-failures.txt (" + known
                        + ") but now passes: remove it from the list");
            }
            return;
        }
        boolean accepted = !findings.unexplained && !findings.limits.isEmpty()
                && (known != null ? known.containsAll(findings.limits) : Boolean.getBoolean("itersnap.acceptKnownLimits"));
        FAILURES.add(String.format(Locale.ROOT, "%4d rows  ", scenario.size()) + scenario.title() + "  "
                + (accepted ? "known " : findings.unexplained ? "UNEXPLAINED " : "NOT LISTED ") + findings.limits);
        if (accepted) {
            Assumptions.abort("known failure " + findings.limits + "\n" + report);
        }
        fail((known != null ? "listed as known " + known + ", but the diagnosis finds "
                + (findings.unexplained ? "an unexplained mismatch" : findings.limits) + "\n" : "") + report);
    }

    /** Null when the engine agrees with the model, else a report with everything needed to reproduce the case. */
    private String mismatches(Scenario scenario, Findings findings) {
        Outcome outcome;
        try {
            outcome = new ScenarioRunner(database()).play(scenario);
        } catch (ScenarioRunner.ScenarioFailure e) {
            findings.unexplained = true;
            return scenario.describe() + "\n" + e.getMessage() + "\n" + stackTrace(e.getCause())
                    + "events:\n  " + String.join("\n  ", e.events());
        } catch (Exception e) {
            findings.unexplained = true;
            return scenario.describe() + "\n" + stackTrace(e);
        }
        ReferenceModel expected = scenario.expected();
        compareHistory(scenario, expected, outcome, findings);
        compareErrorLog(scenario, expected, outcome, findings);
        compareRuns(scenario, outcome, findings);
        if (findings.problems.isEmpty()) {
            return null;
        }
        return scenario.describe() + "\n" + String.join("\n", findings.problems) + "\nevents:\n  "
                + String.join("\n  ", outcome.events());
    }

    /** One version as compared: key, tracked columns, validity, change type, changed attributes, deletion flag. */
    record ComparedRow(List<Object> key, List<Object> tracked, LocalDateTime validFrom, LocalDateTime validTo,
                       String changeType, List<String> changedAttributes, Boolean deleted) {
        @Override
        public String toString() {
            return "key=" + key + " " + tracked + " from=" + validFrom + " to=" + validTo + " " + changeType
                    + " changed=" + changedAttributes + (deleted == null ? "" : " is_deleted=" + deleted);
        }
    }

    private static final Comparator<ComparedRow> ROW_ORDER = Comparator
            .comparing((ComparedRow r) -> r.key().toString())
            .thenComparing(ComparedRow::validFrom, Comparator.nullsLast(Comparator.naturalOrder()))
            .thenComparing(ComparedRow::validTo, Comparator.nullsLast(Comparator.naturalOrder()))
            .thenComparing(r -> Boolean.TRUE.equals(r.deleted()));

    private void compareHistory(Scenario scenario, ReferenceModel model, Outcome outcome, Findings findings) {
        List<ComparedRow> expected = rowsOf(scenario, model);
        List<ComparedRow> actual = rowsOf(scenario, outcome);
        if (expected.equals(actual)) {
            return;
        }
        String diff = "history differs from the reference model (- expected only, + actual only); tracked columns "
                + scenario.modelConfig().trackedColumns() + ":\n" + diff(expected, actual);
        ReplaySimulation.Result simulation = ReplaySimulation.simulate(scenario);
        List<ComparedRow> simulated = rowsOf(scenario, simulation.model());
        if (simulated.equals(actual) && !simulation.losses().isEmpty()) {
            diff += "diagnosis: the engine agrees with the documented rollback/reproduction rules (semantics.md), "
                    + "which lose information in this case (a limit of the rules, not a slip of the engine). "
                    + "What the reproduced batches lack:\n  " + simulation.losses().stream().map(Object::toString)
                    .collect(Collectors.joining("\n  ")) + "\n";
            findings.problems.add(diff);
            simulation.losses().forEach(l -> findings.limits.add(l.limit()));
        } else {
            diff += "diagnosis: the engine also differs from the documented rollback/reproduction rules "
                    + "(- simulated only, + actual only):\n" + diff(simulated, actual);
            findings.unexplained(diff);
        }
    }

    private static String diff(List<ComparedRow> expected, List<ComparedRow> actual) {
        StringBuilder diff = new StringBuilder();
        List<ComparedRow> unmatched = new ArrayList<>(actual);
        for (ComparedRow e : expected) {
            boolean found = unmatched.remove(e);
            diff.append(found ? "    " : "  - ").append(e).append('\n');
        }
        for (ComparedRow a : unmatched) {
            diff.append("  + ").append(a).append('\n');
        }
        return diff.toString();
    }

    private static List<ComparedRow> rowsOf(Scenario scenario, ReferenceModel model) {
        List<String> tracked = scenario.modelConfig().trackedColumns();
        boolean newRecord = scenario.hardDeletes() == HardDeletes.NEW_RECORD;
        List<ComparedRow> rows = new ArrayList<>();
        for (ReferenceModel.Version v : model.versions()) {
            rows.add(new ComparedRow(normaliseAll(v.key()),
                    normaliseAll(tracked.stream().map(c -> v.values().get(c)).toList()), v.validFrom(), v.validTo(),
                    v.changeType(), lowerCase(v.changedAttributes()), newRecord ? v.deletionRecord() : null));
        }
        rows.sort(ROW_ORDER);
        return rows;
    }

    private static List<ComparedRow> rowsOf(Scenario scenario, Outcome outcome) {
        List<String> tracked = scenario.modelConfig().trackedColumns();
        boolean newRecord = scenario.hardDeletes() == HardDeletes.NEW_RECORD;
        List<ComparedRow> rows = new ArrayList<>();
        for (Map<String, Object> row : outcome.history()) {
            rows.add(new ComparedRow(
                    scenario.keyColumns().stream().map(row::get).toList(),
                    tracked.stream().map(row::get).toList(),
                    (LocalDateTime) row.get("dbt_valid_from"), (LocalDateTime) row.get("dbt_valid_to"),
                    (String) row.get("dbt_change_type"), parseJsonArray(row.get("changed_attributes")),
                    newRecord ? parseBoolean(row.get("dbt_is_deleted")) : null));
        }
        rows.sort(ROW_ORDER);
        return rows;
    }

    /**
     * Nothing lost, nothing silent: every row the model sets aside is in the error log with the same reason and
     * sequence, counted per (sequence, reason). {@code updated_at_regression} depends on the history the batch met, so
     * it is predictable only for batches the source still held at every replay (never dropped by retention): a
     * reproduced batch keeps the error-log rows of its earlier application.
     */
    private void compareErrorLog(Scenario scenario, ReferenceModel model, Outcome outcome, Findings findings) {
        Set<String> dropped = scenario.sequencesOf(scenario.droppedBatches()).stream().map(Scenario::canonical)
                .collect(Collectors.toSet());
        Map<String, Integer> expected = new TreeMap<>();
        for (ReferenceModel.Rejection r : model.rejections()) {
            String sequence = Scenario.canonical(r.sequence());
            if (!(ReferenceModel.UPDATED_AT_REGRESSION.equals(r.reason()) && dropped.contains(sequence))) {
                expected.merge(sequence + " " + r.reason(), 1, Integer::sum);
            }
        }
        Map<String, Integer> actual = new TreeMap<>();
        for (LoggedError e : outcome.errors()) {
            String reason = e.reason() == null ? null : e.reason().toLowerCase(Locale.ROOT);
            if (!(ReferenceModel.UPDATED_AT_REGRESSION.equals(reason) && dropped.contains(e.sequence()))) {
                actual.merge(e.sequence() + " " + reason, 1, Integer::sum);
            }
        }
        if (expected.equals(actual)) {
            return;
        }
        String problem = "error log differs (rows per 'sequence reason'; updated_at_regression of dropped batches "
                + dropped + " not compared):\n  expected " + expected + "\n  actual   " + actual;
        String nullSequence = "null " + ReferenceModel.NULL_SEQUENCE;
        Map<String, Integer> withEngineBug = new TreeMap<>(expected);
        withEngineBug.put(nullSequence, nullSequenceRowsLoggedOnce(scenario));
        if (withEngineBug.get(nullSequence) == 0) {
            withEngineBug.remove(nullSequence);
        }
        if (withEngineBug.equals(actual)) {
            findings.problems.add(problem + "\n  diagnosis: a NULL-sequence row identical to one already logged was "
                    + "not logged");
            findings.limits.add(KnownLimit.NULL_SEQUENCE_DUPLICATES_LOGGED_ONCE);
        } else if (!findings.limits.isEmpty() && !findings.unexplained
                && withoutRegressions(withEngineBug).equals(withoutRegressions(actual))) {
            if (!withEngineBug.equals(expected)) {
                findings.limits.add(KnownLimit.NULL_SEQUENCE_DUPLICATES_LOGGED_ONCE);
            }
            findings.problems.add(problem + "\n  diagnosis: updated_at_regression counts follow from the history "
                    + "mismatch above (the batches met a different history)");
        } else {
            findings.unexplained(problem);
        }
    }

    /**
     * The NULL-sequence rows the engine logs, given its known bug: a run logs every NULL-sequence row of the source
     * whose record is not in the error log yet (identical rows of that run included), so a row identical to one
     * logged by an earlier run is never logged.
     */
    private static int nullSequenceRowsLoggedOnce(Scenario scenario) {
        List<Map<String, Object>> source = new ArrayList<>();
        Set<Map<String, Object>> logged = new HashSet<>();
        int count = 0;
        for (Scenario.Step step : scenario.plan()) {
            if (step.deliver().isEmpty()) {
                continue;
            }
            step.deliver().forEach(b -> source.addAll(scenario.nullSequenceRows().getOrDefault(b, List.of())));
            Set<Map<String, Object>> newlyLogged = new HashSet<>();
            for (Map<String, Object> row : source) {
                if (!logged.contains(row)) {
                    newlyLogged.add(row);
                    count++;
                }
            }
            logged.addAll(newlyLogged);
        }
        return count;
    }

    private static Map<String, Integer> withoutRegressions(Map<String, Integer> counts) {
        Map<String, Integer> out = new TreeMap<>(counts);
        out.keySet().removeIf(k -> k.endsWith(" " + ReferenceModel.UPDATED_AT_REGRESSION));
        return out;
    }

    /**
     * The shape of each run: the batches applied (late ones replay every applied batch from the smallest new one,
     * reproducing those the source no longer holds), rows read per batch, late detection, a clean timeline, and a
     * second run with nothing new applying nothing.
     */
    private void compareRuns(Scenario scenario, Outcome outcome, Findings findings) {
        List<String> problems = new ArrayList<>();
        TreeSet<Integer> applied = new TreeSet<>();
        TreeSet<Integer> inSource = new TreeSet<>();
        int lastStep = -1;
        for (PlannedRun run : outcome.runs()) {
            Scenario.Step step = run.plan();
            List<Integer> expected = new ArrayList<>();
            Set<Integer> reproduced = new TreeSet<>();
            boolean late = false;
            if (run.step() != lastStep) {
                lastStep = run.step();
                step.drop().forEach(inSource::remove);
                if (!step.deliver().isEmpty()) {
                    int smallest = step.deliver().stream().min(Integer::compare).orElseThrow();
                    late = !applied.isEmpty() && smallest < applied.last();
                    TreeSet<Integer> batches = new TreeSet<>(step.deliver());
                    if (late) {
                        batches.addAll(applied.tailSet(smallest, true));
                    }
                    expected.addAll(batches);
                    for (int b : batches) {
                        if (applied.contains(b) && !inSource.contains(b)) {
                            reproduced.add(b);
                        }
                    }
                    applied.addAll(step.deliver());
                    inSource.addAll(step.deliver());
                }
            }
            RunResult result = run.result();
            String where = "step " + (run.step() + 1) + " (deliver " + scenario.sequencesOf(step.deliver()) + "): ";
            List<String> expectedSeqs = expected.stream().map(b -> Scenario.canonical(scenario.batches().get(b)
                    .sequence())).toList();
            List<String> actualSeqs = result.batches().stream().map(b -> Scenario.canonical(b.sequence())).toList();
            if (!expectedSeqs.equals(actualSeqs)) {
                problems.add(where + "expected batches " + expectedSeqs + " applied, got " + actualSeqs);
                continue;
            }
            for (int i = 0; i < expected.size(); i++) {
                BatchResult b = result.batches().get(i);
                int index = expected.get(i);
                if (b.reproduced() != reproduced.contains(index)) {
                    problems.add(where + "batch " + b.sequence() + " reproduced=" + b.reproduced() + ", expected "
                            + reproduced.contains(index));
                } else if (!b.reproduced() && b.sourceRows() != scenario.batches().get(index).rows().size()) {
                    problems.add(where + "batch " + b.sequence() + " read " + b.sourceRows() + " source rows, expected "
                            + scenario.batches().get(index).rows().size());
                }
            }
            if (result.lateBatchFound() != late) {
                problems.add(where + "lateBatchFound=" + result.lateBatchFound() + ", expected " + late);
            }
            if (result.timelineViolations() != 0) {
                problems.add(where + result.timelineViolations() + " timeline violations");
            }
        }
        problems.forEach(findings::unexplained);
    }

    private static List<Object> normaliseAll(List<Object> values) {
        List<Object> out = new ArrayList<>();
        for (Object v : values) {
            out.add(v instanceof Integer i ? Long.valueOf(i) : v);
        }
        return out;
    }

    private static List<String> lowerCase(List<String> names) {
        return names == null ? null : names.stream().map(n -> n.toLowerCase(Locale.ROOT)).toList();
    }

    /** {@code ["STATUS","SCORE"]} as [status, score]; null stays null. Identifiers only, so no escapes. */
    static List<String> parseJsonArray(Object text) {
        if (text == null) {
            return null;
        }
        String s = text.toString().strip();
        if (!s.startsWith("[") || !s.endsWith("]")) {
            return List.of("<not a JSON array: " + s + ">");
        }
        String inner = s.substring(1, s.length() - 1).strip();
        if (inner.isEmpty()) {
            return List.of();
        }
        List<String> names = new ArrayList<>();
        for (String part : inner.split(",")) {
            names.add(part.strip().replace("\"", "").toLowerCase(Locale.ROOT));
        }
        return names;
    }

    private static Boolean parseBoolean(Object value) {
        if (value == null) {
            return false; // only deletion records are flagged
        }
        if (value instanceof Boolean b) {
            return b;
        }
        return Objects.equals(value.toString().toLowerCase(Locale.ROOT), "true");
    }

    private static String stackTrace(Throwable t) {
        if (t == null) {
            return "";
        }
        StringWriter w = new StringWriter();
        t.printStackTrace(new PrintWriter(w));
        return w.toString();
    }
}
