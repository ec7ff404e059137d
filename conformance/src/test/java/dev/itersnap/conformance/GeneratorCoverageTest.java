package dev.itersnap.conformance;

import dev.itersnap.conformance.Scenario.ColumnChange;
import dev.itersnap.conformance.Scenario.Profile;
import dev.itersnap.conformance.Scenario.Source;
import dev.itersnap.conformance.TestDatabase.ColumnType;
import dev.itersnap.core.BatchResult;
import dev.itersnap.core.HardDeletes;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.SnapshotEvent;
import dev.itersnap.core.Strategy;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;
import java.util.function.Predicate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The generated cases CI runs (the fixed seeds 1..300 of {@link ReferenceModelPropertyTest}) cover every feature
 * the oracle is meant to check, each in at least a set share of the cases. Measured on the generator and the
 * reference model alone (no database); printed as a table.
 */
class GeneratorCoverageTest {
    private static final int CASES = 300;

    /** A feature, the least share of cases that must show it, and how to see it. */
    private record Feature(String name, double least, Predicate<Case> seen) {
    }

    /** A scenario and what the model's runs over it did. */
    private record Case(Scenario scenario, List<ReferenceModel.RunOutcome> runs, List<Integer> replayDepths,
                        ReferenceModel model) {
        boolean event(Predicate<SnapshotEvent> p) {
            return runs.stream().flatMap(r -> r.events().stream()).anyMatch(p);
        }

        boolean rejected(String reason) {
            return event(e -> e instanceof SnapshotEvent.RowsRejected r && r.reasons().containsKey(reason));
        }

        boolean change(ColumnChange.Kind kind) {
            return scenario.plan().stream().flatMap(s -> s.changes().stream()).anyMatch(c -> c.kind() == kind);
        }

        boolean restated(Scenario.Restatement.Kind kind) {
            return scenario.plan().stream().flatMap(s -> s.restate().stream()).anyMatch(r -> r.kind() == kind);
        }

        boolean anyRow(Predicate<Map<String, Object>> p) {
            return scenario.batches().stream().flatMap(b -> b.rows().stream()).anyMatch(p);
        }
    }

