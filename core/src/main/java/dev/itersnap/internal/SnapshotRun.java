package dev.itersnap.internal;

import dev.itersnap.core.BatchResult;
import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.RunResult;
import dev.itersnap.core.SnapshotEvent;
import dev.itersnap.core.SnapshotListener;
import dev.itersnap.spi.Dialect;
import dev.itersnap.spi.ModelLock;
import dev.itersnap.spi.ResolvedModel;
import dev.itersnap.spi.SourceColumn;

import java.sql.SQLException;
import java.time.Duration;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * One run of one model under its lock, step by step as SPEC §4 describes: recover, discover, detect, prepare, stage,
 * roll back, apply, check. Single use.
 */
final class SnapshotRun {
    enum Operation {
        RUN("run"), FULL_REFRESH("full_refresh"), REPLAY("replay");

        private final String label;

        Operation(String label) {
            this.label = label;
        }

        String label() {
            return label;
        }
    }

    /** The sequences in the source, and whether some rows have none. */
    private record Discovery(TreeSet<Seq> sequences, boolean nullSequence) {
    }

    private final Jdbc jdbc;
    private final Dialect dialect;
    private final SnapshotListener listener;
    private final ModelSettings settings;
    private final String runId;
    private final Operation operation;
    private final Object replayFrom;
    private final String previousStatus;
    private final ResolvedModel sourceModel;
    private ResolvedModel m;
    private List<SourceColumn> targetColumns;
    private List<SourceColumn> archiveColumns;
    private List<SourceColumn> pendingColumns;
    /** Batches in the pending table (non-transactional databases only), with their recorded deletion time. */
    private final Map<Seq, String> pending = new java.util.HashMap<>();
    /** True once this run saved rows in the pending table (or found some there): they are cleared at the end. */
    private boolean pendingUsed;
    private SqlNames n;
    private Ledger ledger;
    private final ModelLock lock;
    private Seq replayPoint;

    SnapshotRun(Jdbc jdbc, Dialect dialect, SnapshotListener listener, ModelSettings settings, String runId,
                Operation operation, Object replayFrom, String previousStatus, ModelLock lock, ResolvedModel sourceModel) {
        this.lock = lock;
        this.sourceModel = sourceModel;
        this.jdbc = jdbc;
        this.dialect = dialect;
        this.listener = listener;
        this.settings = settings;
        this.runId = runId;
        this.operation = operation;
        this.replayFrom = replayFrom;
        this.previousStatus = previousStatus;
    }

    String replayPointText() {
        return replayPoint == null ? null : replayPoint.text();
    }

    /** Runs the steps; the result's duration is zero, the caller measures the whole run. */
    RunResult execute() {
        resolve();
        recover();
        TreeMap<Seq, Ledger.Entry> applied = ledger.read(m.sequenceType());
        Discovery source = discover();
        TreeSet<Seq> fresh = new TreeSet<>(source.sequences());
        fresh.addAll(pending.keySet()); // aged-out batches a failed replay saved before rolling them back
        fresh.removeAll(applied.keySet());
        boolean late = detect(fresh, applied, source);
        TreeSet<Seq> batches = new TreeSet<>(fresh);
        if (replayPoint != null) {
            batches.addAll(applied.tailMap(replayPoint, true).keySet());
        }
        if (batches.isEmpty()) {
            replayPoint = null;
            return new RunResult(runId, settings.name(), List.of(), false, null, 0, Duration.ZERO);
        }
        Seq first = batches.first();
        lock.verifyHeld();
        Map<String, Seq> introduced = prepare(first);
        List<Seq> reproduced = new ArrayList<>();
        for (Seq s : batches) {
            if (!source.sequences().contains(s)) {
                reproduced.add(s);
            }
        }
        stage(first, source.nullSequence(), reproduced, introduced, applied);
        if (replayPoint != null) {
            rollBack(applied, source, introduced);
        }
        List<BatchResult> results = apply(batches, reproduced, applied, introduced);
        long violations = check(first);
        return new RunResult(runId, settings.name(), results, late, replayPoint == null ? null : replayPoint.value(),
                violations, Duration.ZERO);
    }

    // ---------------------------------------------------------------- steps

    private void resolve() {
        try {
            ModelResolver.Resolution r = ModelResolver.withTables(jdbc.connection(), dialect, sourceModel);
            m = r.model();
            targetColumns = r.targetColumns();
            archiveColumns = r.archiveColumns();
            pendingColumns = r.pendingColumns();
        } catch (SQLException e) {
            throw jdbc.failure("resolve", null, e);
        }
        if (!m.updatedAtType().orderable()) {
            throw new ItersnapException(ErrorCode.INVALID_SOURCE, "model '" + settings.name() + "': setting "
                    + "'updated_at' column '" + m.updatedAt() + "' has type " + m.updatedAtColumn().typeName()
                    + ", which is not a DATE, TIMESTAMP, number or string type");
        }
        n = new SqlNames(dialect, m);
        ledger = new Ledger(jdbc, m, n);
    }

