package dev.itersnap.conformance;

import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * A diagnostic, not an oracle: follows a scenario's delivery plan with the rollback and reproduction rules that
 * docs/semantics.md documents ("Rollback, replay and aged-out batches"), on top of the {@link ReferenceModel}'s batch
 * rules. When the engine disagrees with the reference model but agrees with this simulation, the engine does what
 * the documents say and the documented rules themselves lose information for that case; when it disagrees with
 * both, the engine has a bug of its own.
 */
final class ReplaySimulation {
    /** Marks a reproduced row: true for an explicit delete, false for an upsert. */
    private static final String REPRODUCED_DELETE = "__reproduced_delete";

    private ReplaySimulation() {
    }

    /**
     * The outcome of the simulation: the history, and for each reproduced batch what its reproduction lacks or
     * changes compared with the batch itself (the information the history did not keep).
     */
    record Result(ReferenceModel model, List<Loss> losses) {
    }

    /** One piece of information a reproduced batch lacks or changes, and the known limit it falls under. */
    record Loss(KnownLimit limit, String text) {
        @Override
        public String toString() {
            return limit + ": " + text;
        }
    }

    /** The history the documented rules give for the scenario's plan (NULL-sequence rows are not modelled). */
    static Result simulate(Scenario scenario) {
        Set<Loss> losses = new LinkedHashSet<>();
        ReferenceModel.Config base = scenario.modelConfig();
        // A reproduced row is deleted by its marker, a source row by delete_when.
        ReferenceModel.Config config = new ReferenceModel.Config(base.columns(), base.keyColumns(),
                base.updatedAtColumn(), base.sequenceColumn(), base.strategy(), base.checkCols(), base.hardDeletes(),
                row -> row.containsKey(REPRODUCED_DELETE) ? Boolean.TRUE.equals(row.get(REPRODUCED_DELETE))
                        : base.deleteWhen() != null && base.deleteWhen().test(row),
                base.temporalSequence());
        ReferenceModel model = new ReferenceModel(config);
        TreeMap<Integer, LocalDateTime> ledger = new TreeMap<>(); // batch index -> recorded deletion time
        Set<Integer> inSource = new HashSet<>();
        for (Scenario.Step step : scenario.plan()) {
            step.drop().forEach(inSource::remove);
            inSource.addAll(step.deliver());
            TreeSet<Integer> fresh = new TreeSet<>(step.deliver());
            fresh.removeAll(ledger.keySet());
            if (fresh.isEmpty()) {
                continue;
            }
            TreeSet<Integer> toApply = new TreeSet<>(fresh);
            Map<Integer, ReferenceModel.Batch> reproduced = new HashMap<>();
            if (!ledger.isEmpty() && fresh.first() < ledger.lastKey()) {
                for (int b : ledger.tailMap(fresh.first(), true).keySet()) {
                    toApply.add(b);
                    if (!inSource.contains(b)) {
                        ReferenceModel.Batch copy = model.reproduce(scenario.batches().get(b).sequence(),
                                REPRODUCED_DELETE);
                        reproduced.put(b, copy);
                        losses.addAll(compare(base, scenario.batches().get(b), copy,
                                base.hardDeletes().fullBatches() && ledger.get(b) == null));
                    }
                }
                model.rollBack(scenario.batches().get(fresh.first()).sequence());
            }
            for (int b : toApply) {
                if (reproduced.containsKey(b)) {
                    int before = model.rejections().size();
                    model.apply(reproduced.get(b), ledger.get(b));
                    for (ReferenceModel.Rejection r : model.rejections().subList(before, model.rejections().size())) {
                        if (Boolean.TRUE.equals(r.row().get(REPRODUCED_DELETE))
                                && !isDelete(base, scenario.batches().get(b), r.row())) {
                            losses.add(new Loss(KnownLimit.ABSENCE_DELETE_AS_EXPLICIT, "batch " + r.sequence()
                                    + " key " + keyOf(base, r.row()) + ": absent from the batch (deleted by absence, "
                                    + "clamped to its version's valid_from); the reproduction makes it an explicit "
                                    + "delete at " + r.row().get(base.updatedAtColumn()) + ", rejected as "
                                    + r.reason() + " after the replay opened a later version"));
                        }
                    }
                } else {
                    ReferenceModel.Batch batch = scenario.batches().get(b);
                    model.apply(batch, null);
                    ledger.put(b, model.deletionTime(batch));
                }
            }
        }
        return new Result(model, List.copyOf(losses));
    }

