package dev.itersnap.internal;

import dev.itersnap.internal.sql.RejectReason;
import dev.itersnap.internal.sql.SqlSteps;
import dev.itersnap.core.BatchResult;
import dev.itersnap.core.ColumnNames;
import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.Restatements;
import dev.itersnap.core.RunResult;
import dev.itersnap.core.SnapshotEvent;
import dev.itersnap.core.SnapshotListener;
import dev.itersnap.core.TableName;
import dev.itersnap.spi.Dialect;
import dev.itersnap.spi.ModelLock;
import dev.itersnap.spi.ModelTables;
import dev.itersnap.spi.ResolvedModel;
import dev.itersnap.internal.sql.Rollback;
import dev.itersnap.spi.SourceColumn;
import dev.itersnap.spi.StageScope;
import dev.itersnap.spi.TableSpec;
import dev.itersnap.spi.ValueType;

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
 * One run of one model under its lock, step by step: resolve, recover, discover, detect, prepare, stage, roll back,
 * apply, check. Every statement comes from the dialect, the model's tables or the metadata store. Single use.
 */
final class SnapshotRun {
    enum Operation {
        RUN("run"), FULL_CHECK("full_check"), FULL_REFRESH("full_refresh"), REPLAY("replay"), ADOPT("adopt");

        private final String label;

        Operation(String label) {
            this.label = label;
        }

        String label() {
            return label;
        }
    }

