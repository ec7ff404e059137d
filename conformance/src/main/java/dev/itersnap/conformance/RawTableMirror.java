package dev.itersnap.conformance;

import dev.itersnap.conformance.Scenario.Column;
import dev.itersnap.conformance.Scenario.ColumnChange;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What the raw table of a {@link Scenario} holds at each point of its plan, in memory: its columns and rows, as the
 * statements the runner plays leave them (a column added is NULL in the rows already there; a dropped column is gone
 * from every row; rows delivered after {@code score} was widened carry values beyond the INTEGER range). The
 * reference model reads the source from here.
 */
public final class RawTableMirror {
    private final Scenario scenario;
    private final List<Column> columns;
    private final List<Map<String, Object>> rows = new ArrayList<>();
    private final Map<Integer, List<Map<String, Object>>> delivered = new LinkedHashMap<>();
    private boolean widened;
    private boolean reshaped;

    public RawTableMirror(Scenario scenario) {
        this.scenario = scenario;
        this.columns = new ArrayList<>(scenario.columns());
    }

    /** The raw table's columns now. */
    public List<Column> columns() {
        return List.copyOf(columns);
    }

    public List<String> columnNames() {
        return columns.stream().map(Column::name).toList();
    }

    /** True once a column was added or dropped (a clean in-order run is then no longer the reference). */
    public boolean reshaped() {
        return reshaped;
    }

    /** Retention: the rows of batch {@code index} go (its NULL-sequence rows stay). */
    public void drop(int index) {
        Object seq = scenario.batches().get(index).sequence();
        rows.removeIf(r -> r.get(Scenario.SEQUENCE) != null
                && ReferenceModel.compareValues(r.get(Scenario.SEQUENCE), seq) == 0);
    }

    /** A change of the table's columns. */
    public void change(ColumnChange change) {
        String name = change.column().name();
        switch (change.kind()) {
            case ADD -> {
                columns.add(change.column());
                rows.forEach(r -> r.put(name, null));
                reshaped = true;
            }
            case DROP -> {
                columns.removeIf(c -> c.name().equals(name));
                rows.forEach(r -> r.remove(name));
                reshaped = true;
            }
            case WIDEN -> {
                columns.replaceAll(c -> c.name().equals(name) ? change.column() : c);
                widened |= name.equals("score");
            }
        }
    }

    /** Loads batch {@code index} and its NULL-sequence rows; returns the rows as inserted (current columns). */
    public List<Map<String, Object>> deliver(int index) {
        List<Map<String, Object>> raw = new ArrayList<>(scenario.batches().get(index).rows());
        raw.addAll(scenario.nullSequenceRows().getOrDefault(index, List.of()));
        List<Map<String, Object>> out = load(raw);
        delivered.put(index, out.stream().map(LinkedHashMap::new).map(m -> (Map<String, Object>) m).toList());
        return out;
    }

    /**
     * A restatement: the rows of its batch go (its NULL-sequence rows stay) and its new rows are loaded; returns
     * them as inserted. A clean run over the source now sees the batch as restated.
     */
    public List<Map<String, Object>> restate(Scenario.Restatement r) {
        drop(r.batch());
        List<Map<String, Object>> out = load(r.rows());
        delivered.put(r.batch(), out.stream().map(LinkedHashMap::new).map(m -> (Map<String, Object>) m).toList());
        return out;
    }

    private List<Map<String, Object>> load(List<Map<String, Object>> raw) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (Map<String, Object> r : raw) {
            Map<String, Object> row = new LinkedHashMap<>();
            for (Column c : columns) {
                Object v = ReferenceModel.normalise(r.get(c.name()));
                if (widened && c.name().equals("score") && v != null) {
                    v = (Long) v + Scenario.WIDE_OFFSET;
                }
                row.put(c.name(), v);
            }
            out.add(row);
        }
        rows.addAll(out);
        return out;
    }

    /** The rows the model's source query returns now (junk rows left out by a filtering source). */
    public List<Map<String, Object>> sourceRows() {
        return rows.stream().filter(scenario.source().predicate()).map(r -> (Map<String, Object>) new LinkedHashMap<>(r))
                .toList();
    }

    /** The rows of batch {@code index} as delivered (with a sequence), as the source query returned them. */
    public List<Map<String, Object>> deliveredRows(int index) {
        return delivered.getOrDefault(index, List.of()).stream()
                .filter(r -> r.get(Scenario.SEQUENCE) != null)
                .filter(scenario.source().predicate()).toList();
    }
}
