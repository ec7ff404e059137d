package dev.itersnap.internal;

import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.core.SnapshotEvent;
import dev.itersnap.core.TableName;
import dev.itersnap.internal.sql.ModelTables;
import dev.itersnap.spi.SourceColumn;
import dev.itersnap.spi.TableSpec;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The tables a run writes, brought to the source's shape before it stages: new columns added, widened columns
 * widened, bookkeeping columns an adopted history lacks added, columns gone noted; and the scratch tables created or
 * emptied. Part of one {@link SnapshotRun}: it returns the view of the model the rest of the run works on
 * ({@link Prepared}), and shares only the run's {@link RunContext}.
 */
final class RunSchema {
    private final RunContext cx;
    private final RunOwnership ownership;

    RunSchema(RunContext cx, RunOwnership ownership) {
        this.cx = cx;
        this.ownership = ownership;
    }

    /**
     * What {@link #prepare} made of the resolution: the view the rest of the run works on (with carried columns, the
     * one in which they are source columns), the introduction batch of each column added after the history was created,
     * the carried columns, and whether the source has every column the model knows, none new, none back (a key-scoped
     * replay needs that, see {@link SnapshotRun#keyScoped}).
     */
    record Prepared(SnapshotRun.Resolved view, Map<String, Seq> introduced, List<Carried> carried,
                    boolean sourceColumnsStable) {
        List<dev.itersnap.internal.sql.CarriedRange> ranges() {
            return carried.stream().map(Carried::range).toList();
        }
    }

    /**
     * Creates or evolves the history table and creates the scratch tables (all DDL, before any batch transaction).
     */
    Prepared prepare(SnapshotRun.Resolved resolved, Seq firstBatch, Seq lastApplied) {
        boolean nothingApplied = lastApplied == null;
        List<String> added = new ArrayList<>();
        List<String> missing = new ArrayList<>();
        evolveHistory(resolved, added);
        Map<String, MetadataStore.Column> registry = cx.store().columns();
        List<Carried> carried = carried(resolved, registry, firstBatch, lastApplied);
        // from here on, the view in which the carried columns are source columns
        SnapshotRun.Resolved r = carried.isEmpty() ? resolved
                : resolved.carrying(cx.dialect(), carried.stream().map(Carried::column).toList());
        ResolvedModel m = r.m();
        if (r.archiveColumns() == null || (!cx.transactional() && r.pendingColumns() == null)) {
            List<dev.itersnap.spi.Statement> ddl = new ArrayList<>(cx.dialect().createTable(r.tables().archive()));
            if (!cx.transactional()) {
                ddl.addAll(cx.dialect().createTable(r.tables().pending()));
            }
            ddl.forEach(s -> cx.jdbc().update(s.inStep("create archive")));
        }
        evolve(m, m.archive(), r.archiveColumns());
        evolve(m, m.pending(), r.pendingColumns());
        if (!carried.isEmpty() && !cx.transactional()) {
            cx.dialect().createTable(r.tables().carriedValues()).forEach(st -> cx.jdbc().update(st.inStep(
                    "create carried values")));
            try {
                evolve(m, m.carriedValues(), cx.jdbc().describe(cx.sql().describe(dev.itersnap.spi.Relation.table(
                        m.carriedValues()))), m.carried());
            } catch (SQLException e) {
                throw cx.jdbc().failure("create carried values", null, e);
            }
        }
        cx.jdbc().commit("prepare");
        prepareScratch(r);
        Map<String, Seq> introduced = new LinkedHashMap<>();
        // No batch in the ledger means the history was created by a run that stopped before recording a batch,
        // perhaps after registering some of its columns: every column the history already had is there from the
        // start.
        boolean adopt = nothingApplied;
        Map<String, String> registered = new LinkedHashMap<>();
        for (SourceColumn src : m.withoutCarried().sourceColumns()) {
            MetadataStore.Column known = registry.get(src.name());
            if (known == null) {
                boolean fromStart = r.targetColumns() == null || (adopt && !added.contains(src.name()));
                registered.put(src.name(), fromStart ? null : firstBatch.text());
                if (!fromStart) {
                    introduced.put(src.name(), firstBatch);
                    if (!added.contains(src.name())) {
                        added.add(src.name());
                    }
                }
            } else {
                if (!known.inSource()) {
                    // a column that comes back is compared again from the batch it returns with (only a column
                    // that first appears is filled in place; see docs/semantics.md)
                    cx.store().markInSource(src.name(), true, null);
                    added.add(src.name());
                }
                if (known.introducedText() != null) {
                    introduced.put(src.name(), Seq.parse(m, known.introducedText()));
                }
            }
        }
        for (Carried c : carried) {
            if (c.from() != null) {
                introduced.put(c.column().name(), c.from()); // up to it the column is not compared, as when applied
            }
        }
        cx.store().registerColumns(registered);
        for (MetadataStore.Column known : registry.values()) {
            if (known.inSource() && m.withoutCarried().sourceColumn(known.name()) == null) {
                cx.store().markInSource(known.name(), false, lastApplied == null ? null : lastApplied.text());
                missing.add(known.name());
            }
        }
        cx.jdbc().commit("prepare");
        boolean sourceColumnsStable = added.isEmpty() && missing.isEmpty()
                && registry.values().stream().allMatch(MetadataStore.Column::inSource);
        if (!added.isEmpty() || !missing.isEmpty()) {
            cx.listener().onEvent(new SnapshotEvent.SchemaChange(cx.settings().name(), cx.runId(), added, missing));
        }
        return new Prepared(r, introduced, carried, sourceColumnsStable);
    }