    /**
     * The sequences in the source and whether some rows have none; the rows and fingerprints (with {@code
     * restatements: detect}, when the dialect hashes) of the applied batches this run compares ({@link #compare}),
     * and no others: a run reads and hashes only what it applies or checks.
     */
    private record Discovery(TreeSet<Seq> sequences, boolean nullSequence, Map<Seq, Long> rows,
                             Map<Seq, String> fingerprints) {
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
    /** True when the source has every column the model knows, none new, none back (set by prepare). */
    private boolean sourceColumnsStable;
    private ModelTables tables;
    private final MetadataStore store;
    private final boolean transactional;
    private final ModelLock lock;
    private Seq replayPoint;
    /** An adoption's point, once adopted. */
    private Seq adopted;
    /** With an adoption: the batch to rebuild the history from (the oldest the source holds), or null. */
    private Object rebuildFrom;
    /** The columns and signature of this run's fingerprints; null with {@code restatements: ignore}. */
    private Fingerprints prints;
    /** Applied batches whose fingerprint in the source differs from the ledger's (restated), in business order. */
    private final TreeMap<Seq, MetadataStore.Entry> restated = new TreeMap<>();
    /** The fingerprints the run records for the batches it applies (set by {@link #fingerprintStaged}). */
    private Map<Seq, String> recorded;
    /** The most sequences one statement binds to name batches (beyond: a range, or every batch). */
    private static final int MAX_BOUND_SEQUENCES = 500;
    /** The batch the restatement sweep of the last run that swept stopped at (its text), or null. */
    private String sweptThrough;
    /** The batch this run's sweep stopped at (its text), or null when it swept nothing. */
    private String checkedThrough;

    SnapshotRun(Jdbc jdbc, Dialect dialect, SnapshotListener listener, ModelSettings settings, String runId,
                Operation operation, Object replayFrom, String previousStatus, ModelLock lock, ResolvedModel sourceModel,
                MetadataStore store) {
        this.lock = lock;
        this.store = store;
        this.transactional = dialect.capabilities().transactionalDml();
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

    /** Runs the steps; the result's duration is zero, the caller measures the whole run. */
    RunResult execute() {
        if (operation == Operation.ADOPT) {
            RunResult adoption = adopt();
            if (rebuildFrom == null) {
                return adoption;
            }
            // the versions from the rebuild point on are gone: apply the source's batches from there, in order
            replayPoint = null;
            return applyNew();
        }
        return applyNew();
    }

    /** The steps of a run, rebuild or replay. */
    private RunResult applyNew() {
        resolve();
        own();
        recover();
        TreeMap<Seq, MetadataStore.Entry> applied = store.ledger(m);
        Discovery source = discover();
        TreeSet<Seq> fresh = new TreeSet<>(source.sequences());
        fresh.addAll(pending.keySet()); // aged-out batches a failed replay saved before rolling them back
        fresh.removeAll(applied.keySet());
        compare(applied, source, fresh);
        Seq lostFrom = checkLedger(applied, fresh);
        if (targetColumns != null && "running".equals(previousStatus)) { // verify what a dead run recorded
            Seq unapplied = UnfinishedRunCheck.verify(jdbc, dialect, m, runId, listener, applied);
            lostFrom = lostFrom == null || unapplied != null && unapplied.compareTo(lostFrom) < 0 ? unapplied : lostFrom;
        }
        boolean late = detect(fresh, applied, source, lostFrom);
        refuseBelowAdoption(fresh, applied); // before anything is written
        forgetRowsLoggedWithoutEntry(fresh);
        TreeSet<Seq> batches = new TreeSet<>(fresh);
        if (replayPoint != null) {
            batches.addAll(applied.tailMap(replayPoint, true).keySet());
        }
        warnAboutGrownBatches(applied, source, batches);
        Map<Seq, String> unrecorded = unrecordedFingerprints(applied, source, batches);
        if (batches.isEmpty()) {
            replayPoint = null;
            if (!applied.isEmpty()) {
                noteColumnsGone();
            }
            recordFingerprints(unrecorded);
            if (pendingUsed) {
                // a rerun of a replay that failed after recording its batches: what the pending table kept for it
                // is in the ledger now
                jdbc.update(tables.clear(m.pending()).inStep("clear pending batches"));
                jdbc.commit("clear pending batches");
            }
            return new RunResult(runId, settings.name(), List.of(), false, null, 0, Duration.ZERO);
        }
        Seq first = batches.first();
        lock.verifyHeld();
        Map<String, Seq> introduced = prepare(first, applied.isEmpty());
        List<Seq> reproduced = new ArrayList<>();
        for (Seq s : batches) {
            if (!source.sequences().contains(s)) {
                reproduced.add(s);
            }
        }
        List<BatchResult> results;
        if (keyScoped(late, reproduced, introduced, applied, source)) {
            results = replayByKey(batches, applied, source, introduced);
        } else {
            stage(first, source.nullSequence(), reproduced, introduced, applied);
            List<Seq> fromSource = new ArrayList<>(batches);
            fromSource.removeAll(reproduced);
            for (Seq gone : fingerprintStaged(source, fromSource)) {
                if (!applied.containsKey(gone)) {
                    // discovered, but its rows left the source before they were staged (a loader replacing the
                    // file): not applied, so the run that finds it again applies it
                    batches.remove(gone);
                }
            }
            if (replayPoint != null) {
                rollBack(applied, introduced);
            }
            results = batches.isEmpty() ? List.of() : apply(batches, reproduced, applied, introduced);
        }
        long violations = check(first);
        recordFingerprints(unrecorded);
        return new RunResult(runId, settings.name(), results, late, replayPoint == null ? null : replayPoint.shown(),
                violations, Duration.ZERO);
    }

    // ---------------------------------------------------------------- steps

    private void resolve() {
        try {
            ModelResolver.Resolution r = ModelResolver.withTables(jdbc, dialect, sourceModel);
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
        if (targetColumns != null) {
            for (String part : m.sequenceParts()) {
                SourceColumn history = column(targetColumns, part);
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
        tables = new ModelTables(dialect, m);
    }

    /**
     * Step 1b: the history table and this metadata schema must belong together, checked before anything is written.
     * A target owned by another model (the owners table here, or the comment the table carries), by this model under
     * another metadata schema, or by no model (history that no ledger here records) is refused; so is a run whose
     * model owns another table, and a missing or emptied history whose ledger records inserted rows. A full refresh
     * into a new or empty table starts the model over there. A target that no row records yet is registered.
     */
    private void own() {
        if (targetColumns != null) {
            requireBookkeeping(); // not a history table at all: a setting points at the wrong table
        }
        String key = m.target().toString();
        String schemaName = m.metadataSchema();
        boolean exists = targetColumns != null;
        String[] owners = store.owners(key);
        String rowOwner = owners[0];
        if (rowOwner != null && !rowOwner.equals(settings.name())) {
            throw notOwned("target " + key + " belongs to model '" + rowOwner + "' (metadata schema " + schemaName
                    + "); two models cannot share a history table. Point target at a table of its own (a new one is "
                    + "built by the next run, or by full-refresh --yes)");
        }
        String[] mark;
        try {
            mark = exists ? ModelTables.parseOwnerComment(jdbc.tableComment(m.target())) : null;
        } catch (SQLException e) {
            throw jdbc.failure("check owner", null, e);
        }
        if (mark != null && !(mark[0].equals(settings.name()) && mark[1].equalsIgnoreCase(schemaName))) {
            throw notOwned(mark[0].equals(settings.name())
                    ? "target " + key + " is the history of this model under metadata schema " + mark[1] + ", not "
                            + schemaName + ", whose ledger does not hold it. Set metadata_schema back to " + mark[1]
                            + ", or point target at a new table and run full-refresh --yes (it rebuilds from the "
                            + "batches the source holds)"
                    : "target " + key + " belongs to model '" + mark[0] + "' (metadata schema " + mark[1] + "); two "
                            + "models cannot share a history table. Point target at a table of its own (a new one is "
                            + "built by the next run, or by full-refresh --yes)");
        }
        String mine = owners[1];
        boolean hasRows = exists && !jdbc.queryFirst(tables.anyHistoryRow(), rs -> 1).isEmpty();
        long[] ledger = store.ledgerSize();
        if (mine != null && !mine.equals(key)) {
            if (operation == Operation.FULL_REFRESH && !hasRows) {
                startOver(key, exists);
                return;
            }
            throw notOwned("the history of this model is " + mine + " (metadata schema " + schemaName + "); its target"
                    + " is now " + key + ", which it does not own. Set target back to " + mine + ", or build " + key
                    + " from the batches the source holds with full-refresh --yes (" + mine + " is left as it is)");
        }
        if (!hasRows && ledger[1] > 0) {
            if (operation == Operation.FULL_REFRESH) {
                startOver(key, exists);
                return;
            }
            throw notOwned("target " + key + " is " + (exists ? "empty" : "missing") + ", but the ledger in metadata "
                    + "schema " + schemaName + " records " + ledger[0] + " applied batches that inserted " + ledger[1]
                    + " versions into it. Nothing was written. full-refresh --yes rebuilds it from the batches the "
                    + "source holds (batches no longer in the source are lost with the old table)");
        }
        if (hasRows && ledger[0] == 0 && mine == null) {
            throw notOwned(mark != null
                    ? "target " + key + " was built by this model in metadata schema " + schemaName + ", whose ledger "
                            + "no longer holds it (the metadata was dropped or recreated); applying batches over it "
                            + "would apply them twice. Point target at a new table and run full-refresh --yes (it "
                            + "rebuilds from the batches the source holds), or drop " + key + " if its history is not "
                            + "needed"
                    : "target " + key + " holds history that no ledger in metadata schema " + schemaName + " records "
                            + "(built by another model, under another metadata_schema, or before its metadata was "
                            + "dropped); applying batches over it would apply them twice. Point target at a new table "
                            + "and run full-refresh --yes (it rebuilds from the batches the source holds), or drop "
                            + key + " if its history is not needed");
        }
        if (mine == null) {
            store.own(key, runId);
            if (exists && mark == null) {
                jdbc.update(tables.markOwner()); // a history built before owners were recorded
            }
            jdbc.commit("register owner");
        }
        String current = settings.validToCurrent();
        if (exists && !java.util.Objects.equals(mark == null ? null : mark[2], current)) {
            // valid_to_current set, changed or removed: the open versions carry the new value from this run on
            jdbc.update(SqlSteps.of(dialect).markOpenVersions(m).inStep("mark open versions"));
            jdbc.update(tables.markOwner());
            jdbc.commit("mark open versions");
        }
    }

    /** A full refresh into a new or empty history table: the model forgets its batches and starts over there. */
    private void startOver(String key, boolean exists) {
        store.forgetAll();
        if (archiveColumns != null) {
            jdbc.update(tables.clear(m.archive()));
        }
        if (pendingColumns != null) {
            jdbc.update(tables.clear(m.pending()));
        }
        store.own(key, runId);
        if (exists) {
            jdbc.update(tables.markOwner());
        }
        jdbc.commit("start over");
    }

    // ---------------------------------------------------------------- adoption

    /**
     * The point an adopted history was taken over through, while it holds: the latest {@code adopt} run (whatever its
     * status) whose ledger entry for that sequence is still the one it wrote (a full refresh that starts over forgets
     * it).
     */
    private Seq adoptionPoint(TreeMap<Seq, MetadataStore.Entry> applied) {
        String[] adoption = store.adoption();
        if (adoption == null) {
            return null;
        }
        Seq point = Seq.parse(m, adoption[1]);
        MetadataStore.Entry e = applied.get(point);
        return e != null && adoption[0].equals(e.runId()) ? point : null;
    }

    /**
     * A history adopted through a sequence holds versions no batch in the source reproduces: a batch at or before
     * that point that was not there when it was adopted, or a replay reaching back to it (a restated adopted batch,
     * replay --from, full refresh), would mix new rows into versions of unknown origin. Refused before anything is
     * written, naming the way forward.
     */
    private void refuseBelowAdoption(TreeSet<Seq> fresh, TreeMap<Seq, MetadataStore.Entry> applied) {
        if (replayPoint == null) {
            return; // nothing late, restated or replayed: nothing can reach the adopted range (no extra read)
        }
        Seq point = adoptionPoint(applied);
        if (point == null) {
            return;
        }
        SortedSetView below = new SortedSetView(fresh.headSet(point, true));
        String why;
        if (!below.isEmpty()) {
            why = (below.size() == 1 ? "batch " + below.first() + " arrived" : below.size() + " batches arrived ("
                    + below.list() + ")") + " after the history was adopted through " + point + ", at or before it";
        } else if (replayPoint != null && replayPoint.compareTo(point) <= 0) {
            why = restated.containsKey(replayPoint)
                    ? "batch " + replayPoint + " changed in the source (restated) after the history was adopted "
                            + "through " + point + ", at or before that point"
                    : "the " + operation.label().replace('_', ' ') + " would replay from " + replayPoint
                            + ", but the history was adopted through " + point;
        } else {
            return;
        }
        throw new ItersnapException(ErrorCode.LATE_BEFORE_ADOPTION, "model '" + settings.name() + "': " + why
                + "; the versions up to there came from the adopted table, not from batches itersnap applied, so it "
                + "cannot be replayed into them. Nothing was written. Either remove or correct it in the source so "
                + "that the batches up to " + point + " are as they were when adopted, move it after " + point
                + ", or rebuild the history from the batches the source holds into a new target (full-refresh --yes "
                + "with a new target; the adopted versions are left in " + m.target() + ")");
    }

    /** A few sequences for a message. */
    private record SortedSetView(java.util.SortedSet<Seq> set) {
        boolean isEmpty() {
            return set.isEmpty();
        }

        int size() {
            return set.size();
        }

        Seq first() {
            return set.first();
        }

        String list() {
            List<String> texts = set.stream().limit(5).map(Seq::text).toList();
            return String.join(", ", texts) + (set.size() > 5 ? ", ..." : "");
        }
    }

    /**
     * Takes over an existing SCD Type 2 table (a dbt snapshot, or any with the model's meta column names) as the
     * model's history through a sequence: the batches of the source up to it are declared applied (ledger entries
     * with their rows and fingerprints, the table's versions counted on the last), the versions are kept as they are,
     * the bookkeeping columns the table lacks are added and filled (every version opened, and every closed one
     * closed, at the adoption point, so that no roll back reaches them), the columns registered and the table owned.
     * The run log records the adoption point (its replay point), which later runs hold late batches against.
     */
    private RunResult adopt() {
        resolve();
        String key = m.target().toString();
        if (targetColumns == null) {
            throw new ItersnapException(ErrorCode.INVALID_SETTING, "model '" + settings.name() + "': target " + key
                    + " does not exist; adopt takes over an existing SCD Type 2 table (run builds a new one)");
        }
        Object asked = rebuildFrom != null ? rebuildFrom : replayFrom;
        Seq through;
        try {
            through = Seq.coerce(m, asked);
        } catch (IllegalArgumentException e) {
            throw new ItersnapException(ErrorCode.INVALID_SEQUENCE, "model '" + settings.name() + "': cannot adopt "
                    + (rebuildFrom != null ? "rebuilding from " : "through ") + asked + ": " + e.getMessage()
                    + " (" + m.sequenceDescription() + ")");
        }
        Seq rebuildPoint = null;
        Object cut = null;
        if (rebuildFrom != null) {
            rebuildPoint = through;
            cut = cutTime(rebuildPoint);
        }
        String[] mark;
        try {
            mark = ModelTables.parseOwnerComment(jdbc.tableComment(m.target()));
        } catch (SQLException e) {
            throw jdbc.failure("check owner", null, e);
        }
        String[] owners = store.owners(key);
        String rowOwner = owners[0];
        String mine = owners[1];
        long[] ledger = store.ledgerSize();
        if (rowOwner != null || mark != null) {
            String owner = rowOwner != null ? rowOwner : mark[0];
            throw notOwned("target " + key + " is already an itersnap history (model '" + owner + "'"
                    + (mark != null ? ", metadata schema " + mark[1] : "") + "); adopt takes over a table no itersnap "
                    + "ledger keeps. Nothing was written");
        }
        if (mine != null || ledger[0] > 0) {
            throw notOwned("this model already has a history" + (mine != null ? " (" + mine + ")" : "") + " with "
                    + ledger[0] + " batches in its ledger in metadata schema " + m.metadataSchema() + "; adopt takes "
                    + "over a table for a model that has none. Nothing was written");
        }
        ColumnNames n = m.meta();
        List<String> required = new ArrayList<>(m.keys());
        required.addAll(List.of(n.updatedAt(), n.validFrom(), n.validTo()));
        for (String c : required) {
            if (column(targetColumns, c) == null) {
                throw new ItersnapException(ErrorCode.INVALID_SETTING, "model '" + settings.name() + "': target "
                        + key + " has no column '" + c + "'; adopt needs the keys and the validity columns under the "
                        + "model's names (column_names maps other names). Its columns: "
                        + targetColumns.stream().map(SourceColumn::name).toList());
            }
        }
        Discovery source = discover();
        readFingerprints(source, null); // an adoption records every batch it declares applied, with its rows and fingerprint
        if (rebuildPoint == null) {
            checkAdoptionPoint(through, source);
        }
        if (rebuildPoint != null) {
            // the adoption point: the last batch before the rebuild point the source holds, else the sequence just
            // before it (a ledger entry with no rows that marks where the kept versions end)
            java.util.SortedSet<Seq> before = source.sequences().headSet(rebuildPoint);
            through = before.isEmpty() ? predecessor(rebuildPoint) : before.last();
        }
        lock.verifyHeld();
        // bookkeeping columns (DDL first, committed on its own)
        Map<String, TableSpec.ColumnType> bookkeeping = new LinkedHashMap<>();
        bookkeeping.put(n.scdId(), TableSpec.ColumnType.text(64));
        bookkeeping.put(n.changeType(), TableSpec.ColumnType.text(16));
        bookkeeping.put(n.changedAttributes(), TableSpec.ColumnType.json());
        if (m.deletionRecords()) {
            bookkeeping.put(n.isDeleted(), TableSpec.ColumnType.bool());
        }
        bookkeeping.put(n.openedSeq(), TableSpec.ColumnType.like(m.sequenceColumn()));
        bookkeeping.put(n.closedSeq(), TableSpec.ColumnType.like(m.sequenceColumn()));
        SourceColumn flag = m.deletionRecords() ? column(targetColumns, n.isDeleted()) : null;
        if (flag != null && flag.jdbcType() != java.sql.Types.BOOLEAN && flag.jdbcType() != java.sql.Types.BIT) {
            throw new ItersnapException(ErrorCode.INVALID_SETTING, "model '" + settings.name() + "': target " + key
                    + " has column '" + flag.name() + "' of type " + flag.typeName() + "; itersnap keeps the deletion "
                    + "flag as a BOOLEAN (dbt writes the text 'True' / 'False'). Convert the column to BOOLEAN first, "
                    + "then adopt. Nothing was written");
        }
        List<String> added = new ArrayList<>();
        bookkeeping.forEach((c, type) -> {
            if (column(targetColumns, c) == null) {
                jdbc.update(SqlSteps.of(dialect).primitives().addColumn(m.target(), c, type).inStep("adopt"));
                added.add(c);
            }
        });
        jdbc.commit("adopt: add bookkeeping columns");
        String validToType = settings.validToCurrent() == null ? null
                : dialect.columnType(column(targetColumns, n.validTo()));
        tables.adoptVersions(through.value(), cut, validToType, m.deletionRecords())
                .forEach(st -> jdbc.update(st.inStep("adopt")));
        if (settings.validToCurrent() != null) {
            jdbc.update(SqlSteps.of(dialect).markOpenVersions(m).inStep("adopt"));
        }
        long versions = jdbc.query(tables.countHistory().inStep("adopt"),
                rs -> rs.getLong(1)).get(0);
        // the ledger: every batch of the source up to the adoption point, and the point itself
        TreeSet<Seq> declared = new TreeSet<>(source.sequences().headSet(through, true));
        declared.add(through);
        Map<Seq, String> fingerprints = new java.util.HashMap<>(source.fingerprints());
        if (!source.sequences().contains(through) && prints != null) {
            // the point is no batch of the source: recorded as an empty batch whose hash no content has, so that
            // rows arriving for it later are a restatement, refused below the adoption point, not taken as applied
            fingerprints.put(through, prints.of(0, java.math.BigDecimal.valueOf(-1)));
        }
        List<Seq> seqs = new ArrayList<>(declared);
        List<BatchResult> results = new ArrayList<>();
        List<String> deletionTimes = new ArrayList<>();
        for (Seq s : seqs) {
            boolean last = s.equals(through);
            results.add(new BatchResult(s.shown(), source.rows().getOrDefault(s, 0L), last ? versions : 0, 0, 0, 0,
                    false, 0));
            deletionTimes.add(null);
        }
        // the adoption point goes into this run's run-log row before the ledger entries (in the same transaction where
        // the database has one): whenever the ledger holds the adoption's entries, later runs find the point, also
        // when this run fails afterwards (a rebuild's apply) or dies before its row is marked finished
        store.markAdoption(runId, through.text());
        store.fingerprints(fingerprints);
        store.recordAll(results, seqs, runId, deletionTimes);
        Map<String, String> columns = new LinkedHashMap<>();
        for (SourceColumn src : m.sourceColumns()) {
            if (column(targetColumns, src.name()) != null) {
                columns.put(src.name(), null); // a column the table lacks is added by the next run
            }
        }
        store.registerColumns(columns);
        store.own(key, runId);
        jdbc.update(tables.markOwner());
        jdbc.commit("adopt");
        adopted = through;
        listener.onEvent(new SnapshotEvent.HistoryAdopted(settings.name(), runId, through.shown(), seqs.size(),
                versions, added));
        return new RunResult(runId, settings.name(), results, false, null, 0, Duration.ZERO);
    }

    /**
     * Refuses an adoption point no table and source can be at (before anything is written): one after the newest batch
     * the source holds (every later batch up to it would be refused as below the adoption), and, where the point is a
     * time (a date or timestamp {@code sequence_by} over a date or timestamp history), one that ends before the table's
     * first version starts (the earliest {@code valid_from}, or the earliest {@code updated_at} of the table's rows
     * where that is earlier: a dbt check snapshot dates versions by the run that saw them): the next run would apply
     * over the versions the batches they came from. A point of another kind has no place in the versions' validity.
     */
    private void checkAdoptionPoint(Seq through, Discovery source) {
        String cannot = "model '" + settings.name() + "': cannot adopt through " + through + ": ";
        if (source.sequences().isEmpty()) {
            throw new ItersnapException(ErrorCode.INVALID_SEQUENCE, cannot + "the source holds no batch, so no batch "
                    + "can be the last one the table holds (" + m.sequenceDescription() + "). Adopt once the source "
                    + "holds the batches the table was built from. Nothing was written");
        }
        Seq newest = source.sequences().last();
        if (through.compareTo(newest) > 0) {
            throw new ItersnapException(ErrorCode.INVALID_SEQUENCE, cannot + "it is after " + newest + ", the newest "
                    + "batch the source holds; every batch up to " + through + " arriving later would be refused as "
                    + "below the adoption point. Adopt through the last batch the table holds, at most " + newest
                    + ". Nothing was written");
        }
        if (m.sequenceKey() != null || !m.sequenceType().temporal()) {
            return;
        }
        SourceColumn validFrom = column(targetColumns, m.meta().validFrom());
        SourceColumn updatedAt = column(targetColumns, m.updatedAt());
        if (updatedAt != null && !updatedAt.valueType().temporal()) {
            updatedAt = null;
        }
        if (!validFrom.valueType().temporal()) {
            return;
        }
        SourceColumn u = updatedAt;
        List<java.time.LocalDateTime> earliest = new ArrayList<>();
        jdbc.query(tables.earliestTimes(u == null ? null : u.name()).inStep("adopt"), rs -> {
            for (java.time.LocalDateTime t : new java.time.LocalDateTime[] {asTime(validFrom.valueType().read(rs, 1)),
                    u == null ? null : asTime(u.valueType().read(rs, 2))}) {
                if (t != null) {
                    earliest.add(t);
                }
            }
            return null;
        });
        if (earliest.isEmpty()) {
            return; // an empty table: no version to compare with
        }
        java.time.LocalDateTime first = java.util.Collections.min(earliest);
        // a date point covers its day (a batch of a day holds rows updated during it); a timestamp is an instant
        boolean before = through.value() instanceof java.time.LocalDate d
                ? !first.isBefore(d.plusDays(1).atStartOfDay()) : first.isAfter(asTime(through.value()));
        if (before) {
            throw new ItersnapException(ErrorCode.INVALID_SEQUENCE, cannot + "it is before the table's first "
                    + "version, which starts at " + first.toString().replace('T', ' ') + " (the earliest "
                    + m.meta().validFrom() + (u != null ? " or " + u.name() : "") + "); the next run would apply the "
                    + "batches after " + through + " over the versions they already made. Adopt through the last "
                    + "batch the table holds. Nothing was written");
        }
    }

    /** A date or time as a local date-time (a date at its start, an instant in UTC); null for null. */
    private static java.time.LocalDateTime asTime(Object v) {
        return v instanceof java.time.LocalDate d ? d.atStartOfDay()
                : v instanceof java.time.LocalDateTime t ? t
                : v instanceof java.time.OffsetDateTime o ? o.withOffsetSameInstant(java.time.ZoneOffset.UTC)
                        .toLocalDateTime() : null;
    }

    /**
     * Where a rebuild from {@code from} cuts the versions' validity: the sequence as a time of the updated_at type
     * (a date as its start of day). Only for a date or timestamp sequence_by over a date or timestamp updated_at.
     */
    private Object cutTime(Seq from) {
        Object v = from.value();
        dev.itersnap.spi.ValueType u = m.updatedAtType();
        if (m.sequenceType().temporal() && u.temporal()) {
            if (u == m.sequenceType()) {
                return v;
            }
            if (v instanceof java.time.LocalDate d && u == dev.itersnap.spi.ValueType.TIMESTAMP) {
                return d.atStartOfDay();
            }
            if (v instanceof java.time.LocalDateTime d && u == dev.itersnap.spi.ValueType.DATE) {
                return d.toLocalDate();
            }
        }
        throw new ItersnapException(ErrorCode.INVALID_SETTING, "model '" + settings.name() + "': adopt --rebuild-from "
                + "places the rebuild point in the versions' validity, which needs sequence_by and updated_at of the "
                + "same kind of time (DATE or TIMESTAMP; " + m.sequenceDescription() + ", updated_at '" + m.updatedAt() + "' is "
                + m.updatedAtColumn().typeName() + "); adopt --through the last batch the table holds instead");
    }

    /** The sequence just before a date or timestamp one (a day, a microsecond). */
    private static Seq predecessor(Seq s) {
        Object v = s.value();
        Object p = v instanceof java.time.LocalDate d ? d.minusDays(1)
                : v instanceof java.time.LocalDateTime d ? d.minusNanos(1000)
                : v instanceof java.time.OffsetDateTime d ? d.minusNanos(1000) : null;
        if (p == null) {
            throw new IllegalStateException("no predecessor of " + s);
        }
        return new Seq(s.type(), p);
    }

    private ItersnapException notOwned(String message) {
        return new ItersnapException(ErrorCode.TARGET_NOT_OWNED, "model '" + settings.name() + "': " + message);
    }

    /**
     * Step 3b: a sequence the history records (opened or closed a version) must be in the ledger. One that is not was
     * applied and its ledger entry lost (a row deleted by hand): applying it again from the source would apply it
     * twice, so it joins the applied batches as a lost one and the history is replayed from the first lost batch (a
     * lost batch the source no longer holds is reproduced from the history). Returns that batch, or null.
     * <p>Bounded by what the run does: the history is probed (through its indexes on the opened and closed sequences)
     * for the batches this run would apply as new and for every sequence from the lowest point a replay of this run
     * can start at (a late batch, a restated one, a deliberate replay or full refresh); a run with nothing new and
     * nothing to replay reads nothing. A lost entry of a batch that left the source is therefore found by the first run
     * whose replay reaches it, which is the first run that could be wrong about it; a full check
     * ({@link Operation#FULL_CHECK}) compares every sequence.
     */
    private Seq checkLedger(TreeMap<Seq, MetadataStore.Entry> applied, TreeSet<Seq> fresh) {
        if (targetColumns == null) {
            return null;
        }
        Seq from = null;
        if (!fresh.isEmpty() && !applied.isEmpty() && fresh.first().compareTo(applied.lastKey()) < 0) {
            from = fresh.first();
        }
        if (!restated.isEmpty()) {
            from = lower(from, restated.firstKey());
        }
        if (operation == Operation.REPLAY) {
            try {
                from = lower(from, Seq.coerce(m, replayFrom));
            } catch (IllegalArgumentException e) {
                // detect() says what is wrong with it
            }
        }
        if (operation == Operation.FULL_REFRESH && !applied.isEmpty()) {
            from = applied.firstKey();
        }
        List<Object> probed = new ArrayList<>();
        for (Seq s : fresh) {
            if (!pending.containsKey(s)) {
                probed.add(s.value());
            }
        }
        if (probed.size() > MAX_BOUND_SEQUENCES) {
            // a catch-up of many batches: one range from the first of them instead of thousands of bound values
            from = lower(from, fresh.first());
            probed.clear();
        }
        TreeSet<Seq> lost = new TreeSet<>();
        if (operation == Operation.FULL_CHECK) {
            jdbc.query(tables.historySequences(), rs -> lost.add(Seq.read(m, rs, 1)));
        } else if (from != null || !probed.isEmpty()) {
            jdbc.query(SqlSteps.of(dialect).historySequences(m, probed, from == null ? null : from.value()),
                    rs -> lost.add(Seq.read(m, rs, 1)));
        }
        lost.removeAll(applied.keySet());
        if (lost.isEmpty()) {
            return null;
        }
        for (Seq s : lost) {
            applied.put(s, new MetadataStore.Entry(s, null, null, false, true, null, null));
        }
        fresh.removeAll(lost);
        listener.onEvent(new SnapshotEvent.LedgerRepaired(settings.name(), runId,
                lost.stream().map(Seq::shown).toList()));
        return lost.first();
    }

    private static Seq lower(Seq a, Seq b) {
        return a == null || b.compareTo(a) < 0 ? b : a;
    }

    /**
     * A batch about to be applied that already has set-aside rows in the error log: its ledger entry was deleted by
     * hand and it opened and closed no version (so the history did not show it to {@link #checkLedger}), or a run
     * without transactions died between logging and recording it. Applying it logs them again, so they are forgotten
     * first; the batch is reported as repaired. One read, only by runs that apply new batches.
     */
    private void forgetRowsLoggedWithoutEntry(TreeSet<Seq> fresh) {
        if (fresh.isEmpty()) {
            return;
        }
        List<Seq> logged = new ArrayList<>();
        for (String text : store.loggedSequences(new ArrayList<>(fresh))) {
            logged.add(Seq.parse(m, text));
        }
        if (logged.isEmpty()) {
            return;
        }
        logged.sort(null);
        store.forget(logged);
        jdbc.commit("repair ledger");
        listener.onEvent(new SnapshotEvent.LedgerRepaired(settings.name(), runId,
                logged.stream().map(Seq::shown).toList()));
    }

    /**
     * Step 2: undo history writes the ledger does not record (a crash between a write and its ledger entry). Needed
     * only when the previous run did not finish, or when the database has no transactional DML.
     */
    private void recover() {
        boolean needed = transactional ? "running".equals(previousStatus) : !"success".equals(previousStatus);
        if (targetColumns == null || !needed) {
            return;
        }
        TreeSet<Seq> recorded = new TreeSet<>(store.ledger(m).keySet());
        TreeSet<Seq> inHistory = new TreeSet<>();
        for (String column : List.of(m.meta().openedSeq(), m.meta().closedSeq())) {
            jdbc.query(tables.historySequences(column), rs -> inHistory.add(Seq.read(m, rs, 1)));
        }
        inHistory.removeAll(recorded);
        if (!inHistory.isEmpty() && (recorded.isEmpty() || inHistory.first().compareTo(recorded.last()) > 0)) {
            // the usual case: a batch (or, after a replay forgot its batches, everything from the replay point on)
            // written but not recorded, above every recorded one: the replay's own roll back undoes it
            Seq from = inHistory.first();
            List<String> reset = new ArrayList<>();
            store.columns().values().forEach(c -> {
                if (c.introducedText() != null
                        && Seq.parse(m, c.introducedText()).compareTo(from) >= 0) {
                    reset.add(c.name());
                }
            });
            recoverBy(Rollback.from(from.value(), reset)); // the archive's rows from there on go with it
        } else {
            for (Seq s : inHistory.descendingSet()) {
                recoverBy(Rollback.batch(s.value()));
            }
        }
        if (archiveColumns != null) {
            TreeSet<Seq> archived = new TreeSet<>();
            jdbc.query(tables.archivedSequences(), rs ->
                    archived.add(Seq.read(m, rs, 1)));
            archived.removeAll(recorded);
            archived.removeAll(inHistory); // already undone with their batch
            for (Seq s : archived) {
                recoverBy(Rollback.archived(s.value()));
            }
        }
        // set-aside rows logged for a batch that was never recorded (its replay logs them again)
        List<Seq> logged = new ArrayList<>();
        for (String text : store.loggedSequences()) {
            Seq s = Seq.parse(m, text);
            if (!recorded.contains(s)) {
                logged.add(s);
            }
        }
        if (!logged.isEmpty()) {
            store.forget(logged);
        }
        // untracked_columns: overwrite: a run that stopped inside a key-scoped roll back (its ledger entries already
        // forgotten, its keys' versions rolled back, their values not yet restored) leaves no sequence to find above
        recoverBy(Rollback.restoreOnly());
        jdbc.commit("recover");
    }

    private void recoverBy(Rollback r) {
        SqlSteps.of(dialect).rollback(m, r).forEach(s -> jdbc.update(s.inStep("recover")));
    }

    /** Step 3: the sequences present in the source (nothing else: no row is counted or hashed here). */
    private Discovery discover() {
        if (pendingColumns != null) {
            jdbc.query(tables.pendingBatches(), rs -> {
                        pending.put(Seq.read(m, rs, 1), rs.getString(2));
                        return null;
                    });
            pendingUsed = !pending.isEmpty();
        }
        TreeSet<Seq> seqs = new TreeSet<>();
        boolean[] nulls = {false};
        prints = settings.restatements() == Restatements.DETECT ? Fingerprints.of(dialect, m) : null;
        jdbc.query(SqlSteps.of(dialect).discoverSequences(m), rs -> {
            Object v = m.sequenceType().read(rs, 1);
            if (v == null) {
                nulls[0] = true;
            } else {
                seqs.add(Seq.of(m, v));
            }
            return null;
        });
        return new Discovery(seqs, nulls[0], new java.util.HashMap<>(), new java.util.HashMap<>());
    }

    /**
     * Step 3a: compares applied batches with the source, a bounded number per run: the {@code restatement_lookback}
     * newest applied batches the source holds, the batches a late batch makes this run replay (their rows and
     * fingerprints decide whether the replay can be key-scoped), and {@code restatement_sweep} older ones, taking up
     * after the batch where the last sweep stopped and starting over at the oldest (so every retained batch is compared
     * within a bounded number of runs). A full check ({@link Operation#FULL_CHECK}) compares every applied batch the
     * source holds. One statement, which counts (and with {@code restatements: detect} hashes) only those batches'
     * rows; the applied batches among them whose content hash differs from the ledger's are restated.
     */
    private void compare(TreeMap<Seq, MetadataStore.Entry> applied, Discovery source, TreeSet<Seq> fresh) {
        List<Seq> held = new ArrayList<>();
        for (MetadataStore.Entry e : applied.values()) {
            if (!e.lost() && source.sequences().contains(e.sequence())) {
                held.add(e.sequence());
            }
        }
        if (held.isEmpty()) {
            return;
        }
        // an applied batch whose fingerprint covers other columns than the source has now (a column was added,
        // dropped or widened since, or the entry predates fingerprints) cannot be compared: every batch the source
        // holds is fingerprinted again in this one run, so that a restatement after the change is found as before
        // (one that no run compared before the change goes unnoticed: see docs/semantics.md)
        boolean columnsChanged = prints != null && held.stream().map(applied::get)
                .anyMatch(e -> !e.reproduced() && !prints.comparable(e.fingerprint()));
        // a deliberate rebuild (replay, full refresh) compares every applied batch too, as its dry run shows
        boolean all = operation == Operation.FULL_CHECK || operation == Operation.REPLAY
                || operation == Operation.FULL_REFRESH || columnsChanged;
        TreeSet<Seq> checked = new TreeSet<>();
        if (!all) {
            int newest = Math.max(0, held.size() - settings.restatementLookback());
            checked.addAll(held.subList(newest, held.size()));
            if (!fresh.isEmpty() && fresh.first().compareTo(applied.lastKey()) < 0) {
                for (Seq s : held) {
                    if (s.compareTo(fresh.first()) > 0) {
                        checked.add(s);
                    }
                }
            }
            List<Seq> older = new ArrayList<>(held.subList(0, newest));
            older.removeAll(checked);
            int sweep = Math.min(settings.restatementSweep(), older.size());
            if (sweep > 0) {
                Seq after = null;
                try {
                    after = sweptThrough == null ? null : Seq.parse(m, sweptThrough);
                } catch (RuntimeException e) {
                    after = null; // recorded under another sequence_by: start over at the oldest
                }
                List<Seq> order = new ArrayList<>();
                for (Seq s : older) {
                    if (after == null || s.compareTo(after) > 0) {
                        order.add(s);
                    }
                }
                for (Seq s : older) {
                    if (after != null && s.compareTo(after) <= 0) {
                        order.add(s);
                    }
                }
                List<Seq> swept = order.subList(0, sweep);
                checked.addAll(swept);
                checkedThrough = swept.get(swept.size() - 1).text();
            }
            if (checked.isEmpty()) {
                return;
            }
        }
        // a replay thousands of batches deep compares them all in one pass rather than binding each sequence
        boolean every = all || checked.size() > MAX_BOUND_SEQUENCES;
        readFingerprints(source, every ? null : checked.stream().map(Seq::value).map(v -> (Object) v).toList());
        if (prints != null) {
            restated.putAll(prints.restated(applied, source.fingerprints()));
        }
    }

    /**
     * The rows and fingerprints of the source's batches {@code sequences} (null: every batch, as an adoption records
     * them) into {@code source}.
     */
    private void readFingerprints(Discovery source, List<Object> sequences) {
        Fingerprints columnsOnly = Fingerprints.of(dialect, m);
        jdbc.query(SqlSteps.of(dialect).fingerprintSequences(m, prints == null ? null : prints.columns(), sequences), rs -> {
            Object v = m.sequenceType().read(rs, 1);
            if (v != null) {
                Seq s = Seq.of(m, v);
                source.rows().put(s, rs.getLong(2));
                String fingerprint = fingerprint(rs, columnsOnly);
                if (fingerprint != null) {
                    source.fingerprints().put(s, fingerprint);
                }
            }
            return null;
        });
    }

    /**
     * The fingerprint of the batch of a fingerprint statement's row (sequence, rows, hash): with {@code restatements:
     * ignore} the columns it covers and its rows without a hash; null where the dialect gave no hash.
     */
    private String fingerprint(java.sql.ResultSet rs, Fingerprints columnsOnly) throws SQLException {
        long rows = rs.getLong(2);
        java.math.BigDecimal hash = rs.getMetaData().getColumnCount() > 2 ? rs.getBigDecimal(3) : null;
        if (prints == null) {
            return columnsOnly.withoutHash(rows); // the columns a batch is applied under, without a hash
        }
        return hash == null ? null : prints.of(rows, hash);
    }

    /**
     * The fingerprints of the batches this run applies, from the rows staged (those reproduced from the history
     * aside), so that a ledger entry describes exactly the rows applied even when the source changes while the run
     * reads it; replayed batches a key-scoped replay does not stage in full keep the fingerprints {@link #compare}
     * read. Read before the batches are recorded. {@code fromSource}: the batches the run stages from the source in
     * full; those of them with no row staged (discovered, then gone from the source before staging: a loader that
     * deletes and inserts a file again in two transactions) are returned and recorded, if applied, with 0 rows and a
     * content hash of 0.
     */
    private List<Seq> fingerprintStaged(Discovery source, List<Seq> fromSource) {
        Map<Seq, String> found = new java.util.HashMap<>(source.fingerprints());
        recorded = found;
        Fingerprints columnsOnly = Fingerprints.of(dialect, m);
        java.util.Set<Seq> staged = new java.util.HashSet<>();
        jdbc.query(SqlSteps.of(dialect).fingerprintStaged(m, prints == null ? null : prints.columns()), rs -> {
            Object v = m.sequenceType().read(rs, 1);
            if (v != null) {
                Seq s = Seq.of(m, v);
                staged.add(s);
                String fingerprint = fingerprint(rs, columnsOnly);
                if (fingerprint != null) {
                    found.put(s, fingerprint);
                } else {
                    found.remove(s);
                }
            }
            return null;
        });
        List<Seq> gone = new ArrayList<>();
        for (Seq s : fromSource) {
            if (!staged.contains(s)) {
                // no row staged: the batch is applied (if at all) with no rows, and recorded so; a hash of 0 matches
                // no content, so the run that compares the batch once its rows are back finds it restated
                gone.add(s);
                found.put(s, prints == null ? columnsOnly.withoutHash(0) : prints.of(0, java.math.BigDecimal.ZERO));
            }
        }
        store.fingerprints(found);
        return gone;
    }

    /**
     * A key-scoped replay records each replayed batch with the fingerprint {@link #compare} read, and stages the
     * batch's rows of the keys it recomputes in a later statement: a loader that deleted the batch between the two and
     * inserted it again unchanged would leave those keys without its rows, with nothing for a later comparison to
     * find. So, once staged, one statement reads each replayed batch's hash and the hash of its rows of those keys from
     * the source (one snapshot), and the hash of the rows staged: unless the batch is as compared and the staged rows
     * are its rows of those keys, the batch is recorded with a content hash of 0, which matches no content, and the
     * next run that compares it replays it for every key.
     */
    private void checkReplayedKeys(List<Seq> replayed, Discovery source) {
        if (prints == null || replayed.isEmpty() || recorded == null) {
            return;
        }
        List<Object> bound = replayed.size() > MAX_BOUND_SEQUENCES ? null
                : replayed.stream().map(Seq::value).map(v -> (Object) v).toList();
        dev.itersnap.spi.Statement check = SqlSteps.of(dialect).fingerprintReplayedKeys(m, prints.columns(), bound);
        if (check == null) {
            return;
        }
        Map<Seq, java.math.BigDecimal> whole = new java.util.HashMap<>();
        Map<Seq, java.math.BigDecimal> keyed = new java.util.HashMap<>();
        Map<Seq, java.math.BigDecimal> staged = new java.util.HashMap<>();
        jdbc.query(check, rs -> {
            Object v = m.sequenceType().read(rs, 1);
            if (v != null) {
                Seq s = Seq.of(m, v);
                if ("stage".equals(rs.getString(4))) {
                    staged.put(s, rs.getBigDecimal(3));
                } else {
                    whole.put(s, rs.getBigDecimal(2));
                    keyed.put(s, rs.getBigDecimal(3));
                }
            }
            return null;
        });
        boolean changed = false;
        for (Seq s : replayed) {
            String compared = source.fingerprints().get(s);
            java.math.BigDecimal expected = compared == null ? null : Fingerprints.hash(compared);
            boolean asCompared = expected != null && whole.get(s) != null && expected.compareTo(whole.get(s)) == 0;
            java.math.BigDecimal k = keyed.get(s) == null ? java.math.BigDecimal.ZERO : keyed.get(s);
            java.math.BigDecimal st = staged.get(s) == null ? java.math.BigDecimal.ZERO : staged.get(s);
            if (!asCompared || k.compareTo(st) != 0) {
                recorded.put(s, prints.of(compared == null ? 0 : Fingerprints.rows(compared), java.math.BigDecimal.ZERO));
                changed = true;
            }
        }
        if (changed) {
            store.fingerprints(recorded);
        }
    }

    /**
     * The fingerprints to record for applied batches this run does not apply again: those the ledger has none for,
     * or one over other columns (a column added, dropped or widened since), found in the source now.
     */
    private Map<Seq, String> unrecordedFingerprints(TreeMap<Seq, MetadataStore.Entry> applied, Discovery source,
                                                    TreeSet<Seq> batches) {
        Map<Seq, String> out = new TreeMap<>();
        if (prints == null) {
            return out;
        }
        for (MetadataStore.Entry e : applied.values()) {
            String now = source.fingerprints().get(e.sequence());
            if (now != null && !e.lost() && !e.reproduced() && !batches.contains(e.sequence())
                    && !prints.comparable(e.fingerprint())) {
                out.put(e.sequence(), Fingerprints.recordedLater(now));
            }
        }
        return out;
    }

    /** Records the fingerprints {@link #unrecordedFingerprints} found, under the lock. */
    private void recordFingerprints(Map<Seq, String> unrecorded) {
        if (unrecorded.isEmpty()) {
            return;
        }
        lock.verifyHeld();
        store.recordFingerprints(unrecorded);
        jdbc.commit("record fingerprints");
    }

    /**
     * Rows added to a batch after it was applied are replayed as a restatement when the batch's fingerprint is
     * compared. When it is not ({@code restatements: ignore}, a ledger entry recorded before fingerprints were, or
     * over other columns), each applied batch that this run does not apply again and whose rows in the source
     * outnumber those the ledger recorded is reported, so that nothing is dropped silently. A {@code replay --from}
     * the batch applies them.
     */
    private void warnAboutGrownBatches(TreeMap<Seq, MetadataStore.Entry> applied, Discovery source,
                                       TreeSet<Seq> batches) {
        for (MetadataStore.Entry e : applied.values()) {
            Long now = source.rows().get(e.sequence());
            if (now != null && !e.lost() && !e.reproduced() && now > e.sourceRows()
                    && !batches.contains(e.sequence()) && (prints == null || !prints.comparable(e.fingerprint()))) {
                listener.onEvent(new SnapshotEvent.RowsAddedToAppliedBatch(settings.name(), runId,
                        e.sequence().shown(), now, e.sourceRows()));
            }
        }
    }

    /** Step 4: decide the replay point (late batches, or a deliberate replay / full refresh). */
    private boolean detect(TreeSet<Seq> fresh, TreeMap<Seq, MetadataStore.Entry> applied, Discovery source,
                           Seq lostFrom) {
        Seq point = lostFrom;
        if (operation == Operation.REPLAY) {
            try {
                Seq asked = Seq.coerce(m, replayFrom);
                point = point == null || asked.compareTo(point) < 0 ? asked : point;
            } catch (IllegalArgumentException e) {
                throw new ItersnapException(ErrorCode.INVALID_SEQUENCE, "model '" + settings.name() + "': cannot replay"
                        + " from " + replayFrom + ": " + e.getMessage() + " (" + m.sequenceDescription() + ")");
            }
        }
        if (operation == Operation.FULL_REFRESH && !applied.isEmpty() && !source.sequences().isEmpty()) {
            Seq first = source.sequences().first();
            point = point == null || first.compareTo(point) < 0 ? first : point;
        }
        boolean late = false;
        if (!fresh.isEmpty() && !applied.isEmpty() && fresh.first().compareTo(applied.lastKey()) < 0) {
            late = true;
            Seq lateFrom = fresh.first();
            point = point == null || lateFrom.compareTo(point) < 0 ? lateFrom : point;
            List<Object> incoming = fresh.headSet(applied.lastKey()).stream().map(Seq::shown).toList();
            listener.onEvent(new SnapshotEvent.OutOfOrder(settings.name(), runId, incoming, applied.lastKey().shown(),
                    point.shown()));
        }
        if (!restated.isEmpty()) {
            // a restated batch is replayed like a late one, for every key, with everything applied after it
            Seq first = restated.firstKey();
            point = point == null || first.compareTo(point) < 0 ? first : point;
            for (MetadataStore.Entry e : restated.values()) {
                listener.onEvent(new SnapshotEvent.BatchRestated(settings.name(), runId, e.sequence().shown(),
                        Fingerprints.rows(e.fingerprint()), source.rows().getOrDefault(e.sequence(), 0L)));
            }
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
    private Map<String, Seq> prepare(Seq firstBatch, boolean nothingApplied) {
        List<String> added = new ArrayList<>();
        List<String> missing = new ArrayList<>();
        if (targetColumns == null) {
            dialect.createTable(tables.history()).forEach(s -> jdbc.update(s.inStep("create history table")));
            jdbc.update(tables.markOwner());
        } else {
            requireBookkeeping();
            for (SourceColumn src : m.sourceColumns()) {
                SourceColumn existing = column(targetColumns, src.name());
                if (existing == null) {
                    jdbc.update(SqlSteps.of(dialect).primitives().addColumn(m.target(), src));
                    added.add(src.name());
                } else if (widen(m.target(), existing, src)) {
                    // the meta columns typed after sequence_by / updated_at follow them
                    // (all five when sequence_by is the updated_at column)
                    List<String> followers = new ArrayList<>();
                    if (src.name().equals(m.sequenceBy())) {
                        followers.addAll(List.of(m.meta().openedSeq(), m.meta().closedSeq()));
                    }
                    if (src.name().equals(m.updatedAt())) {
                        followers.addAll(List.of(m.meta().updatedAt(), m.meta().validFrom(), m.meta().validTo()));
                    }
                    for (String meta : followers) {
                        jdbc.update(SqlSteps.of(dialect).primitives().widenColumn(m.target(), meta, src).inStep("widen column"));
                    }
                }
            }
        }
        if (archiveColumns == null || (!transactional && pendingColumns == null)) {
            List<dev.itersnap.spi.Statement> ddl = new ArrayList<>(dialect.createTable(tables.archive()));
            if (!transactional) {
                ddl.addAll(dialect.createTable(tables.pending()));
            }
            ddl.forEach(s -> jdbc.update(s.inStep("create archive")));
        }
        evolve(m.archive(), archiveColumns);
        evolve(m.pending(), pendingColumns);
        jdbc.commit("prepare");
        prepareScratch();
        Map<String, MetadataStore.Column> registry = store.columns();
        Map<String, Seq> introduced = new LinkedHashMap<>();
        // No batch in the ledger means the history was created by a run that stopped before recording a batch,
        // perhaps after registering some of its columns: every column the history already had is there from the
        // start.
        boolean adopt = nothingApplied;
        Map<String, String> registered = new LinkedHashMap<>();
        for (SourceColumn src : m.sourceColumns()) {
            MetadataStore.Column known = registry.get(src.name());
            if (known == null) {
                boolean fromStart = targetColumns == null || (adopt && !added.contains(src.name()));
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
                    store.markInSource(src.name(), true);
                    added.add(src.name());
                }
                if (known.introducedText() != null) {
                    introduced.put(src.name(), Seq.parse(m, known.introducedText()));
                }
            }
        }
        store.registerColumns(registered);
        for (MetadataStore.Column known : registry.values()) {
            if (known.inSource() && m.sourceColumn(known.name()) == null) {
                store.markInSource(known.name(), false);
                missing.add(known.name());
            }
        }
        jdbc.commit("prepare");
        sourceColumnsStable = added.isEmpty() && missing.isEmpty()
                && registry.values().stream().allMatch(MetadataStore.Column::inSource);
        if (!added.isEmpty() || !missing.isEmpty()) {
            listener.onEvent(new SnapshotEvent.SchemaChange(settings.name(), runId, added, missing));
        }
        return introduced;
    }

    /**
     * A run with nothing to apply still records the columns the source no longer has: one that comes back later is
     * then seen coming back (its replayed rows hold NULL where they held values, so a late batch after it replays
     * every key, see {@link #keyScoped}).
     */
    /**
     * The run's scratch tables, empty and in the shape this run needs: the tables of an earlier run are reused
     * (emptied in one statement, or one per table) when the stage's comment names the shape of the four tables'
     * DDL, else dropped and created again and the stage marked. A reuse that fails (a table dropped by hand) creates
     * them. Where the database replaces tables in one statement (Delta) they are always replaced.
     */
    private void prepareScratch() {
        List<TableSpec> specs = List.of(tables.stage(), tables.batches(), tables.keys(), tables.work());
        List<dev.itersnap.spi.Statement> ddl = new ArrayList<>();
        specs.forEach(spec -> ddl.addAll(dialect.createTable(spec)));
        List<dev.itersnap.spi.Statement> clear = SqlSteps.of(dialect).primitives().clearScratchTables(specs.stream().map(TableSpec::name)
                .toList());
        String signature = scratchSignature(ddl);
        if (!clear.isEmpty()) {
            try {
                if (ModelTables.scratchComment(signature).equals(jdbc.tableComment(m.stage()))) {
                    jdbc.updateAll(clear);
                    jdbc.commit("clear scratch tables");
                    return;
                }
            } catch (SQLException | RuntimeException e) {
                jdbc.rollbackQuietly(); // created again below
            }
        }
        ddl.forEach(s -> jdbc.update(s.inStep("create scratch tables")));
        if (!clear.isEmpty()) {
            jdbc.update(tables.dropRetiredScratch());
            jdbc.update(tables.markScratch(signature));
        }
        jdbc.commit("create scratch tables");
    }

    /** The first 16 hex digits of the SHA-256 of the scratch tables' DDL: their shape. */
    private static String scratchSignature(List<dev.itersnap.spi.Statement> ddl) {
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

    private void noteColumnsGone() {
        List<String> missing = new ArrayList<>();
        for (MetadataStore.Column known : store.columns().values()) {
            if (known.inSource() && m.sourceColumn(known.name()) == null) {
                if (missing.isEmpty()) {
                    lock.verifyHeld();
                }
                store.markInSource(known.name(), false);
                missing.add(known.name());
            }
        }
        if (!missing.isEmpty()) {
            jdbc.commit("note missing columns");
            listener.onEvent(new SnapshotEvent.SchemaChange(settings.name(), runId, List.of(), missing));
        }
    }

    /** Adds the source's new columns to a working table that exists ({@code columns} non-null), widens changed ones. */
    private void evolve(TableName table, List<SourceColumn> columns) {
        if (columns == null) {
            return;
        }
        for (SourceColumn src : m.sourceColumns()) {
            SourceColumn existing = column(columns, src.name());
            if (existing == null) {
                jdbc.update(SqlSteps.of(dialect).primitives().addColumn(table, src));
            } else {
                widen(table, existing, src);
            }
        }
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
    private boolean widen(TableName table, SourceColumn existing, SourceColumn src) {
        if (dialect.columnType(existing).equals(dialect.columnType(src)) || dialect.widens(src, existing)) {
            return false;
        }
        if (!dialect.widens(existing, src)) {
            throw new ItersnapException(ErrorCode.INCOMPATIBLE_SCHEMA_CHANGE, "model '" + settings.name()
                    + "': source column '" + src.name() + "' changed type from " + dialect.columnType(existing)
                    + " (history) to " + dialect.columnType(src) + " (source), which cannot be widened; cast it "
                    + "in the source query");
        }
        SqlSteps.of(dialect).primitives().prepareWidening(table).forEach(s -> jdbc.update(s.inStep("widen column")));
        jdbc.update(SqlSteps.of(dialect).primitives().widenColumn(table, existing.name(), src).inStep("widen column"));
        return true;
    }

    /**
     * Step 5: read the source once, from the first batch to apply on, into the stage; reproduce batches that aged
     * out of the source from the history (before it is rolled back).
     */
    private void stage(Seq first, boolean nullSequence, List<Seq> reproduced, Map<String, Seq> introduced,
                       TreeMap<Seq, MetadataStore.Entry> applied) {
        jdbc.update(SqlSteps.of(dialect).stageSource(m, first.value(), nullSequence));
        logNullSequences(nullSequence);
        boolean full = settings.hardDeletes().fullBatches();
        List<Seq> fromHistory = new ArrayList<>();
        for (Seq s : reproduced) {
            if (pending.containsKey(s)) {
                jdbc.update(tables.restorePending(s.value()));
                continue;
            }
            fromHistory.add(s);
            List<String> notYet = new ArrayList<>();
            introduced.forEach((column, at) -> {
                if (at.compareTo(s) > 0) {
                    notYet.add(column);
                }
            });
            MetadataStore.Entry entry = applied.get(s);
            boolean fullPicture = full && entry != null && (entry.deletionTime() != null || entry.lost());
            jdbc.update(SqlSteps.of(dialect).stageReproduced(m, s.value(), notYet, fullPicture));
        }
        if (!transactional && replayPoint != null) {
            // Without transactions the roll back below is not undone by a failure: save what only the history
            // holds (the aged-out batches) before it goes, so that a failed run loses nothing
            for (Seq s : fromHistory) {
                MetadataStore.Entry entry = applied.get(s);
                jdbc.update(tables.savePending(s.value(), entry == null ? null : entry.deletionTime()));
                pending.put(s, entry == null ? null : entry.deletionTime());
                pendingUsed = true;
            }
        }
        jdbc.commit("stage");
    }

    /** The staged rows without a sequence into the error log, once per record. */
    private void logNullSequences(boolean nullSequence) {
        if (nullSequence) {
            int logged = jdbc.update(SqlSteps.of(dialect).logNullSequences(m, runId, LocalDateTime.now()));
            if (logged > 0) {
                listener.onEvent(new SnapshotEvent.RowsRejected(settings.name(), runId, null,
                        Map.of(RejectReason.NULL_SEQUENCE.code(), (long) logged)));
            }
        }
    }

    /**
     * Step 4 (continued): roll the history back to the replay point. On a transactional database this is not
     * committed on its own when aged-out batches are reproduced: it commits with the last of them.
     */
    private void rollBack(TreeMap<Seq, MetadataStore.Entry> applied, Map<String, Seq> introduced) {
        lock.verifyHeld();
        List<String> resetColumns = new ArrayList<>();
        introduced.forEach((column, at) -> {
            if (at.compareTo(replayPoint) >= 0) {
                resetColumns.add(column);
            }
        });
        List<Seq> undone = new ArrayList<>(applied.tailMap(replayPoint, true).keySet());
        if (!transactional) {
            // forget first: from here on a failure leaves history the ledger does not record, which the next
            // run's recovery rolls back (the aged-out batches among them are in the pending table)
            store.forget(undone);
        }
        jdbc.updateAll(SqlSteps.of(dialect).rollback(m, Rollback.from(replayPoint.value(), resetColumns)));
        if (transactional) {
            store.forget(undone);
        }
    }

    /**
     * Step 6: apply the batches together, in business order, each recorded in the ledger with its counts; committed
     * once, with the ledger entries, where the database has transactions.
     */
    private List<BatchResult> apply(TreeSet<Seq> batches, List<Seq> reproduced,
                                    TreeMap<Seq, MetadataStore.Entry> applied, Map<String, Seq> introduced) {
        BatchApplier applier = new BatchApplier(jdbc, dialect, m, tables, store, introduced, listener, runId, lock);
        List<BatchApplier.Planned> planned = new ArrayList<>();
        for (Seq s : batches) {
            boolean isReproduced = reproduced.contains(s);
            MetadataStore.Entry before = applied.get(s);
            String recordedDeletionTime = !isReproduced ? null
                    : before != null ? before.deletionTime() : pending.get(s);
            planned.add(new BatchApplier.Planned(s, isReproduced, recordedDeletionTime));
        }
        lock.verifyHeld();
        List<BatchResult> results = applier.apply(planned);
        jdbc.commit("apply batches");
        // BatchApplied only once the batches are committed
        for (BatchResult r : results) {
            listener.onEvent(new SnapshotEvent.BatchApplied(settings.name(), runId, r));
        }
        if (pendingUsed) {
            jdbc.update(tables.clear(m.pending()).inStep("clear pending batches"));
        }
        return results;
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
    private boolean keyScoped(boolean late, List<Seq> reproduced, Map<String, Seq> introduced,
                              TreeMap<Seq, MetadataStore.Entry> applied, Discovery source) {
        if (!late || (operation != Operation.RUN && operation != Operation.FULL_CHECK) || replayPoint == null || !reproduced.isEmpty() || !pending.isEmpty()
                || !restated.isEmpty() || !sourceColumnsStable
                || !introduced.values().stream().allMatch(at -> at.compareTo(replayPoint) < 0)) {
            return false;
        }
        for (MetadataStore.Entry e : applied.tailMap(replayPoint, true).values()) {
            Long rows = source.rows().get(e.sequence());
            if (e.lost() || rows == null || rows != e.sourceRows()) { // a lost entry has no counts
                return false;
            }
            String now = source.fingerprints().get(e.sequence());
            if (!Fingerprints.recordedWhenApplied(e.fingerprint()) || now == null
                    || !Fingerprints.sameContent(now, e.fingerprint())) {
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
     * stage the replayed batches' rows of the first, roll only them back, and apply everything in one pass.
     */
    private List<BatchResult> replayByKey(TreeSet<Seq> batches, TreeMap<Seq, MetadataStore.Entry> applied,
                                          Discovery source, Map<String, Seq> introduced) {
        boolean nullSequence = source.nullSequence();
        BatchApplier applier = new BatchApplier(jdbc, dialect, m, tables, store, introduced, listener, runId, lock);
        List<BatchApplier.Planned> planned = new ArrayList<>();
        List<Seq> replayed = new ArrayList<>();
        for (Seq s : batches) {
            MetadataStore.Entry entry = applied.get(s);
            planned.add(new BatchApplier.Planned(s, false, entry == null ? null : entry.deletionTime(), entry != null));
            if (entry != null) {
                replayed.add(s);
            }
        }
        dev.itersnap.internal.sql.ApplyStatements sql = applier.replayStatements(planned);
        jdbc.updateAll(sql.listBatches());
        jdbc.update(SqlSteps.of(dialect).stageSource(m, replayPoint.value(), nullSequence, StageScope.FRESH));
        List<Seq> fresh = new ArrayList<>(batches);
        fresh.removeAll(replayed);
        fingerprintStaged(source, fresh);
        logNullSequences(nullSequence);
        jdbc.updateAll(sql.prepare());
        jdbc.update(SqlSteps.of(dialect).stageSource(m, replayPoint.value(), false, StageScope.REPLAYED_KEYS));
        checkReplayedKeys(replayed, source);
        jdbc.commit("stage");
        lock.verifyHeld();
        store.forgetEntries(replayed); // re-recorded with their new counts (see rollBack for the order)
        boolean setAside = replayed.stream().anyMatch(s -> applied.get(s).counts().rejected() > 0);
        jdbc.updateAll(SqlSteps.of(dialect).rollback(m, Rollback.keys(replayPoint.value(), setAside)));
        List<BatchResult> results = applier.applyReplay(sql, planned, applied);
        if (setAside) {
            store.relogErrors(replayed.stream().filter(s -> applied.get(s).counts().rejected() > 0).toList(), runId,
                    LocalDateTime.now());
        }
        jdbc.commit("apply batches");
        for (BatchResult r : results) {
            listener.onEvent(new SnapshotEvent.BatchApplied(settings.name(), runId, r));
        }
        return results;
    }

    /** Step 7: check the timeline of the keys touched by this run. */
    private long check(Seq first) {
        List<String> keys = jdbc.query(SqlSteps.of(dialect).timelineCheck(m, first.value()), rs -> {
            StringBuilder k = new StringBuilder();
            for (int i = 1; i <= m.keys().size(); i++) {
                k.append(i > 1 ? "|" : "").append(rs.getString(i));
            }
            return k.toString();
        });
        List<String> distinct = keys.stream().distinct().toList();
        if (!distinct.isEmpty()) {
            listener.onEvent(new SnapshotEvent.TimelineViolation(settings.name(), runId, distinct.size(),
                    distinct.subList(0, Math.min(5, distinct.size()))));
        }
        jdbc.commit("check timeline");
        return distinct.size();
    }
}