    /** What the reproduction of a batch lacks or changes, key by key. */
    private static List<Loss> compare(ReferenceModel.Config config, ReferenceModel.Batch batch,
                                      ReferenceModel.Batch copy, boolean noDeletionTime) {
        Map<List<Object>, List<Map<String, Object>>> original = byKey(config, batch);
        Map<List<Object>, List<Map<String, Object>>> reproduced = byKey(config, copy);
        Set<List<Object>> keys = new LinkedHashSet<>(original.keySet());
        keys.addAll(reproduced.keySet());
        List<Loss> losses = new ArrayList<>();
        for (List<Object> key : keys) {
            String where = "batch " + batch.sequence() + " key " + key + ": ";
            List<Map<String, Object>> rows = original.getOrDefault(key, List.of());
            Map<String, Object> copyRow = reproduced.containsKey(key) ? reproduced.get(key).get(0) : null;
            boolean copyDeletes = copyRow != null && Boolean.TRUE.equals(copyRow.get(REPRODUCED_DELETE));
            if (rows.size() > 1 || rows.size() == 1 && rows.get(0).get(config.updatedAtColumn()) == null) {
                if (copyRow == null && config.hardDeletes().fullBatches()) {
                    losses.add(new Loss(KnownLimit.SET_ASIDE_KEY_REPRODUCED,
                            where + "its rows were set aside, the reproduction treats it as absent (deleted)"));
                } else if (copyRow != null && !copyDeletes && config.hardDeletes().fullBatches()) {
                    losses.add(new Loss(KnownLimit.SET_ASIDE_KEY_REPRODUCED,
                            where + "its rows were set aside, the reproduction has it present with "
                            + values(config, copyRow) + " (the version it had then)"));
                }
                continue;
            }
            Map<String, Object> row = rows.isEmpty() ? null : rows.get(0);
            boolean deletes = row != null && config.deleteWhen() != null && config.deleteWhen().test(row);
            if (row == null && copyDeletes) {
                continue; // a deletion by absence, reproduced as an explicit delete: see apply below
            } else if (row == null && copyRow != null && !copyDeletes && noDeletionTime) {
                losses.add(new Loss(KnownLimit.NO_DELETION_TIME_REPRODUCED,
                        where + "absent from the batch, yet live after its first application (the batch had no "
                        + "deletion time); the reproduction makes it present with " + values(config, copyRow)));
            } else if (deletes && !copyDeletes) {
                losses.add(new Loss(KnownLimit.NO_OP_DELETE_LOST,
                        where + "explicit delete at " + row.get(config.updatedAtColumn())
                        + " found no current version when first applied; the reproduction " + (copyRow == null
                        ? "does not have it" : "has an upsert instead")));
            } else if (row != null && !deletes && copyRow == null) {
                losses.add(new Loss(KnownLimit.UNCHANGED_ROW_LOST,
                        where + "row " + values(config, row) + " changed nothing when first applied (or was "
                        + "set aside); the reproduction does not have it"));
            } else if (row != null && !deletes && !copyDeletes
                    && !values(config, row).equals(values(config, copyRow))) {
                losses.add(new Loss(KnownLimit.UNCHANGED_ROW_LOST,
                        where + "row " + values(config, row) + " is reproduced as " + values(config, copyRow)
                        + " (the version it met was unchanged by it)"));
            }
        }
        return losses;
    }

    /** True when the batch itself deletes the key explicitly (delete_when), not by absence. */
    private static boolean isDelete(ReferenceModel.Config config, ReferenceModel.Batch batch, Map<String, Object> row) {
        List<Object> key = keyOf(config, row);
        return config.deleteWhen() != null && batch.rows().stream()
                .anyMatch(r -> keyOf(config, r).equals(key) && config.deleteWhen().test(r));
    }

    private static List<Object> keyOf(ReferenceModel.Config config, Map<String, Object> row) {
        List<Object> key = new ArrayList<>();
        config.keyColumns().forEach(k -> key.add(row.get(k)));
        return key;
    }

    private static Map<List<Object>, List<Map<String, Object>>> byKey(ReferenceModel.Config config,
                                                                    ReferenceModel.Batch batch) {
        Map<List<Object>, List<Map<String, Object>>> rows = new LinkedHashMap<>();
        for (Map<String, Object> row : batch.rows()) {
            List<Object> key = new ArrayList<>();
            config.keyColumns().forEach(k -> key.add(row.get(k)));
            if (!key.contains(null)) {
                rows.computeIfAbsent(key, k -> new ArrayList<>()).add(row);
            }
        }
        return rows;
    }

    /** Tracked values and updated_at of a row, for messages. */
    private static List<Object> values(ReferenceModel.Config config, Map<String, Object> row) {
        List<Object> values = new ArrayList<>();
        config.trackedColumns().forEach(c -> values.add(row.get(c)));
        values.add(row.get(config.updatedAtColumn()));
        return values;
    }
}