    /**
     * Step 2: undo history writes the ledger does not record (a crash between a write and its ledger entry). Needed
     * only when the previous run did not finish, or when the database has no transactional DML.
     */
    private void recover() {
        boolean needed = dialect.transactionalDml() ? "running".equals(previousStatus)
                : !"success".equals(previousStatus);
        if (targetColumns == null || !needed) {
            return;
        }
        TreeSet<Seq> recorded = new TreeSet<>(ledger.read(m.sequenceType()).keySet());
        TreeSet<Seq> inHistory = new TreeSet<>();
        for (String column : List.of(m.meta().openedSeq(), m.meta().closedSeq())) {
            jdbc.query("recover", "SELECT DISTINCT " + n.q(column) + " FROM " + n.table(m.target()) + " WHERE "
                    + n.q(column) + " IS NOT NULL", rs -> inHistory.add(new Seq(m.sequenceType(),
                    m.sequenceType().read(rs, 1))));
        }
        inHistory.removeAll(recorded);
        if (!inHistory.isEmpty() && (recorded.isEmpty() || inHistory.first().compareTo(recorded.last()) > 0)) {
            // the usual case: a batch (or, after a replay forgot its batches, everything from the replay point on)
            // written but not recorded, above every recorded one: the replay's own roll back undoes it
            Seq from = inHistory.first();
            List<String> reset = new ArrayList<>();
            ledger.columns().values().forEach(c -> {
                if (c.introducedText() != null
                        && Seq.parse(m.sequenceType(), c.introducedText()).compareTo(from) >= 0) {
                    reset.add(c.name());
                }
            });
            for (String sql : dialect.rollback(m, reset)) {
                if (sql.contains("?")) {
                    jdbc.update("recover", sql, from.value());
                } else {
                    jdbc.update("recover", sql);
                }
            }
        } else {
            for (Seq s : inHistory.descendingSet()) {
                jdbc.update("recover", "DELETE FROM " + n.table(m.target()) + " WHERE " + n.q(m.meta().openedSeq())
                        + " = ?", s.value());
                jdbc.update("recover", "UPDATE " + n.table(m.target()) + " SET " + n.q(m.meta().validTo())
                        + " = NULL, " + n.q(m.meta().changeType()) + " = 'insert', "
                        + n.q(m.meta().changedAttributes()) + " = NULL, " + n.q(m.meta().closedSeq())
                        + " = NULL WHERE " + n.q(m.meta().closedSeq()) + " = ?", s.value());
            }
        }
        if (archiveColumns != null) {
            TreeSet<Seq> archived = new TreeSet<>();
            jdbc.query("recover", "SELECT DISTINCT " + n.q(m.sequenceBy()) + " FROM " + n.table(m.archive()), rs ->
                    archived.add(new Seq(m.sequenceType(), m.sequenceType().read(rs, 1))));
            archived.removeAll(recorded);
            for (Seq s : archived) {
                jdbc.update("recover", "DELETE FROM " + n.table(m.archive()) + " WHERE " + n.q(m.sequenceBy())
                        + " = ?", s.value());
            }
        }
        // set-aside rows logged for a batch that was never recorded (its replay logs them again)
        List<Seq> logged = new ArrayList<>();
        for (String text : ledger.loggedSequences()) {
            Seq s = Seq.parse(m.sequenceType(), text);
            if (!recorded.contains(s)) {
                logged.add(s);
            }
        }
        if (!logged.isEmpty()) {
            ledger.forget(logged);
        }
        jdbc.commit("recover");
    }

    /** Step 3: the sequences present in the source. */
    private Discovery discover() {
        if (pendingColumns != null) {
            jdbc.query("discover", "SELECT DISTINCT " + n.q(m.sequenceBy()) + ", " + n.q(m.id(
                    dev.itersnap.spi.AbstractSqlDialect.DELTIME)) + " FROM " + n.table(m.pending()), rs -> {
                        pending.put(new Seq(m.sequenceType(), m.sequenceType().read(rs, 1)), rs.getString(2));
                        return null;
                    });
            pendingUsed = !pending.isEmpty();
        }
        TreeSet<Seq> seqs = new TreeSet<>();
        boolean[] nulls = {false};
        jdbc.query("discover", dialect.discoverSequences(m), rs -> {
            Object v = m.sequenceType().read(rs, 1);
            if (v == null) {
                nulls[0] = true;
            } else {
                seqs.add(new Seq(m.sequenceType(), v));
            }
            return null;
        });
        return new Discovery(seqs, nulls[0]);
    }