    /** Creates the history table, or adds the source's new columns to it and widens changed ones ({@code added}). */
    private void evolveHistory(SnapshotRun.Resolved r, List<String> added) {
        ResolvedModel m = r.m();
        if (r.targetColumns() == null) {
            cx.dialect().createTable(r.tables().history())
                    .forEach(s -> cx.jdbc().update(s.inStep("create history table")));
            cx.jdbc().update(r.tables().markOwner());
        } else {
            ownership.requireBookkeeping(r);
            for (SourceColumn src : m.sourceColumns()) {
                SourceColumn existing = column(r.targetColumns(), src.name());
                if (existing == null) {
                    cx.jdbc().update(cx.sql().primitives().addColumn(m.target(), src));
                    added.add(src.name());
                } else if (widen(m.target(), existing, src)) {
                    // the meta columns typed after sequence_by / updated_at follow them
                    // (all five when sequence_by is the updated_at column)
                    List<String> followers = new ArrayList<>();
                    if (src.name().equals(m.sequenceBy())) {
                        followers.addAll(List.of(m.meta().openedSeq(), m.meta().closedSeq()));
                    }
                    if (src.name().equals(m.updatedAt())) {
                        followers.addAll(List.of(m.meta().updatedAt(), m.meta().validFrom(),
                                m.meta().validTo()));
                    }
                    for (String meta : followers) {
                        cx.jdbc().update(cx.sql().primitives().widenColumn(m.target(), meta,
                                src).inStep("widen column"));
                    }
                }
            }
        }
    }

    /**
     * A column the source no longer has that this run's replay stages again, for the batches from {@code from} (its
     * introduction; null: the first) through {@code through} (the last applied while the source had it).
     */
    record Carried(SourceColumn column, Seq from, Seq through) {
        dev.itersnap.internal.sql.CarriedRange range() {
            return new dev.itersnap.internal.sql.CarriedRange(column.name(), from == null ? null : from.value(),
                    through.value());
        }
    }

