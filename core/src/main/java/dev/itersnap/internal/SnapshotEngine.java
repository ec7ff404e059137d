package dev.itersnap.internal;

import dev.itersnap.core.AdoptionPlan;
import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.core.LogicChange;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.RunPlan;
import dev.itersnap.core.RunResult;
import dev.itersnap.core.SnapshotEvent;
import dev.itersnap.core.SnapshotListener;
import dev.itersnap.core.ValidatedModel;
import dev.itersnap.internal.sql.SqlSteps;
import dev.itersnap.spi.Dialect;
import dev.itersnap.spi.ModelLock;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * Runs one model: opens the connection, makes sure the metadata exists, takes the model lock, and hands the run to
 * {@link SnapshotRun} (the run's steps); records the outcome in the run log and reports it to the listener.
 * Internal; use {@link dev.itersnap.IterativeSnapshot}.
 */
public final class SnapshotEngine {
    private final DataSource dataSource;
    private final Dialect dialect;
    private final SnapshotListener listener;
    private final ModelSettings settings;
    private LogicChange logicChange = LogicChange.ACCEPT;
    private Object rebuildFrom;

    public SnapshotEngine(DataSource dataSource, Dialect dialect, SnapshotListener listener, ModelSettings settings) {
        this.dataSource = dataSource;
        this.dialect = dialect;
        this.listener = new SafeListener(listener, settings.name());
        this.settings = settings;
    }

    public RunResult run(LogicChange logicChange) {
        this.logicChange = logicChange;
        return execute(SnapshotRun.Operation.RUN, null);
    }

    /** A run that compares every applied batch the source holds with its ledger fingerprint. */
    public RunResult runWithFullCheck(LogicChange logicChange) {
        this.logicChange = logicChange;
        return execute(SnapshotRun.Operation.FULL_CHECK, null);
    }

    public RunResult fullRefresh() {
        return execute(SnapshotRun.Operation.FULL_REFRESH, null);
    }

    public RunResult replayFrom(Object sequence) {
        return execute(SnapshotRun.Operation.REPLAY, sequence);
    }

    public RunResult adopt(Object through) {
        return execute(SnapshotRun.Operation.ADOPT, through);
    }

    /** An adoption that rebuilds the history from {@code from} on (see {@link SnapshotRun#rebuildFrom}). */
    public RunResult adoptRebuildingFrom(Object from) {
        this.rebuildFrom = from;
        return execute(SnapshotRun.Operation.ADOPT, null);
    }

    /**
     * The plan of a run of {@code operation} ({@code replayFrom}: a replay's point), decided by the run's own steps
     * ({@link SnapshotRun#decide}) without its lock and without writing: see {@link RunPlan}. A logic change a run
     * would refuse ({@code logicChange}) is refused here too.
     */
    public RunPlan plan(String operation, Object replayFrom, LogicChange logicChange) {
        SnapshotRun.Operation op = SnapshotRun.Operation.of(operation);
        if (op == SnapshotRun.Operation.ADOPT) {
            throw new IllegalArgumentException("no plan for an adoption");
        }
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(true);
            Jdbc jdbc = new Jdbc(c, settings.name(), dialect);
            dialect.prepareRunConnection(c);
            ResolvedModel pre = ModelResolver.resolveSource(jdbc, dialect, settings);
            MetadataStore store = new MetadataStore(jdbc, dialect, pre.metadata(), settings.name());
            MetadataStore.RunLogHead before = new MetadataStore.RunLogHead(null, null, null, false, 0);
            if (store.exists()) {
                store.readAll("", pre.target().toString());
                before = store.runLogHead("");
            } else {
                store.readNothing(); // no run got as far as the metadata: the first run starts from nothing
            }
            if (logicChange == LogicChange.REFUSE && op.keepsLogic()) {
                refuseLogicChange(before.lastLogic());
            }
            SnapshotRun run = new SnapshotRun(jdbc, dialect, event -> { }, settings, "plan", op, replayFrom,
                    previous(before), null, pre, store); // no lock: it only decides
            run.sweptThrough(before.checkedThrough());
            return run.plan(new MetadataInspection(dataSource, dialect, settings).lock());
        } catch (SQLException e) {
            throw new ItersnapException(ErrorCode.DATABASE_ERROR, "model '" + settings.name() + "': "
                    + Jdbc.firstLine(e.getMessage()) + Jdbc.sqlState(e), "plan", null, e);
        }
    }

    /**
     * What an adoption through {@code point} (or, {@code rebuilding}, from it) would do with the source's batches, read
     * from the source with the run's own steps (the point typed as {@link RunAdoption#adopt} types it, the sequences
     * discovered as a run discovers them) without writing: see {@link AdoptionPlan}.
     */
    public AdoptionPlan planAdoption(Object point, boolean rebuilding) {
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(true);
            Jdbc jdbc = new Jdbc(c, settings.name(), dialect);
            dialect.prepareRunConnection(c);
            ResolvedModel m = ModelResolver.resolveSource(jdbc, dialect, settings);
            Seq at = RunAdoption.point(m, point, rebuilding);
            TreeSet<Seq> source = new TreeSet<>();
            jdbc.query(SqlSteps.of(dialect).discoverSequences(m), rs -> {
                Object v = m.sequenceType().read(rs, 1);
                if (v != null) {
                    source.add(Seq.of(m, v));
                }
                return null;
            });
            SortedSet<Seq> batches = rebuilding ? source.tailSet(at) : RunAdoption.declared(source, at);
            return new AdoptionPlan(settings.name(), at.shown(), rebuilding,
                    batches.stream().map(Seq::shown).toList());
        } catch (SQLException e) {
            throw new ItersnapException(ErrorCode.DATABASE_ERROR, "model '" + settings.name() + "': "
                    + Jdbc.firstLine(e.getMessage()) + Jdbc.sqlState(e), "plan", null, e);
        }
    }

    /**
     * Resolves the model against the source (columns, types, delete_when, identifier limits) and returns what a caller
     * shows of it; writes nothing.
     */
    public ValidatedModel validate() {
        ResolvedModel m;
        try (Connection c = dataSource.getConnection()) {
            m = ModelResolver.resolveSource(new Jdbc(c, settings.name(), dialect), dialect, settings);
        } catch (SQLException e) {
            throw cannotConnect(e);
        }
        // the source query's own columns: a sequence_by list's key column is the engine's
        return new ValidatedModel(m.name(), m.keys(), m.updatedAt(), m.sequenceParts(), m.sequenceParts().stream()
                .map(p -> m.sourceColumn(p).valueType().name().toLowerCase(java.util.Locale.ROOT).replace('_', ' '))
                .toList(), m.tracked(), m.sourceColumns().stream()
                .filter(col -> m.sequenceKey() == null || !col.name().equals(m.sequenceBy()))
                .map(col -> new ValidatedModel.Column(col.name(), col.typeName())).toList());
    }

    private RunResult execute(SnapshotRun.Operation operation, Object replayFrom) {
        long start = System.nanoTime();
        String runId = UUID.randomUUID().toString();
        MetadataStore log = null;
        boolean started = false;
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(true);
            Jdbc jdbc = new Jdbc(c, settings.name(), dialect);
            try {
                dialect.prepareRunConnection(c); // e.g. the session time zone, before anything is read or written
                // the source once, before the lock; the history and archive under it (SnapshotRun). A run that
                // decides before the lock reads its metadata and describes the source in one statement
                java.util.function.UnaryOperator<String> fold = Jdbc.folding(c, dialect);
                MetadataStore store = new MetadataStore(jdbc, dialect, ResolvedModel.metadataOf(settings, fold),
                        settings.name());
                boolean readsFirst = operation.keepsLogic() && rebuildFrom == null;
                List<dev.itersnap.spi.SourceColumn> described = !readsFirst ? null : store.readAllDescribing(runId,
                        ResolvedModel.targetOf(settings, fold).toString(),
                        ModelResolver.describeSource(dialect, settings));
                ResolvedModel pre = ModelResolver.resolveSource(jdbc, dialect, settings, described);
                LocalDateTime decidedFrom = LocalDateTime.now();
                log = store; // a failure from here on is recorded (best effort: the tables may not exist yet)
                Early early = decideBeforeLock(jdbc, store, pre, runId, operation);
                if (early != null && early.result() != null) {
                    // nothing to write: no lock, one complete row in the run log
                    store.ranWithoutWriting(runId, operation.label(), settings.logic(), decidedFrom,
                            early.run().checkedThrough());
                    started = true;
                    listener.onEvent(new SnapshotEvent.RunStarted(settings.name(), runId, operation.label()));
                    early.events().release();
                    RunResult result = withDuration(early.result(), start);
                    listener.onEvent(new SnapshotEvent.RunFinished(settings.name(), runId, result));
                    return result;
                }
                try (ModelLock lock = LockAcquisition.take(dialect, dataSource, pre, settings.lockTimeout(), runId,
                        store::describeRunning, listener)) {
                    // every write and commit under the lock is fenced: a run that lost its lease stops before it
                    jdbc.fence(lock::verifyHeld);
                    try {
                        // without transactional DML every statement is its own commit; crash safety comes from the
                        // ledger (recovery) and the pending table instead
                        c.setAutoCommit(!dialect.capabilities().transactionalDml());
                        // a run that decided before the lock adds its row only if the run log is as it saw it
                        LocalDateTime startedAt = early == null ? null : store.startedIfUnchanged(runId,
                                operation.label(), settings.logic(), early.head());
                        boolean unchanged = startedAt != null;
                        if (startedAt == null) {
                            startedAt = store.started(runId, operation.label(), settings.logic());
                        }
                        started = true;
                        listener.onEvent(new SnapshotEvent.RunStarted(settings.name(), runId, operation.label()));
                        SnapshotRun run;
                        RunResult result;
                        MetadataStore.RunLogHead before;
                        if (early != null && (unchanged || store.unchangedSince(runId, early.head()))) {
                            // no run started or ended since the run decided: what it read and decided holds
                            before = early.head();
                            early.events().release();
                            run = early.run();
                            run.holding(lock);
                            result = run.applyDecided(early.decided());
                        } else {
                            if (early != null) {
                                early.events().discard(); // decided again, under the lock
                            }
                            store.readAll(runId, pre.target().toString()); // what the steps read first, in one read
                            before = store.runLogHead(runId);
                            if (logicChange == LogicChange.REFUSE) {
                                refuseLogicChange(before.lastLogic());
                            }
                            run = new SnapshotRun(jdbc, dialect, listener, settings, runId, operation,
                                    replayFrom, previous(before), lock, pre, store);
                            run.sweptThrough(before.checkedThrough());
                            if (rebuildFrom != null) {
                                run.rebuildFrom(rebuildFrom);
                            }
                            result = run.execute();
                        }
                        result = withDuration(result, start);
                        if (before.unfinished()) {
                            // the runs this one found dead (whatever ran between them and this one, a run that failed
                            // on the lock for instance): committed with this run's end
                            store.closeUnfinished(runId, startedAt);
                        }
                        store.finished(runId, "success", result.batchesApplied(), result.lateBatchFound(),
                                run.replayPointText(), null, run.checkedThrough());
                        listener.onEvent(new SnapshotEvent.RunFinished(settings.name(), runId, result));
                        return result;
                    } catch (ItersnapException e) {
                        throw lostLeaseFirst(lock, e);
                    } finally {
                        jdbc.fence(null); // the failure record is written after the lock is released
                    }
                }
            } catch (RuntimeException | SQLException e) {
                jdbc.rollbackQuietly();
                ItersnapException error = wrap(e);
                recordFailure(log, runId, operation, started, error);
                listener.onEvent(new SnapshotEvent.RunFailed(settings.name(), runId, error,
                        Duration.ofNanos(System.nanoTime() - start)));
                throw error;
            }
        } catch (SQLException e) {
            ItersnapException error = cannotConnect(e);
            listener.onEvent(new SnapshotEvent.RunFailed(settings.name(), runId, error,
                    Duration.ofNanos(System.nanoTime() - start)));
            throw error;
        }
    }

    /**
     * What a run decided before taking its lock: the run (still only deciding), its decision, the run log's head it
     * read, the events it held back, and its result when it writes nothing at all (null: it takes the lock).
     */
    private record Early(SnapshotRun run, SnapshotRun.Decided decided, MetadataStore.RunLogHead head, Held events,
                         RunResult result) {
    }

    /**
     * A run ({@code run} or a full check, not a rebuild) decides before it takes the lock when the run log says there
     * is nothing to recover (the last run succeeded, none is shown running): from the metadata its first read read
     * ({@link MetadataStore#readAllDescribing}) it decides with its own steps without writing, as a plan does. When it
     * would write nothing (the everyday run with nothing new) it takes no lock and writes one row; otherwise it takes
     * the lock and, when no run started or ended meanwhile ({@link MetadataStore#startedIfUnchanged}, or
     * {@link MetadataStore#unchangedSince}), goes on from its decision without reading again. Null when the run takes the lock first (a rebuild, a
     * run after a failure, a model whose metadata tables do not exist yet, or a decision that failed: the run decides
     * again under the lock, where a refusal is final and a concurrent rebuild cannot be what it saw).
     */
    private Early decideBeforeLock(Jdbc jdbc, MetadataStore store, ResolvedModel pre, String runId,
                                   SnapshotRun.Operation operation) {
        if (!store.readValid()) {
            // a rebuild, which reads nothing first; or the first read (with the source's description) failed while
            // the source alone is described: the metadata tables do not exist yet (the read under the lock reports
            // any other cause)
            store.create();
            return null;
        }
        MetadataStore.RunLogHead head = store.runLogHead(runId);
        if (!head.settled()) {
            return null;
        }
        if (logicChange == LogicChange.REFUSE) {
            refuseLogicChange(head.lastLogic());
        }
        Held events = new Held(listener);
        try {
            SnapshotRun run = new SnapshotRun(jdbc, dialect, events, settings, runId, operation, null,
                    head.previousStatus(), null, pre, store); // no lock yet: it decides
            run.sweptThrough(head.checkedThrough());
            SnapshotRun.Decided decided = run.decide();
            return new Early(run, decided, head, events, run.withoutWriting(decided));
        } catch (ItersnapException e) {
            jdbc.rollbackQuietly();
            return null;
        }
    }

    /** {@code result} with the whole run's duration, from {@code start}. */
    private static RunResult withDuration(RunResult result, long start) {
        return new RunResult(result.runId(), result.model(), result.batches(), result.lateBatchFound(),
                result.replayPoint(), result.timelineViolations(), Duration.ofNanos(System.nanoTime() - start));
    }

    /**
     * The status a run's steps take as the previous run's: "running" while any run is shown running (under the lock:
     * dead), whatever ran after it (a run that failed on the lock, one that found nothing to write), so that the
     * checks after a dead run are made; otherwise the latest run's.
     */
    private static String previous(MetadataStore.RunLogHead head) {
        return head.unfinished() ? "running" : head.previousStatus();
    }

    /**
     * A listener that holds a deciding run's events until the run knows it goes on ({@link #release}: they follow
     * its {@code RunStarted}) or decides again under the lock ({@link #discard}: the second decision reports them).
     */
    private static final class Held implements SnapshotListener {
        private final SnapshotListener target;
        private final List<SnapshotEvent> held = new ArrayList<>();
        private boolean released;
        private boolean discarded;

        Held(SnapshotListener target) {
            this.target = target;
        }

        @Override
        public void onEvent(SnapshotEvent event) {
            if (released) {
                target.onEvent(event);
            } else if (!discarded) {
                held.add(event);
            }
        }

        void release() {
            released = true;
            held.forEach(target::onEvent);
            held.clear();
        }

        void discard() {
            discarded = true;
            held.clear();
        }
    }

    /**
     * A run's failure, or the loss of its lease when it lost it: what a run read after its lease lapsed may mix what it
     * read before with another holder's writes since (its writes are fenced, its reads are not), so a check that
     * failed on such reads (an owner, an edited history) says nothing about the model, and the loss is the failure.
     */
    private static ItersnapException lostLeaseFirst(ModelLock lock, ItersnapException failure) {
        if (failure.code() == ErrorCode.LOCK_TIMEOUT) {
            return failure;
        }
        try {
            lock.verifyHeld();
        } catch (ItersnapException lost) {
            if (lost.code() == ErrorCode.LOCK_TIMEOUT) {
                lost.addSuppressed(failure);
                return lost;
            }
        } catch (RuntimeException unknown) {
            failure.addSuppressed(unknown); // whether the lease is held cannot be told: the failure stands
        }
        return failure;
    }

    /**
     * Stops the run when the model's logic differs from the last successful run's (replays and full refreshes
     * rebuild with the new logic on purpose, so they never get here).
     */
    private void refuseLogicChange(MetadataStore.LoggedLogic last) {
        String now = settings.logic();
        if (last == null || last.logic().equals(now)) {
            return;
        }
        Map<String, String> before = logicLines(last.logic());
        List<String> changes = new ArrayList<>();
        String targetWas = null;
        for (Map.Entry<String, String> e : logicLines(now).entrySet()) {
            String old = before.get(e.getKey());
            if (old == null || !old.equals(e.getValue())) {
                changes.add(e.getKey() + " was " + (old == null ? "not recorded" : "'" + old + "'") + ", now '"
                        + e.getValue() + "'");
                if (e.getKey().equals("target")) {
                    targetWas = old;
                }
            }
        }
        if (changes.isEmpty()) {
            return;
        }
        String ways = targetWas != null
                ? "The history of this model is " + targetWas + ". Either set target back to it, or build the new "
                        + "table from the batches the source holds (full-refresh --yes, IterativeSnapshot.fullRefresh; "
                        + targetWas + " is left as it is)"
                : "Either rebuild with the new logic from a batch on (replay --from SEQ, IterativeSnapshot.replayFrom), "
                        + "or keep the history and use the new logic from now on (run --accept-logic-change, "
                        + "LogicChange.ACCEPT)";
        throw new ItersnapException(ErrorCode.LOGIC_CHANGE, "model '" + settings.name() + "': its logic changed "
                + "since the last successful run (" + last.runId() + " at " + last.startedAt() + "): " + String.join("; ", changes)
                + ". Nothing was written. " + ways);
    }

    /** A logic fingerprint's lines by key. */
    private static Map<String, String> logicLines(String logic) {
        Map<String, String> out = new LinkedHashMap<>();
        for (String line : logic.split("\n")) {
            int colon = line.indexOf(':');
            if (colon > 0) {
                out.put(line.substring(0, colon), line.substring(colon + 1).strip());
            }
        }
        return out;
    }

    /**
     * Records a failed run in the run log (best effort): updates the run's row, or, for a run that failed before it
     * held the lock (for example a lock timeout), adds one.
     */
    private void recordFailure(MetadataStore log, String runId, SnapshotRun.Operation operation, boolean started,
                               ItersnapException error) {
        if (log == null) {
            return; // the metadata tables may not exist: nothing to record in
        }
        try {
            if (!started) {
                log.started(runId, operation.label(), settings.logic());
            }
            log.finished(runId, "failed", 0, false, null, error.getMessage());
        } catch (RuntimeException ignored) {
            // the run's own failure is what matters; a stale 'running' row triggers recovery next time
        }
    }

    private ItersnapException wrap(Exception e) {
        if (e instanceof ItersnapException ie) {
            return ie;
        }
        if (e instanceof SQLException se) {
            String damaged = dialect.damagedStorage(se, null);
            if (damaged != null) {
                return new ItersnapException(ErrorCode.DATABASE_ERROR, "model '" + settings.name() + "': " + damaged,
                        "lock", null, se);
            }
            return new ItersnapException(ErrorCode.DATABASE_ERROR, "model '" + settings.name() + "': "
                    + Jdbc.firstLine(se.getMessage()) + Jdbc.sqlState(se), "lock", null, se);
        }
        return new ItersnapException(ErrorCode.DATABASE_ERROR, "model '" + settings.name() + "': unexpected failure: "
                + e, e);
    }

    /** A connection the database would not give: its damaged storage when the dialect says so (decision 0007). */
    private ItersnapException cannotConnect(SQLException e) {
        String damaged = dialect.damagedStorage(e, null);
        return new ItersnapException(ErrorCode.DATABASE_ERROR, "model '" + settings.name() + "': cannot connect: "
                + (damaged != null ? damaged : Jdbc.firstLine(e.getMessage()) + Jdbc.sqlState(e)),
                "connect", null, e);
    }

    /** Shields the run from listeners that throw. */
    private record SafeListener(SnapshotListener delegate, String model) implements SnapshotListener {
        @Override
        public void onEvent(SnapshotEvent event) {
            try {
                delegate.onEvent(event);
            } catch (RuntimeException e) {
                org.slf4j.LoggerFactory.getLogger("dev.itersnap").warn("[{}] listener failed on {}: {}", model,
                        event.getClass().getSimpleName(), e.toString());
            }
        }
    }
}