    /** Step 4: decide the replay point (late batches, or a deliberate replay / full refresh). */
    private boolean detect(TreeSet<Seq> fresh, TreeMap<Seq, Ledger.Entry> applied, Discovery source) {
        Seq point = null;
        if (operation == Operation.REPLAY) {
            try {
                point = new Seq(m.sequenceType(), m.sequenceType().coerce(replayFrom));
            } catch (IllegalArgumentException e) {
                throw new ItersnapException(ErrorCode.INVALID_SEQUENCE, "model '" + settings.name() + "': cannot replay"
                        + " from " + replayFrom + ": " + e.getMessage() + " (sequence_by '" + m.sequenceBy()
                        + "' is " + m.sequenceColumn().typeName() + ")");
            }
        }
        if (operation == Operation.FULL_REFRESH && !applied.isEmpty() && !source.sequences().isEmpty()) {
            point = source.sequences().first();
        }
        boolean late = false;
        if (!fresh.isEmpty() && !applied.isEmpty() && fresh.first().compareTo(applied.lastKey()) < 0) {
            late = true;
            Seq lateFrom = fresh.first();
            point = point == null || lateFrom.compareTo(point) < 0 ? lateFrom : point;
            List<Object> incoming = fresh.headSet(applied.lastKey()).stream().map(Seq::value).toList();
            listener.onEvent(new SnapshotEvent.OutOfOrder(settings.name(), runId, incoming, applied.lastKey().value(),
                    point.value()));
        }
        if (point != null && (applied.isEmpty() || point.compareTo(applied.lastKey()) > 0)) {
            point = null; // nothing applied at or after it: nothing to roll back
        }
        replayPoint = point;
        return late;
    }

