package dev.itersnap.conformance;

import dev.itersnap.conformance.ScenarioRunner.LoggedError;
import dev.itersnap.conformance.ScenarioRunner.Outcome;
import dev.itersnap.conformance.ScenarioRunner.PlannedRun;
import dev.itersnap.core.BatchResult;
import dev.itersnap.core.HardDeletes;
import dev.itersnap.core.RunResult;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentSkipListSet;
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
 * seed S, for example one printed by a failure), {@code -Ditersnap.firstSeed=S} (seeds S, S+1, ...).
 *
 * <p>A case passes or fails. A failure prints the seed with the rerun hint, the batches, the delivery plan, expected
 * vs actual and the events; the failing seeds are listed again at the end, smallest case first.
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

    @TestFactory
    Stream<DynamicTest> historyEqualsTheReferenceModel() {
        ScenarioGenerator generator = new ScenarioGenerator();
        Long only = Long.getLong("itersnap.seed");
        long first = Long.getLong("itersnap.firstSeed", 1L);
        LongStream seeds = only != null ? LongStream.of(only)
                : LongStream.range(first, first + Integer.getInteger("itersnap.cases", defaultCases()));
        return seeds.mapToObj(seed -> {
            Scenario scenario = generator.generate(seed);
            return DynamicTest.dynamicTest(scenario.title(), () -> check(scenario));
        });
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
            FAILURES.add(String.format(Locale.ROOT, "%4d rows  ", scenario.size()) + scenario.title());
            fail(report);
        }
    }

    /** Null when the engine agrees with the model, else a report with everything needed to reproduce the case. */
    private String mismatches(Scenario scenario) {
        Outcome outcome;
        try {
            outcome = new ScenarioRunner(database()).play(scenario);
        } catch (ScenarioRunner.ScenarioFailure e) {
            return scenario.describe() + "\n" + e.getMessage() + "\n" + stackTrace(e.getCause())
                    + "events:\n  " + String.join("\n  ", e.events());
        } catch (Exception e) {
            return scenario.describe() + "\n" + stackTrace(e);
        }
        ReferenceModel expected = scenario.expected();
        List<String> problems = new ArrayList<>();
        compareHistory(scenario, expected, outcome, problems);
        compareErrorLog(expected, outcome, problems);
        compareRuns(scenario, outcome, problems);
        if (problems.isEmpty()) {
            return null;
        }
        return scenario.describe() + "\n" + String.join("\n", problems) + "\nevents:\n  "
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

    private void compareHistory(Scenario scenario, ReferenceModel model, Outcome outcome, List<String> problems) {
        List<ComparedRow> expected = rowsOf(scenario, model);
        List<ComparedRow> actual = rowsOf(scenario, outcome);
        if (!expected.equals(actual)) {
            problems.add("history differs from the reference model (- expected only, + actual only); tracked columns "
                    + scenario.modelConfig().trackedColumns() + ":\n" + diff(expected, actual));
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
     * Nothing lost, nothing silent: the error log holds exactly the rows the model sets aside, counted per (sequence,
     * reason), {@code updated_at_regression} included: a replay, reproduced batches too, logs what the in-order run
     * would.
     */
    private void compareErrorLog(ReferenceModel model, Outcome outcome, List<String> problems) {
        Map<String, Integer> expected = new TreeMap<>();
        for (ReferenceModel.Rejection r : model.rejections()) {
            expected.merge(Scenario.canonical(r.sequence()) + " " + r.reason(), 1, Integer::sum);
        }
        Map<String, Integer> actual = new TreeMap<>();
        for (LoggedError e : outcome.errors()) {
            String reason = e.reason() == null ? null : e.reason().toLowerCase(Locale.ROOT);
            actual.merge(e.sequence() + " " + reason, 1, Integer::sum);
        }
        if (!expected.equals(actual)) {
            Set<String> differing = new TreeSet<>(expected.keySet());
            differing.addAll(actual.keySet());
            differing.removeIf(k -> Objects.equals(expected.get(k), actual.get(k)));
            StringBuilder diff = new StringBuilder("error log differs (rows per 'sequence reason'):\n");
            differing.forEach(k -> diff.append("  ").append(k).append(": expected ")
                    .append(expected.getOrDefault(k, 0)).append(", actual ").append(actual.getOrDefault(k, 0))
                    .append('\n'));
            problems.add(diff.toString());
        }
    }

    /**
     * The shape of each run: the batches applied (late ones replay every applied batch from the smallest new one,
     * reproducing those the source no longer holds), rows read per batch, late detection, a clean timeline, and a
     * second run with nothing new applying nothing.
     */
    private void compareRuns(Scenario scenario, Outcome outcome, List<String> problems) {
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
