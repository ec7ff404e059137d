package dev.itersnap.internal;

import dev.itersnap.core.BatchResult;
import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.RunResult;
import dev.itersnap.core.RunPlan;
import dev.itersnap.core.SnapshotEvent;
import dev.itersnap.core.SnapshotListener;
import dev.itersnap.internal.sql.RejectReason;
import dev.itersnap.internal.sql.ApplyStatements;
import dev.itersnap.internal.sql.Rollback;
import dev.itersnap.internal.sql.SqlSteps;
import dev.itersnap.spi.Dialect;
import dev.itersnap.spi.ModelLock;
import dev.itersnap.internal.sql.ModelTables;
import dev.itersnap.spi.SourceColumn;
import dev.itersnap.spi.StageScope;
import dev.itersnap.spi.ValueType;

import java.sql.SQLException;
import java.time.Duration;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * One run of one model under its lock, step by step ({@link #decide}, then {@link #applyNew}):
 * <ol>
 *   <li>resolve the model ({@link #resolve}) and own its history ({@link RunOwnership});</li>
 *   <li>recover what a run that did not finish left ({@link RunRecovery#recover});</li>
 *   <li>discover the source's batches ({@link RunDiscovery#discover}), compare applied ones with their fingerprints
 *       ({@link RunDiscovery#compare}), check the ledger against the history ({@link RunRecovery#checkLedger});</li>
 *   <li>decide the replay point and the batches ({@link RunDiscovery#detect}, {@link ReplayDecision}); a plan stops
 *       here ({@link #plan});</li>
 *   <li>prepare the tables ({@link RunSchema#prepare}) and stage the source ({@link #stage});</li>
 *   <li>roll back ({@link #rollBack}), or for a late batch only the keys it changes ({@link #replayByKey});</li>
 *   <li>apply ({@link #apply});</li>
 *   <li>check the timeline ({@link #check}).</li>
 * </ol>
 * An adoption ({@link RunAdoption}) comes first when asked for. Each step returns what it found or made (a record:
 * {@link Resolved}, {@link Discovery}, {@link RunDiscovery.Compared}, {@link ReplayDecision.Decision}, gathered in
 * {@link Decided}; then {@link RunSchema.Prepared}), which the run holds and passes to the steps after it, so that what
 * a step depends on is in its signature (in particular which model a statement is built on: as resolved, or the view
 * that carries the columns the source no longer has); the parts share only the {@link RunContext}, nothing they
 * change. Every statement comes from the engine's SQL ({@code SqlSteps}), the model's tables or the metadata store.
 * Single use.
 */
final class SnapshotRun {
    /**
     * What a run was asked to do, with its policy as data: whether it compares every applied batch the source holds
     * with its fingerprint, replays from a requested point, rebuilds from the source's first batch (a full refresh:
     * also starts over in a new or empty table, and probes every applied batch for lost ledger entries), may replay a
     * late batch key by key, and is held to the model's recorded logic.
     */
    enum Operation {
        RUN("run", false, false, false, true, true),
        FULL_CHECK("full_check", true, false, false, true, true),
        FULL_REFRESH("full_refresh", true, false, true, false, false),
        REPLAY("replay", true, true, false, false, false),
        ADOPT("adopt", false, false, false, false, false);

        private final String label;
        private final boolean comparesAll;
        private final boolean requestsPoint;
        private final boolean rebuildsFromSource;
        private final boolean keyScoping;
        private final boolean keepsLogic;

        Operation(String label, boolean comparesAll, boolean requestsPoint, boolean rebuildsFromSource,
                  boolean keyScoping, boolean keepsLogic) {
            this.label = label;
            this.comparesAll = comparesAll;
            this.requestsPoint = requestsPoint;
            this.rebuildsFromSource = rebuildsFromSource;
            this.keyScoping = keyScoping;
            this.keepsLogic = keepsLogic;
        }

        String label() {
            return label;
        }

        /** Compares every applied batch the source holds (a full check, and the deliberate rebuilds, as their plans). */
        boolean comparesAll() {
            return comparesAll;
        }

        /** Replays from a point the caller names. */
        boolean requestsPoint() {
            return requestsPoint;
        }

        /** Rebuilds from the first batch the source holds (a full refresh). */
        boolean rebuildsFromSource() {
            return rebuildsFromSource;
        }

        /** May replay a late batch for the keys it changes only (a deliberate rebuild recomputes every key). */
        boolean keyScoping() {
            return keyScoping;
        }

        /** Refuses, unless told to accept, a logic other than the last successful run's. */
        boolean keepsLogic() {
            return keepsLogic;
        }

        /** The operation of a label ({@link #label}). */
        static Operation of(String label) {
            for (Operation o : values()) {
                if (o.label.equals(label)) {
                    return o;
                }
            }
            throw new IllegalArgumentException("no operation " + label);
        }
    }

    /**
     * The sequences in the source and whether some rows have none; the rows and fingerprints (with {@code
     * restatements: detect}, when the dialect hashes) of the applied batches this run compares ({@link RunDiscovery#compare}),
     * and no others: a run reads and hashes only what it applies or checks. {@code prints}: the columns and signature
     * of this run's fingerprints, from the source as discovered; null with {@code restatements: ignore}. {@code
     * pending}: the batches in the pending table (non-transactional databases only: aged-out batches a failed replay
     * saved before rolling them back), with their recorded deletion time.
     */
    record Discovery(TreeSet<Seq> sequences, boolean nullSequence, Map<Seq, Long> rows,
                             Map<Seq, Fingerprint> fingerprints, Fingerprints prints, Map<Seq, String> pending) {
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
    /** The lock once the run holds it; none while it only decides (a plan, or a run before its lock): it writes nothing. */
    private final RunContext.Phase phase;
    private final MetadataStore store;
    private final boolean transactional;
    /** The replay point the run log records: the decision's, none when the run applied nothing ({@link #applyNew}). */
    private Seq replayPoint;
    /** An adoption's point, once adopted: the run log records it as the replay point. */
    private Seq adopted;
    /** With an adoption: the batch to rebuild the history from (the oldest the source holds), or null. */
    private Object rebuildFrom;
    /** The most sequences one statement binds to name batches (beyond: a range, or every batch). */
    static final int MAX_BOUND_SEQUENCES = 500;
    /** The batch the restatement sweep of the last run that swept stopped at (its text), or null. */
    private String sweptThrough;
    /** The batch this run's sweep stopped at (its text), or null when it swept nothing (from {@code compare}). */
    private String checkedThrough;

    /** The engine's SQL of every step, on this run's dialect. */
    private final SqlSteps sql;
    private final RunOwnership ownership;
    private final RunAdoption adoption;
    private final RunRecovery recovery;
    private final RunDiscovery discovery;
    private final RunSchema schema;
    /** The checks that refuse an edited history (before the first write) and the timeline check (after). */
    private final EditedHistory edited;
    /** What a repair replaces, kept ({@code keep_superseded}). */
    private final SupersededVersions superseded;

    /** A run holding {@code lock}, or, with none, one that only decides (a plan, or a run before its lock). */
    SnapshotRun(Jdbc jdbc, Dialect dialect, SnapshotListener listener, ModelSettings settings, String runId,
                Operation operation, Object replayFrom, String previousStatus, ModelLock lock,
                ResolvedModel sourceModel, MetadataStore store) {
        this.phase = new RunContext.Phase(lock);
        this.store = store;
        this.transactional = dialect.capabilities().transactionalDml();
        this.sourceModel = sourceModel;
        this.jdbc = jdbc;
        this.dialect = dialect;
        this.sql = SqlSteps.of(dialect);
        this.listener = listener;
        this.settings = settings;
        this.runId = runId;
        this.operation = operation;
        this.replayFrom = replayFrom;
        this.previousStatus = previousStatus;
        RunContext cx = new RunContext(jdbc, dialect, sql, listener, settings, runId, operation, replayFrom,
                previousStatus, store, phase, transactional);
        this.ownership = new RunOwnership(cx);
        this.recovery = new RunRecovery(cx);
        this.discovery = new RunDiscovery(cx);
        this.adoption = new RunAdoption(cx, ownership, discovery);
        this.schema = new RunSchema(cx, ownership);
        this.edited = new EditedHistory(cx, adoption);
        this.superseded = new SupersededVersions(cx);
    }

    /**
     * Makes an adoption rebuild the history from {@code sequence} on: the versions that start at or after it are
     * removed, each key's latest version before it reopened, and the source's batches from it applied in order.
     */
    void rebuildFrom(Object sequence) {
        this.rebuildFrom = sequence;
    }

    /** The batch the sweep of the last run that swept stopped at ({@code checked_through} in the run log). */
    void sweptThrough(String text) {
        this.sweptThrough = text;
    }

    /** The last batch this run's restatement sweep compared (its text), or null. */
    String checkedThrough() {
        return checkedThrough;
    }

    String replayPointText() {
        if (adopted != null) {
            return adopted.text(); // the run log keeps an adoption's point as its replay point
        }
        return replayPoint == null ? null : replayPoint.text();
    }

    /**
     * The model resolved against the tables under the lock: the model, the columns of the history, archive and pending
     * tables (null: the table does not exist yet), and the model's tables. {@link RunSchema#prepare} makes a view of it
     * that carries the columns the source no longer has ({@link #carrying}); every step after it works on that view.
     */
    record Resolved(ResolvedModel m, List<SourceColumn> targetColumns, List<SourceColumn> archiveColumns,
                    List<SourceColumn> pendingColumns, Boolean targetHasRows, ModelTables tables) {
        /** The view in which {@code columns}, which the source no longer has, are source columns again. */
        Resolved carrying(Dialect dialect, List<SourceColumn> columns) {
            ResolvedModel view = m.carrying(columns, targetColumns.stream().map(SourceColumn::name).toList());
            return new Resolved(view, targetColumns, archiveColumns, pendingColumns, targetHasRows,
                    new ModelTables(dialect, view));
        }
    }

    /** Runs the steps; the result's duration is zero, the caller measures the whole run. */
    RunResult execute() {
        if (operation == Operation.ADOPT) {
            RunAdoption.Adopted a = adoption.adopt(resolve(), rebuildFrom);
            adopted = a.through();
            if (rebuildFrom == null) {
                return a.result();
            }
            // the versions from the rebuild point on are gone: apply the source's batches from there, in order
            return applyNew();
        }
        return applyNew();
    }

    /**
     * What a run found and decided before it writes to the history (steps 1 to 4): the resolution, the ledger (lost
     * entries among it), what the source holds, the batches new to the ledger, the restated and uncomparable batches,
     * and the decision (the replay point, why, whether a late batch was found, the batches to apply).
     */
    record Decided(Resolved resolved, TreeMap<Seq, MetadataStore.Entry> applied, Discovery source, TreeSet<Seq> fresh,
                   RunDiscovery.Compared compared, ReplayDecision.Decision decision) {
        boolean late() {
            return decision.late();
        }
    }

    /**
     * Steps 1 to 4: resolve, own, recover, discover, compare, check the ledger, detect. While {@link #planning()} it
     * writes nothing: ownership is checked, not registered; recovery is left to the run (the plan says it comes first).
     */
    Decided decide() {
        Resolved r = resolve();
        ResolvedModel m = r.m();
        ownership.own(r);
        if (!planning()) {
            recovery.recover(r);
            if (r.targetColumns() != null && !transactional && previousStatus != null
                    && !"success".equals(previousStatus)) {
                superseded.takeOverAfterFailure(m); // what a failed repair copied is superseded by this run
            }
        }
        TreeMap<Seq, MetadataStore.Entry> applied = store.ledger(m);
        Discovery source = discovery.discover(r);
        TreeSet<Seq> fresh = new TreeSet<>(source.sequences());
        fresh.addAll(source.pending().keySet()); // aged-out batches a failed replay saved before rolling them back
        fresh.removeAll(applied.keySet());
        RunDiscovery.Compared compared = discovery.compare(m, applied, source, fresh, sweptThrough);
        checkedThrough = compared.checkedThrough();
        Seq lostFrom = recovery.checkLedger(r, applied, fresh, compared, source.pending(), source.rows().keySet());
        if (!planning() && r.targetColumns() != null && "running".equals(previousStatus)) { // what a dead run recorded
            Seq unapplied = UnfinishedRunCheck.verify(jdbc, dialect, m, runId, listener, applied);
            lostFrom = lostFrom == null || unapplied != null && unapplied.compareTo(lostFrom) < 0 ? unapplied
                    : lostFrom;
        }
        ReplayDecision.Decision decision = discovery.detect(m, fresh, applied, source, compared, lostFrom);
        adoption.refuseBelowAdoption(m, fresh, applied, decision.point(), compared.restated()); // before any write
        return new Decided(r, applied, source, fresh, compared, decision);
    }

    /**
     * The plan of this run ({@link #planning()}): what {@link #decide} decided, as {@link RunPlan} shows it, with what
     * {@code lock} says. Writes nothing.
     */
    RunPlan plan(dev.itersnap.core.Inspection.Lock lock) {
        Decided d = decide();
        ReplayDecision.Decision decision = d.decision();
        List<RunPlan.Batch> planned = new ArrayList<>();
        for (Seq s : decision.batches()) {
            RunPlan.ReadFrom from = d.source().sequences().contains(s) ? RunPlan.ReadFrom.SOURCE
                    : d.source().pending().containsKey(s) ? RunPlan.ReadFrom.PENDING : RunPlan.ReadFrom.HISTORY;
            planned.add(new RunPlan.Batch(s.shown(), d.applied().containsKey(s), from));
        }
        boolean recoveryFirst = d.resolved().targetColumns() != null
                && (transactional ? "running".equals(previousStatus)
                : previousStatus != null && !"success".equals(previousStatus));
        return new RunPlan(settings.name(), operation.label(),
                decision.point() == null ? null : decision.point().shown(), decision.reasons(), d.late(),
                shown(d.compared().restated().keySet()), shown(d.compared().uncomparable().keySet()),
                shown(d.applied().values().stream().filter(MetadataStore.Entry::lost).map(MetadataStore.Entry::sequence)
                        .toList()), shown(decision.rolledBack()), planned, recoveryFirst, lock);
    }

    private static List<Object> shown(java.util.Collection<Seq> seqs) {
        return seqs.stream().map(Seq::shown).toList();
    }

    /** True while the run only decides: a plan, or a run before it takes its lock ({@link #holding}). */
    private boolean planning() {
        return phase.lock() == null;
    }

    /**
     * A run that decided before taking its lock ({@link #decide} while it held none) takes it: from now on its steps
     * write. The caller has made sure that what it read then still holds ({@link MetadataStore#unchangedSince}).
     */
    void holding(ModelLock lock) {
        phase.holding(lock);
    }

    /**
     * What a run decided before its lock (the last run succeeded, none is running: nothing to recover) and now
     * holding it: the owner it found to register, then the steps after the decision ({@link #applyNew(Decided)}).
     */
    RunResult applyDecided(Decided d) {
        if (ownership.wouldWrite()) {
            ownership.own(d.resolved());
        }
        return applyNew(d);
    }

    /**
     * The result of a run that, decided before its lock, writes nothing at all (no batch to apply or replay, no
     * batch new to the ledger, no fingerprint to record, no pending batch to clear, no column gone to note, no owner
     * to register): its steps, which then only report; null when it would write, and takes the lock.
     */
    RunResult withoutWriting(Decided d) {
        if (!planning()) {
            throw new IllegalStateException("decided under the lock");
        }
        boolean writes = !d.decision().batches().isEmpty() || !d.fresh().isEmpty()
                || !d.source().pending().isEmpty() || ownership.wouldWrite()
                || !discovery.unrecordedFingerprints(d.applied(), d.source(), new TreeSet<>()).isEmpty()
                || schema.columnsGone(d.resolved().m());
        return writes ? null : applyNew(d);
    }

    /** The steps of a run, rebuild or replay. */
    RunResult applyNew() {
        return applyNew(decide());
    }

    /** The steps of a run, rebuild or replay, after its decision {@code d}. */
    private RunResult applyNew(Decided d) {
        Resolved r = d.resolved();
        TreeMap<Seq, MetadataStore.Entry> applied = d.applied();
        Discovery source = d.source();
        TreeSet<Seq> fresh = d.fresh();
        // what is checked before the first write to the history
        edited.plan(r, applied, source.rows().keySet(), d.decision().point(), recovery.openedVersions());
        recovery.forgetRowsLoggedWithoutEntry(r.m(), fresh);
        TreeSet<Seq> batches = new TreeSet<>(d.decision().batches());
        discovery.warnAboutGrownBatches(applied, source, batches);
        Map<Seq, Fingerprint> unrecorded = discovery.unrecordedFingerprints(applied, source, batches);
        if (batches.isEmpty()) {
            replayPoint = null;
            if (!applied.isEmpty()) {
                schema.noteColumnsGone(r.m(), applied.lastKey());
            }
            discovery.recordFingerprints(unrecorded, source.prints());
            if (!source.pending().isEmpty()) {
                // a rerun of a replay that failed after recording its batches: what the pending table kept for it
                // is in the ledger now
                jdbc.update(r.tables().clear(r.m().pending()).inStep("clear pending batches"));
                jdbc.commit("clear pending batches");
            }
            return new RunResult(runId, settings.name(), List.of(), false, null, 0, Duration.ZERO);
        }
        Seq point = d.decision().point();
        replayPoint = point;
        Seq first = batches.first();
        phase.lock().verifyHeld();
        RunSchema.Prepared p = schema.prepare(r, first, applied.isEmpty() ? null : applied.lastKey());
        if (point != null) {
            superseded.prepare(p.view().m());
        }
        List<Seq> reproduced = new ArrayList<>();
        for (Seq s : batches) {
            if (!source.sequences().contains(s)) {
                reproduced.add(s);
            }
        }
        List<BatchResult> results;
        boolean checked; // whether apply or replayByKey checked the timeline (before committing their writes)
        if (keyScoped(d, p, reproduced)) {
            results = replayByKey(p, point, batches, applied, source);
            checked = true;
        } else {
            // the pending table is cleared once the batches are applied when it held some or the stage saved some
            boolean pendingUsed = stage(p, point, first, source, reproduced, applied) || !source.pending().isEmpty();
            List<Seq> fromSource = new ArrayList<>(batches);
            fromSource.removeAll(reproduced);
            for (Seq gone : discovery.fingerprintStaged(p.view().m(), source, fromSource).gone()) {
                if (!applied.containsKey(gone)) {
                    // discovered, but its rows left the source before they were staged (a loader replacing the
                    // file): not applied, so the run that finds it again applies it
                    batches.remove(gone);
                }
            }
            if (point != null) {
                rollBack(p, point, applied);
            }
            checked = !batches.isEmpty();
            results = !checked ? List.of()
                    : apply(p, first, batches, reproduced, applied, source.pending(), pendingUsed);
        }
        if (!checked) { // nothing applied: a roll back may have run
            check(p.view().m(), first);
            jdbc.commit("check timeline");
        }
        discovery.recordFingerprints(unrecorded, source.prints());
        // a violation fails the run (check): a result reports none
        return new RunResult(runId, settings.name(), results, d.late(), point == null ? null : point.shown(),
                0, Duration.ZERO);
    }

    // ---------------------------------------------------------------- steps

    /** Step 1: the model against the tables as they are now, checked where the source's changes cannot apply. */
    Resolved resolve() {
        ResolvedModel m;
        List<SourceColumn> targetColumns;
        List<SourceColumn> archiveColumns;
        List<SourceColumn> pendingColumns;
        Boolean targetHasRows;
        try {
            // a model that ran before has its history and archive: described without asking the catalog first
            ModelResolver.Resolution r = ModelResolver.withTables(jdbc, dialect, sourceModel, previousStatus != null);
            m = r.model();
            targetColumns = r.targetColumns();
            archiveColumns = r.archiveColumns();
            pendingColumns = r.pendingColumns();
            targetHasRows = r.targetHasRows();
        } catch (SQLException e) {
            throw jdbc.failure("resolve", null, e);
        }
        if (!m.updatedAtType().orderable()) {
            throw new ItersnapException(ErrorCode.INVALID_SOURCE, "model '" + settings.name() + "': setting "
                    + "'updated_at' column '" + m.updatedAt() + "' has type " + m.updatedAtColumn().typeName()
                    + ", which is not a DATE, TIMESTAMP, number or string type");
        }
        if (targetColumns != null) {
            for (String part : m.sequenceParts()) {
                SourceColumn history = RunSchema.column(targetColumns, part);
                SourceColumn now = m.sourceColumn(part);
                // a decimal of a sequence_by list is keyed at its scale: another scale is another key
                boolean rescaled = m.sequenceKey() != null && history != null && now.valueType() == ValueType.DECIMAL
                        && history.valueType() == ValueType.DECIMAL && history.scale() != now.scale();
                if (history != null && (history.valueType() != now.valueType() || rescaled)) {
                    // the ledger holds the batches as values of the old type: they would not compare with the new ones
                    throw new ItersnapException(ErrorCode.INCOMPATIBLE_SCHEMA_CHANGE, "model '" + settings.name()
                            + "': sequence_by column '" + part + "' changed type from "
                            + dialect.columnType(history) + " (history) to " + dialect.columnType(now)
                            + " (source), another kind of value than the batches the ledger holds; nothing was "
                            + "written. Cast it back in the source query (CAST(" + part + " AS "
                            + dialect.columnType(history) + ")), or build a new table with the new type (full-refresh "
                            + "--yes with a new target). A wider type of the same kind (INT to BIGINT, a longer "
                            + "VARCHAR" + (m.sequenceKey() != null ? "; in a sequence_by list, a decimal of the same "
                            + "scale" : "") + ") is applied like any widening");
                }
            }
        }
        return new Resolved(m, targetColumns, archiveColumns, pendingColumns, targetHasRows,
                new ModelTables(dialect, m));
    }

    /**
     * Step 5: read the source once, from the first batch to apply on, into the stage; reproduce batches that aged
     * out of the source from the history (before it is rolled back, from {@code point}; null: none), or from the
     * pending table where a failed replay saved them. True when it saved batches in the pending table.
     */
    boolean stage(RunSchema.Prepared p, Seq point, Seq first, Discovery source, List<Seq> reproduced,
                  TreeMap<Seq, MetadataStore.Entry> applied) {
        boolean nullSequence = source.nullSequence();
        ResolvedModel m = p.view().m();
        ModelTables tables = p.view().tables();
        jdbc.update(sql.stageSource(m, first.value(), nullSequence));
        logNullSequences(m, nullSequence);
        carryColumns(p);
        boolean full = settings.hardDeletes().fullBatches();
        List<Seq> fromHistory = new ArrayList<>();
        for (Seq s : reproduced) {
            if (source.pending().containsKey(s)) {
                jdbc.update(tables.restorePending(s.value()));
                continue;
            }
            fromHistory.add(s);
            List<String> notYet = new ArrayList<>();
            p.introduced().forEach((column, at) -> {
                if (at.compareTo(s) > 0) {
                    notYet.add(column);
                }
            });
            MetadataStore.Entry entry = applied.get(s);
            boolean fullPicture = full && entry != null && (entry.deletionTime() != null || entry.lost());
            jdbc.update(sql.stageReproduced(m, s.value(), notYet, fullPicture));
        }
        if (!transactional && point != null && !p.carried().isEmpty()) {
            // the carried columns' values, which the roll back below takes from the history, likewise
            jdbc.updateAll(sql.saveCarried(m, p.ranges(), m.carriedValues()));
        }
        boolean saved = false;
        if (!transactional && point != null) {
            // Without transactions the roll back below is not undone by a failure: save what only the history
            // holds (the aged-out batches) before it goes, so that a failed run loses nothing
            for (Seq s : fromHistory) {
                MetadataStore.Entry entry = applied.get(s);
                jdbc.update(tables.savePending(s.value(), entry == null ? null : entry.deletionTime()));
                saved = true;
            }
        }
        jdbc.commit("stage");
        return saved;
    }

    /**
     * The carried columns' values into the staged rows of the batches applied while the source had them, from the
     * history as it is before the roll back; without transactions, from what a replay that failed after its roll back
     * saved, where it saved some.
     */
    void carryColumns(RunSchema.Prepared p) {
        if (p.carried().isEmpty()) {
            return;
        }
        ResolvedModel m = p.view().m();
        jdbc.update(sql.carryFromHistory(m, p.ranges()));
        if (!transactional) {
            jdbc.update(sql.carryFromSaved(m, p.ranges(), m.carriedValues()));
        }
    }

    /** The staged rows without a sequence into the error log, once per record (as the source gives them). */
    void logNullSequences(ResolvedModel m, boolean nullSequence) {
        if (nullSequence) {
            int logged = jdbc.update(sql.logNullSequences(m.withoutCarried(), runId, LocalDateTime.now()));
            if (logged > 0) {
                listener.onEvent(new SnapshotEvent.RowsRejected(settings.name(), runId, null,
                        Map.of(RejectReason.NULL_SEQUENCE.code(), (long) logged)));
            }
        }
    }

    /**
     * Step 6: roll the history back to the replay point ({@code point}). On a transactional database this is not
     * committed on its own when aged-out batches are reproduced: it commits with the last of them.
     */
    void rollBack(RunSchema.Prepared p, Seq point, TreeMap<Seq, MetadataStore.Entry> applied) {
        phase.lock().verifyHeld();
        List<String> resetColumns = new ArrayList<>();
        p.introduced().forEach((column, at) -> {
            if (at.compareTo(point) >= 0) {
                resetColumns.add(column);
            }
        });
        List<Seq> undone = new ArrayList<>(applied.tailMap(point, true).keySet());
        Rollback rollback = Rollback.from(point.value(), resetColumns);
        superseded.copy(p.view().m(), rollback, undone); // before anything is forgotten or rolled back
        if (!transactional) {
            // forget first: from here on a failure leaves history the ledger does not record, which the next
            // run's recovery rolls back (the aged-out batches among them are in the pending table)
            store.forget(undone);
        }
        jdbc.updateAll(sql.rollback(p.view().m(), rollback));
        if (transactional) {
            store.forget(undone);
        }
    }

    /**
     * Step 7: apply the batches together, in business order, each recorded in the ledger with its counts; committed
     * once, with the ledger entries, where the database has transactions. A reproduced batch keeps the deletion time
     * its ledger entry recorded, or the one the {@code pending} table kept for it; the pending table is cleared when
     * {@code pendingUsed}.
     */
    List<BatchResult> apply(RunSchema.Prepared p, Seq first, TreeSet<Seq> batches, List<Seq> reproduced,
                            TreeMap<Seq, MetadataStore.Entry> applied, Map<Seq, String> pending,
                            boolean pendingUsed) {
        ResolvedModel m = p.view().m();
        ModelTables tables = p.view().tables();
        BatchApplier applier = new BatchApplier(jdbc, dialect, m, tables, store, p.introduced(), listener, runId, phase.lock())
                .beforeWriting(editedCheck(m)).carrying(p.carried());
        List<BatchApplier.Planned> planned = new ArrayList<>();
        for (Seq s : batches) {
            boolean isReproduced = reproduced.contains(s);
            MetadataStore.Entry before = applied.get(s);
            String recordedDeletionTime = !isReproduced ? null
                    : before != null ? before.deletionTime() : pending.get(s);
            planned.add(new BatchApplier.Planned(s, isReproduced, recordedDeletionTime));
        }
        phase.lock().verifyHeld();
        List<BatchResult> results = applier.apply(planned);
        check(m, first); // before the commit: a violation rolls the writes back
        jdbc.commit("apply batches");
        // BatchApplied only once the batches are committed
        for (BatchResult r : results) {
            listener.onEvent(new SnapshotEvent.BatchApplied(settings.name(), runId, r));
        }
        if (pendingUsed) {
            jdbc.update(tables.clear(m.pending()).inStep("clear pending batches"));
        }
        if (!transactional && !p.carried().isEmpty()) {
            jdbc.update(tables.clear(m.carriedValues()).inStep("clear carried values"));
        }
        return results;
    }

    /**
     * The edited-history check before a pass writes ({@link EditedHistory#verifyBeforeWriting}), its rows counted by
     * the pass's counts query.
     */
    private BatchApplier.WriteCheck editedCheck(ResolvedModel m) {
        return new BatchApplier.WriteCheck() {
            @Override
            public dev.itersnap.spi.Statement probe() {
                return edited.editedVersions(m);
            }

            @Override
            public void verify(long found) {
                edited.verifyBeforeWriting(m, found);
            }
        };
    }

    /**
     * Whether a late batch is replayed key by key: only the keys the late batches change are rolled back and computed
     * again (every other key's history is already that of the batches in order). Only for a run that found late
     * batches (a deliberate replay or full refresh recomputes every key: the source may have changed), with every
     * replayed batch still in the source with exactly the rows the ledger recorded for it (a batch that gained or lost
     * rows since it was applied, whose content hash differs, or that the ledger lost, is replayed for every key; so is
     * a run that found a restated batch), every replayed batch's fingerprint recorded when it was applied, over the
     * columns the source has now (its error log records and archived rows, which the key-scoped roll back matches by
     * the rows staged now, have those columns; {@code restatements: ignore} records the columns without a hash), no
     * column introduced from the replay point on, and the source's columns those the model knows (a
     * column added, missing or back changes the replayed batches' rows of every key).
     */
    boolean keyScoped(Decided d, RunSchema.Prepared p, List<Seq> reproduced) {
        Seq point = d.decision().point();
        if (!d.late() || !operation.keyScoping() || point == null
                || !reproduced.isEmpty() || !d.source().pending().isEmpty()
                || !d.compared().restated().isEmpty() || !d.compared().uncomparable().isEmpty()
                || !p.sourceColumnsStable()
                || !p.introduced().values().stream().allMatch(at -> at.compareTo(point) < 0)) {
            return false;
        }
        for (MetadataStore.Entry e : d.applied().tailMap(point, true).values()) {
            Long rows = d.source().rows().get(e.sequence());
            if (e.lost() || rows == null || rows != e.sourceRows()) { // a lost entry has no counts
                return false;
            }
            Fingerprint now = d.source().fingerprints().get(e.sequence());
            if (e.fingerprint() == null || e.fingerprint().recordedLater() || now == null
                    || !now.sameContent(e.fingerprint())) {
                // content changed (over other columns too: cannot tell which keys), or the batch was applied under
                // columns the fingerprint does not show: its error log records and archived rows may have other
                // columns than the rows staged now, which a key-scoped roll back matches them by
                return false;
            }
        }
        return true;
    }

    /**
     * Steps 5 and 6 for a key-scoped replay: stage the batches not applied yet, find the keys the run changes (those
     * the late batches change from the replay point on, the others from the first new batch after the applied ones),
     * stage the replayed batches' rows of the first, roll only them back to {@code point}, and apply everything in one
     * pass.
     */
    List<BatchResult> replayByKey(RunSchema.Prepared p, Seq point, TreeSet<Seq> batches,
                                  TreeMap<Seq, MetadataStore.Entry> applied, Discovery source) {
        ResolvedModel m = p.view().m();
        boolean nullSequence = source.nullSequence();
        // the edited-history check of the state the replay builds on (its keys rolled back, the others as they were)
        // is counted by the counts query of its derivation, before its first write after the roll back
        BatchApplier applier = new BatchApplier(jdbc, dialect, m, p.view().tables(), store, p.introduced(), listener,
                runId, phase.lock()).beforeWriting(editedCheck(m));
        List<BatchApplier.Planned> planned = new ArrayList<>();
        List<Seq> replayed = new ArrayList<>();
        for (Seq s : batches) {
            MetadataStore.Entry entry = applied.get(s);
            planned.add(new BatchApplier.Planned(s, false, entry == null ? null : entry.deletionTime(), entry != null));
            if (entry != null) {
                replayed.add(s);
            }
        }
        ApplyStatements statements = applier.replayStatements(planned);
        jdbc.updateAll(statements.listBatches());
        jdbc.update(sql.stageSource(m, point.value(), nullSequence, StageScope.FRESH));
        List<Seq> fresh = new ArrayList<>(batches);
        fresh.removeAll(replayed);
        RunDiscovery.Staged staged = discovery.fingerprintStaged(m, source, fresh);
        logNullSequences(m, nullSequence);
        jdbc.updateAll(statements.prepare());
        jdbc.update(sql.stageSource(m, point.value(), false, StageScope.REPLAYED_KEYS));
        discovery.checkReplayedKeys(m, replayed, source, staged.recorded());
        jdbc.commit("stage");
        phase.lock().verifyHeld();
        boolean setAside = replayed.stream().anyMatch(s -> applied.get(s).counts().rejected() > 0);
        Rollback rollback = Rollback.keys(point.value(), setAside);
        superseded.copy(m, rollback, replayed); // before anything is forgotten or rolled back
        store.forgetEntries(replayed); // re-recorded with their new counts (see rollBack for the order)
        jdbc.updateAll(sql.rollback(m, rollback));
        List<BatchResult> results = applier.applyReplay(statements, planned, applied);
        if (setAside) {
            store.relogErrors(replayed.stream().filter(s -> applied.get(s).counts().rejected() > 0).toList(), runId,
                    LocalDateTime.now());
        }
        check(m, batches.first()); // before the commit: a violation rolls the writes back
        jdbc.commit("apply batches");
        for (BatchResult r : results) {
            listener.onEvent(new SnapshotEvent.BatchApplied(settings.name(), runId, r));
        }
        return results;
    }

    /**
     * Step 8: check the timeline of the keys touched by this run, before its writes are committed; a violation fails
     * the run ({@link EditedHistory#verifyAfterWriting}).
     */
    void check(ResolvedModel m, Seq first) {
        edited.verifyAfterWriting(m, first);
    }
}