    /**
     * Creates or evolves the history table and creates the scratch tables (all DDL, before any batch transaction).
     * Returns the introduction batch of each column added after the history was created.
     */
    private Map<String, Seq> prepare(Seq firstBatch) {
        List<String> added = new ArrayList<>();
        List<String> missing = new ArrayList<>();
        if (targetColumns == null) {
            for (String sql : dialect.createHistory(m)) {
                jdbc.update("create history table", sql);
            }
        } else {
            requireBookkeeping();
            for (SourceColumn src : m.sourceColumns()) {
                SourceColumn existing = column(targetColumns, src.name());
                if (existing == null) {
                    jdbc.update("add column", dialect.addColumn(m, m.target(), src));
                    added.add(src.name());
                } else if (widen(m.target(), existing, src)) {
                    // the meta columns typed after sequence_by / updated_at follow them
                    List<String> followers = src.name().equals(m.sequenceBy())
                            ? List.of(m.meta().openedSeq(), m.meta().closedSeq())
                            : src.name().equals(m.updatedAt())
                            ? List.of(m.meta().updatedAt(), m.meta().validFrom(), m.meta().validTo()) : List.of();
                    for (String meta : followers) {
                        jdbc.update("widen column", dialect.widenColumn(m.target(), meta, src));
                    }
                }
            }
        }
        if (archiveColumns == null || (!dialect.transactionalDml() && pendingColumns == null)) {
            for (String sql : dialect.createArchive(m)) {
                jdbc.update("create archive", sql);
            }
        }
        if (archiveColumns != null) {
            for (SourceColumn src : m.sourceColumns()) {
                SourceColumn existing = column(archiveColumns, src.name());
                if (existing == null) {
                    jdbc.update("add column", dialect.addColumn(m, m.archive(), src));
                } else {
                    widen(m.archive(), existing, src);
                }
            }
        }
        if (pendingColumns != null) {
            for (SourceColumn src : m.sourceColumns()) {
                SourceColumn existing = column(pendingColumns, src.name());
                if (existing == null) {
                    jdbc.update("add column", dialect.addColumn(m, m.pending(), src));
                } else {
                    widen(m.pending(), existing, src);
                }
            }
        }
        for (String sql : dialect.createScratch(m)) {
            jdbc.update("create scratch tables", sql);
        }
        jdbc.commit("prepare");
        Map<String, Ledger.Column> registry = ledger.columns();
        Map<String, Seq> introduced = new LinkedHashMap<>();
        // An empty registry means the history was created by a run that stopped before registering its columns:
        // every column the history already had is there from the start.
        boolean adopt = registry.isEmpty();
        for (SourceColumn src : m.sourceColumns()) {
            Ledger.Column known = registry.get(src.name());
            if (known == null) {
                boolean fromStart = targetColumns == null || (adopt && !added.contains(src.name()));
                ledger.registerColumn(src.name(), fromStart ? null : firstBatch.text());
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
                    ledger.markInSource(src.name(), true);
                    added.add(src.name());
                }
                if (known.introducedText() != null) {
                    introduced.put(src.name(), Seq.parse(m.sequenceType(), known.introducedText()));
                }
            }
        }
        for (Ledger.Column known : registry.values()) {
            if (known.inSource() && m.sourceColumn(known.name()) == null) {
                ledger.markInSource(known.name(), false);
                missing.add(known.name());
            }
        }
        jdbc.commit("prepare");
        if (!added.isEmpty() || !missing.isEmpty()) {
            listener.onEvent(new SnapshotEvent.SchemaChange(settings.name(), runId, added, missing));
        }
        return introduced;
    }

    private void requireBookkeeping() {
        for (String meta : List.of(m.meta().validFrom(), m.meta().validTo(), m.meta().openedSeq(),
                m.meta().closedSeq(), m.meta().changeType())) {
            if (column(targetColumns, meta) == null) {
                throw new ItersnapException(ErrorCode.INVALID_SETTING, "model '" + settings.name() + "': target "
                        + m.target() + " exists but has no column '" + meta + "'; it was not built by itersnap with "
                        + "these column_names. Choose another target or fix column_names");
            }
        }
    }

    private static SourceColumn column(List<SourceColumn> columns, String name) {
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
    private boolean widen(dev.itersnap.core.TableName table, SourceColumn existing, SourceColumn src) {
        if (dialect.columnType(existing).equals(dialect.columnType(src)) || dialect.widens(src, existing)) {
            return false;
        }
        if (!dialect.widens(existing, src)) {
            throw new ItersnapException(ErrorCode.INCOMPATIBLE_SCHEMA_CHANGE, "model '" + settings.name()
                    + "': source column '" + src.name() + "' changed type from " + dialect.columnType(existing)
                    + " (history) to " + dialect.columnType(src) + " (source), which cannot be widened; cast it "
                    + "in the source query");
        }
        jdbc.update("widen column", dialect.widenColumn(table, existing.name(), src));
        return true;
    }

    /**
     * Step 5: read the source once, from the first batch to apply on, into the stage; reproduce batches that aged
     * out of the source from the history (before it is rolled back).
     */
    private void stage(Seq first, boolean nullSequence, List<Seq> reproduced, Map<String, Seq> introduced,
                       TreeMap<Seq, Ledger.Entry> applied) {
        jdbc.update("stage source", dialect.stageSource(m, nullSequence), first.value());
        if (nullSequence) {
            int logged = jdbc.update("set rows aside", dialect.logNullSequences(m), m.name(), runId,
                    LocalDateTime.now(), m.name());
            if (logged > 0) {
                listener.onEvent(new SnapshotEvent.RowsRejected(settings.name(), runId, null,
                        Map.of("null_sequence", (long) logged)));
            }
        }
        boolean full = settings.hardDeletes().fullBatches();
        List<Seq> fromHistory = new ArrayList<>();
        for (Seq s : reproduced) {
            if (pending.containsKey(s)) {
                jdbc.update("reproduce aged-out batch", "INSERT INTO " + n.table(m.stage()) + " (" + stageColumns()
                        + ") SELECT " + stageColumns() + " FROM " + n.table(m.pending()) + " WHERE "
                        + n.q(m.sequenceBy()) + " = ?", s.value());
                continue;
            }
            fromHistory.add(s);
            List<String> notYet = new ArrayList<>();
            introduced.forEach((column, at) -> {
                if (at.compareTo(s) > 0) {
                    notYet.add(column);
                }
            });
            Ledger.Entry entry = applied.get(s);
            boolean fullPicture = full && entry != null && entry.deletionTime() != null;
            String sql = dialect.stageReproduced(m, notYet, fullPicture);
            Object[] binds = new Object[(int) sql.chars().filter(ch -> ch == '?').count()];
            java.util.Arrays.fill(binds, s.value());
            jdbc.update("reproduce aged-out batch", sql, binds);
        }
        if (!dialect.transactionalDml() && replayPoint != null) {
            // Without transactions the roll back below is not undone by a failure: save what only the history
            // holds (the aged-out batches) before it goes, so that a failed run loses nothing
            for (Seq s : fromHistory) {
                Ledger.Entry entry = applied.get(s);
                jdbc.update("save aged-out batch", "INSERT INTO " + n.table(m.pending()) + " (" + stageColumns()
                        + ", " + n.q(m.id(dev.itersnap.spi.AbstractSqlDialect.DELTIME)) + ") SELECT "
                        + stageColumns() + ", ? FROM " + n.table(m.stage()) + " WHERE " + n.q(m.sequenceBy())
                        + " = ?", entry == null ? null : entry.deletionTime(), s.value());
                pending.put(s, entry == null ? null : entry.deletionTime());
                pendingUsed = true;
            }
        }
        jdbc.commit("stage");
    }

    /** The stage's columns (also the pending table's, which adds the deletion time). */
    private String stageColumns() {
        List<String> cols = new ArrayList<>(m.sourceNames());
        cols.add(m.id(dev.itersnap.spi.AbstractSqlDialect.DEL));
        cols.add(m.id(dev.itersnap.spi.AbstractSqlDialect.REJECT));
        cols.add(m.id(dev.itersnap.spi.AbstractSqlDialect.REPRO));
        return String.join(", ", cols.stream().map(n::q).toList());
    }

    /**
     * Step 4 (continued): roll the history back to the replay point. On a transactional database this is not
     * committed on its own when aged-out batches are reproduced: it commits with the last of them.
     */
    private void rollBack(TreeMap<Seq, Ledger.Entry> applied, Discovery source, Map<String, Seq> introduced) {
        lock.verifyHeld();
        List<String> resetColumns = new ArrayList<>();
        introduced.forEach((column, at) -> {
            if (at.compareTo(replayPoint) >= 0) {
                resetColumns.add(column);
            }
        });
        List<Seq> undone = new ArrayList<>(applied.tailMap(replayPoint, true).keySet());
        if (!dialect.transactionalDml()) {
            // forget first: from here on a failure leaves history the ledger does not record, which the next
            // run's recovery rolls back (the aged-out batches among them are in the pending table)
            ledger.forget(undone);
        }
        for (String sql : dialect.rollback(m, resetColumns)) {
            if (sql.contains("?")) {
                jdbc.update("roll back", sql, replayPoint.value());
            } else {
                jdbc.update("roll back", sql);
            }
        }
        if (dialect.transactionalDml()) {
            ledger.forget(undone);
        }
    }

    /** Step 6: apply the batches in business order, each recorded in the ledger with its writes. */
    private List<BatchResult> apply(TreeSet<Seq> batches, List<Seq> reproduced, TreeMap<Seq, Ledger.Entry> applied,
                                    Map<String, Seq> introduced) {
        BatchApplier applier = new BatchApplier(jdbc, dialect, m, ledger, introduced, listener, runId);
        Seq lastReproduced = reproduced.isEmpty() ? null : reproduced.get(reproduced.size() - 1);
        List<BatchResult> results = new ArrayList<>();
        int announced = 0;
        for (Seq s : batches) {
            lock.verifyHeld();
            boolean isReproduced = reproduced.contains(s);
            Ledger.Entry before = applied.get(s);
            String recordedDeletionTime = !isReproduced ? null
                    : before != null ? before.deletionTime() : pending.get(s);
            results.add(applier.apply(s, isReproduced, recordedDeletionTime));
            if (lastReproduced == null || s.compareTo(lastReproduced) >= 0) {
                jdbc.commit("apply batch");
                // BatchApplied only once the batch is committed
                for (; announced < results.size(); announced++) {
                    listener.onEvent(new SnapshotEvent.BatchApplied(settings.name(), runId, results.get(announced)));
                }
            }
        }
        jdbc.commit("apply batch");
        if (pendingUsed) {
            jdbc.update("clear pending batches", "DELETE FROM " + n.table(m.pending()));
        }
        return results;
    }

    /** Step 7: check the timeline of the keys touched by this run. */
    private long check(Seq first) {
        List<String> keys = jdbc.query("check timeline", dialect.timelineCheck(m), rs -> {
            StringBuilder k = new StringBuilder();
            for (int i = 1; i <= m.keys().size(); i++) {
                k.append(i > 1 ? "|" : "").append(rs.getString(i));
            }
            return k.toString();
        }, first.value(), first.value());
        List<String> distinct = keys.stream().distinct().toList();
        if (!distinct.isEmpty()) {
            listener.onEvent(new SnapshotEvent.TimelineViolation(settings.name(), runId, distinct.size(),
                    distinct.subList(0, Math.min(5, distinct.size()))));
        }
        jdbc.commit("check timeline");
        return distinct.size();
    }
}