    /**
     * The columns this run carries: those the source no longer has (or has lost now: gone after {@code lastApplied})
     * whose last batch applied with them is at or after the run's first batch. A replay reaching back there must not
     * erase what the history recorded of them: the run's model becomes a view in which they are source columns
     * ({@link dev.itersnap.internal.ResolvedModel#carrying}), their staged values come from the history, and they are
     * compared up to that batch, as when it was applied (see docs/semantics.md "Schema evolution").
     */
    private List<Carried> carried(SnapshotRun.Resolved r, Map<String, MetadataStore.Column> registry, Seq firstBatch,
                                  Seq lastApplied) {
        ResolvedModel m = r.m();
        List<Carried> carried = new ArrayList<>();
        for (SourceColumn h : m.historyOnlyColumns()) {
            MetadataStore.Column known = registry.get(h.name());
            if (known == null) {
                for (MetadataStore.Column k : registry.values()) {
                    if (k.name().equalsIgnoreCase(h.name())) {
                        known = k;
                    }
                }
            }
            if (known == null) {
                continue; // a column of an adopted history that no run of this model staged
            }
            String through = known.inSource() ? (lastApplied == null ? null : lastApplied.text())
                    : known.droppedAfterText();
            if (through == null) {
                continue;
            }
            Seq last = Seq.parse(m, through);
            Seq from = known.introducedText() == null ? null : Seq.parse(m, known.introducedText());
            if (last.compareTo(firstBatch) < 0 || (from != null && from.compareTo(last) > 0)) {
                continue;
            }
            carried.add(new Carried(h, from, last));
        }
        return List.copyOf(carried);
    }

    /**
     * The run's scratch tables, empty and in the shape this run needs: the tables of an earlier run are reused
     * (emptied in one statement, or one per table) when the stage's comment names the shape of the four tables'
     * DDL, else dropped and created again and the stage marked. A reuse that fails (a table dropped by hand) creates
     * them. Where the database replaces tables in one statement (Delta) they are always replaced, each by the statement
     * that first names it, the first {@code INSERT} into one creating it with its rows ({@link DeferredScratch}).
     */
    void prepareScratch(SnapshotRun.Resolved r) {
        List<TableSpec> specs = List.of(r.tables().stage(), r.tables().batches(), r.tables().keys(), r.tables().work());
        List<dev.itersnap.spi.Statement> ddl = new ArrayList<>();
        specs.forEach(spec -> ddl.addAll(cx.dialect().createTable(spec)));
        List<dev.itersnap.spi.Statement> clear = cx.sql().primitives().clearScratchTables(specs.stream()
                .map(TableSpec::name).toList());
        String signature = scratchSignature(ddl);
        DeferredScratch deferred = clear.isEmpty() ? DeferredScratch.of(cx.sql().primitives(), runtime(), specs)
                : null;
        if (deferred != null) {
            cx.jdbc().deferScratch(deferred); // each created by the statement that first names it
            return;
        }
        if (!clear.isEmpty()) {
            try {
                if (ModelTables.scratchComment(signature).equals(cx.jdbc().tableComment(r.m().stage()))) {
                    cx.jdbc().updateAll(clear);
                    cx.jdbc().commit("clear scratch tables");
                    return;
                }
            } catch (SQLException | RuntimeException e) {
                cx.jdbc().rollbackQuietly(); // created again below
            }
        }
        ddl.forEach(s -> cx.jdbc().update(s.inStep("create scratch tables")));
        if (!clear.isEmpty()) {
            cx.jdbc().update(r.tables().markScratch(signature));
        }
        cx.jdbc().commit("create scratch tables");
    }

    /** The dialect and the database's version, as JDBC metadata reports it: what a runtime can do is kept by it. */
    private String runtime() {
        try {
            java.sql.DatabaseMetaData md = cx.jdbc().connection().getMetaData();
            return cx.dialect().name() + " " + md.getDatabaseProductName() + " " + md.getDatabaseProductVersion();
        } catch (SQLException | RuntimeException e) {
            return cx.dialect().name();
        }
    }