    private static final List<Feature> FEATURES = List.of(
            new Feature("sequence INTEGER", 0.10, c -> c.scenario.sequenceType() == ColumnType.INTEGER),
            new Feature("sequence DATE", 0.10, c -> c.scenario.sequenceType() == ColumnType.DATE),
            new Feature("sequence VARCHAR (code-point order)", 0.10, c -> c.scenario.sequenceType() == ColumnType.VARCHAR),
            new Feature("sequence TIMESTAMP (sub-second)", 0.10, c -> c.scenario.sequenceType() == ColumnType.TIMESTAMP),
            new Feature("sequence DECIMAL", 0.10, c -> c.scenario.sequenceType() == ColumnType.DECIMAL),
            new Feature("updated_at with fractions of a second", 0.30, c -> c.scenario.subSecond()),
            new Feature("medium case (8-20 batches)", 0.15, c -> c.scenario.profile() == Profile.MEDIUM),
            new Feature("long case (20-40 batches)", 0.07, c -> c.scenario.profile() == Profile.LONG),
            new Feature("strategy check", 0.35, c -> c.scenario.strategy() == Strategy.CHECK),
            new Feature("strategy timestamp", 0.35, c -> c.scenario.strategy() == Strategy.TIMESTAMP),
            new Feature("check_cols a list (untracked columns)", 0.15, c -> c.scenario.checkCols() != null),
            new Feature("hard_deletes ignore", 0.20, c -> c.scenario.hardDeletes() == HardDeletes.IGNORE),
            new Feature("hard_deletes invalidate", 0.20, c -> c.scenario.hardDeletes() == HardDeletes.INVALIDATE),
            new Feature("hard_deletes new_record", 0.20, c -> c.scenario.hardDeletes() == HardDeletes.NEW_RECORD),
            new Feature("delete_when", 0.30, c -> c.scenario.deleteWhen()),
            new Feature("composite key", 0.20, c -> c.scenario.keyColumns().size() > 1),
            new Feature("source wrapped in a subquery", 0.20, c -> c.scenario.source() == Source.SUBQUERY
                    || c.scenario.source() == Source.SUBQUERY_WHERE),
            new Feature("source with a WHERE (junk rows left out)", 0.20, c -> c.scenario.source().filters()),
            new Feature("column_names override", 0.15, c -> !c.scenario.metaOverrides().isEmpty()),
            new Feature("metadata_schema override", 0.15,
                    c -> !c.scenario.metadataSchema().equals(ModelSettings.DEFAULT_METADATA_SCHEMA)),
            new Feature("schema-qualified target", 0.10, c -> c.scenario.target().contains(".")),
            new Feature("a column added mid-history", 0.10, c -> c.change(ColumnChange.Kind.ADD)),
            new Feature("a column dropped mid-history", 0.08, c -> c.change(ColumnChange.Kind.DROP)),
            new Feature("a column widened mid-history", 0.08, c -> c.change(ColumnChange.Kind.WIDEN)),
            new Feature("a new column filled in place", 0.05, c -> c.model.registry().stream()
                    .anyMatch(r -> r.introducedAt() != null && r.inSource())),
            new Feature("a dropped column comes back", 0.01, c -> c.scenario.plan().stream()
                    .flatMap(s -> s.changes().stream()).filter(x -> x.column().name().equals("note")).count() > 1),
            new Feature("fullRefresh", 0.10, c -> c.scenario.plan().stream()
                    .anyMatch(s -> s.operation() == ReferenceModel.Operation.FULL_REFRESH)),
            new Feature("replayFrom", 0.10, c -> c.scenario.plan().stream()
                    .anyMatch(s -> s.operation() == ReferenceModel.Operation.REPLAY)),
            new Feature("a late batch", 0.55, c -> c.runs.stream().anyMatch(ReferenceModel.RunOutcome::lateBatchFound)),
            new Feature("several late batches in one run", 0.20, c -> c.event(e -> e instanceof
                    SnapshotEvent.OutOfOrder o && o.incoming().size() > 1)),
            new Feature("a replay 10+ batches deep", 0.10, c -> c.replayDepths.stream().anyMatch(d -> d >= 10)),
            new Feature("a replay 20+ batches deep", 0.05, c -> c.replayDepths.stream().anyMatch(d -> d >= 20)),
            new Feature("a batch reproduced after it aged out", 0.20, c -> c.runs.stream()
                    .flatMap(r -> r.batches().stream()).anyMatch(BatchResult::reproduced)),
            new Feature("a restated batch replayed", 0.10, c -> c.event(e -> e instanceof SnapshotEvent.BatchRestated)),
            new Feature("restatement: rows corrected", 0.03, c -> c.restated(Scenario.Restatement.Kind.ROWS_CORRECTED)),
            new Feature("restatement: rows appended", 0.03, c -> c.restated(Scenario.Restatement.Kind.ROWS_APPENDED)),
            new Feature("restatement: rows removed", 0.03, c -> c.restated(Scenario.Restatement.Kind.ROWS_REMOVED)),
            new Feature("restatement: batch replaced", 0.03, c -> c.restated(Scenario.Restatement.Kind.BATCH_REPLACED)),
            new Feature("a correction beside a column change", 0.08, c -> c.scenario.plan().stream()
                    .anyMatch(s -> !s.changes().isEmpty() && !s.restate().isEmpty())),
            new Feature("batches uncomparable after a column change, replayed", 0.08, c -> c.event(e -> e instanceof
                    SnapshotEvent.UncomparableBatches)),
            new Feature("a replay carrying a dropped column", 0.06, c -> c.model.registry().stream()
                    .anyMatch(r -> r.droppedAfter() != null) && c.event(e -> e instanceof
                    SnapshotEvent.UncomparableBatches u && !u.columns().isEmpty())),
            new Feature("a second run with nothing new", 0.10, c -> c.scenario.plan().stream().anyMatch(s -> s.runs() > 1)),
            new Feature("rejected: null_sequence", 0.30, c -> c.rejected(ReferenceModel.NULL_SEQUENCE)),
            new Feature("rejected: null_key", 0.30, c -> c.rejected(ReferenceModel.NULL_KEY)),
            new Feature("rejected: duplicate_key", 0.30, c -> c.rejected(ReferenceModel.DUPLICATE_KEY)),
            new Feature("rejected: null_updated_at", 0.30, c -> c.rejected(ReferenceModel.NULL_UPDATED_AT)),
            // (fewer since ignore_null_updates is drawn: a NULL is no change there, so no regression either)
            new Feature("rejected: updated_at_regression", 0.18, c -> c.rejected(ReferenceModel.UPDATED_AT_REGRESSION)),
            new Feature("exact copies applied once", 0.30, c -> c.event(e -> e instanceof
                    SnapshotEvent.DuplicateRecords d && d.copies() > 0)),
            new Feature("a batch whose rows all lack updated_at", 0.04, c -> c.scenario.batches().stream()
                    .anyMatch(b -> b.rows().stream().allMatch(r -> r.get(Scenario.UPDATED_AT) == null))),
            new Feature("a NULL tracked value in a version", 0.30, c -> c.model.versions().stream()
                    .anyMatch(v -> c.scenario.modelConfig().trackedColumns().stream()
                            .anyMatch(t -> v.values().containsKey(t) && v.values().get(t) == null))),
            new Feature("a NULL delete_when result (op NULL)", 0.08, c -> c.scenario.deleteWhen()
                    && c.anyRow(r -> r.containsKey(Scenario.OP) && r.get(Scenario.OP) == null)),
            new Feature("an explicit delete", 0.25, c -> c.model.versions().stream().anyMatch(v ->
                    ReferenceModel.DELETE.equals(v.changeType())) && c.scenario.deleteWhen()),
            new Feature("a deletion record", 0.12, c -> c.model.versions().stream()
                    .anyMatch(ReferenceModel.Version::deletionRecord)),
            new Feature("sequence_by = updated_at (a CDC feed)", 0.03, c -> c.scenario.options().sequenceIsUpdatedAt()),
            new Feature("valid_to_current (open versions end 9999-12-31)", 0.15,
                    c -> c.scenario.options().validToCurrent() != null),
            new Feature("ignore_null_updates (a NULL is not supplied)", 0.04,
                    c -> c.scenario.options().ignoreNullUpdates()),
            new Feature("untracked_columns: overwrite", 0.05, c -> c.scenario.options().overwriteUntracked()),
            new Feature("sequence_by list [batch_part, batch_seq]", 0.06,
                    c -> c.scenario.options().sequenceList() == 1),
            new Feature("sequence_by list [batch_seq, batch_part]", 0.06,
                    c -> c.scenario.options().sequenceList() == 2),
            new Feature("sequence_by list with a late batch", 0.04, c -> c.scenario.options().sequenceList() != 0
                    && c.runs.stream().anyMatch(ReferenceModel.RunOutcome::lateBatchFound)),
            new Feature("a version whose only change is updated_at ([])", 0.10, c -> c.model.versions().stream()
                    .anyMatch(v -> v.changedAttributes() != null && v.changedAttributes().isEmpty())));