    /** The first 16 hex digits of the SHA-256 of the scratch tables' DDL: their shape. */
    static String scratchSignature(List<dev.itersnap.spi.Statement> ddl) {
        StringBuilder text = new StringBuilder();
        ddl.forEach(s -> text.append(s.sql()).append('\n'));
        try {
            byte[] digest = java.security.MessageDigest.getInstance("SHA-256").digest(text.toString()
                    .getBytes(java.nio.charset.StandardCharsets.UTF_8));
            return java.util.HexFormat.of().formatHex(digest, 0, 8);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * A run with nothing to apply still records the columns the source no longer has: one that comes back later is
     * then seen coming back (its replayed rows hold NULL where they held values, so a late batch after it replays
     * every key, see {@link SnapshotRun#keyScoped}).
     */
    /** Whether a column the registry records in the source is no longer there ({@link #noteColumnsGone} notes it). */
    boolean columnsGone(ResolvedModel m) {
        return cx.store().columns().values().stream().anyMatch(known -> known.inSource()
                && m.sourceColumn(known.name()) == null);
    }

    void noteColumnsGone(ResolvedModel m, Seq lastApplied) {
        List<String> missing = new ArrayList<>();
        for (MetadataStore.Column known : cx.store().columns().values()) {
            if (known.inSource() && m.sourceColumn(known.name()) == null) {
                if (missing.isEmpty()) {
                    cx.lock().verifyHeld();
                }
                cx.store().markInSource(known.name(), false, lastApplied.text());
                missing.add(known.name());
            }
        }
        if (!missing.isEmpty()) {
            cx.jdbc().commit("note missing columns");
            cx.listener().onEvent(new SnapshotEvent.SchemaChange(cx.settings().name(), cx.runId(), List.of(), missing));
        }
    }

    /** Adds the source's new columns to a working table that exists ({@code columns} non-null), widens changed ones. */
    void evolve(ResolvedModel m, TableName table, List<SourceColumn> columns) {
        evolve(m, table, columns, m.sourceNames());
    }

    /** {@link #evolve(TableName, List)} of the run's source columns called {@code names}. */
    private void evolve(ResolvedModel m, TableName table, List<SourceColumn> columns, List<String> names) {
        if (columns == null) {
            return;
        }
        for (String name : names) {
            SourceColumn src = m.sourceColumn(name);
            SourceColumn existing = column(columns, src.name());
            if (existing == null) {
                cx.jdbc().update(cx.sql().primitives().addColumn(table, src));
            } else {
                widen(table, existing, src);
            }
        }
    }

    static SourceColumn column(List<SourceColumn> columns, String name) {
        for (SourceColumn c : columns) {
            if (c.name().toLowerCase(Locale.ROOT).equals(name.toLowerCase(Locale.ROOT))) {
                return c;
            }
        }
        return null;
    }

    /**
     * Widens a column of {@code table} whose source type changed; true when it did. A narrower source type needs
     * nothing; a change that cannot be widened stops the run naming the column and both types.
     */
    boolean widen(TableName table, SourceColumn existing, SourceColumn src) {
        if (cx.dialect().columnType(existing).equals(cx.dialect().columnType(src))
                || cx.dialect().widens(src, existing)) {
            return false;
        }
        if (!cx.dialect().widens(existing, src)) {
            throw new ItersnapException(ErrorCode.INCOMPATIBLE_SCHEMA_CHANGE, "model '" + cx.settings().name()
                    + "': source column '" + src.name() + "' changed type from " + cx.dialect().columnType(existing)
                    + " (history) to " + cx.dialect().columnType(src) + " (source), which cannot be widened; cast it "
                    + "in the source query");
        }
        cx.sql().primitives().prepareWidening(table).forEach(s -> cx.jdbc().update(s.inStep("widen column")));
        cx.jdbc().update(cx.sql().primitives().widenColumn(table, existing.name(), src).inStep("widen column"));
        return true;
    }
}