    @Test
    void theCasesCiRunsCoverEveryFeature() {
        ScenarioGenerator generator = new ScenarioGenerator();
        List<Case> cases = new ArrayList<>();
        int runs = 0;
        int batches = 0;
        for (long seed = 1; seed <= CASES; seed++) {
            Scenario s = generator.generate(seed);
            cases.add(simulate(s));
            runs += s.engineRuns();
            batches += s.batches().size();
        }
        Map<String, Double> shares = new LinkedHashMap<>();
        List<String> below = new ArrayList<>();
        for (Feature f : FEATURES) {
            long n = cases.stream().filter(f.seen()).count();
            double share = (double) n / CASES;
            shares.put(f.name(), share);
            if (share < f.least()) {
                below.add(f.name() + ": " + pct(share) + " < " + pct(f.least()));
            }
        }
        StringBuilder table = new StringBuilder(String.format(Locale.ROOT,
                "generated cases 1..%d: %d batches, %d engine runs; share of cases with each feature:%n", CASES,
                batches, runs));
        shares.forEach((name, share) -> table.append(String.format(Locale.ROOT, "  %-48s %6s (at least %s)%n", name,
                pct(share), pct(FEATURES.stream().filter(f -> f.name().equals(name)).findFirst().orElseThrow()
                        .least()))));
        System.out.print(table);
        assertThat(below).as("features below their share").isEmpty();
    }

    /** Plays the case through the model alone, keeping how deep each run replayed. */
    private static Case simulate(Scenario s) {
        RawTableMirror mirror = new RawTableMirror(s);
        ReferenceModel model = new ReferenceModel(s.modelConfig());
        List<ReferenceModel.RunOutcome> runs = new ArrayList<>();
        List<Integer> depths = new ArrayList<>();
        TreeSet<Object> applied = new TreeSet<>(ReferenceModel.SEQUENCE_ORDER);
        int k = 0;
        for (Scenario.Step step : s.plan()) {
            step.drop().forEach(mirror::drop);
            step.changes().forEach(mirror::change);
            step.restate().forEach(mirror::restate);
            step.deliver().forEach(mirror::deliver);
            for (int r = 0; r < step.runs(); r++) {
                ReferenceModel.Operation op = r == 0 ? step.operation() : ReferenceModel.Operation.RUN;
                ReferenceModel.RunOutcome o = model.run(op, step.replayFrom(), mirror.columnNames(),
                        mirror.sourceRows(), "run" + k++);
                runs.add(o);
                depths.add((int) o.batches().stream().filter(b -> applied.contains(b.sequence())).count());
                o.batches().forEach(b -> applied.add(b.sequence()));
            }
        }
        return new Case(s, runs, depths, model);
    }

    private static String pct(double share) {
        return String.format(Locale.ROOT, "%.0f%%", share * 100);
    }

    @Test
    void aCaseOfEachProfileCanBeForced() {
        ScenarioGenerator generator = new ScenarioGenerator();
        for (Profile p : Profile.values()) {
            assertThat(generator.generate(7, p).profile()).isEqualTo(p);
        }
        assertThat(Objects.requireNonNull(generator.generate(7, Profile.LONG)).batches()).hasSizeGreaterThanOrEqualTo(20);
    }
}
