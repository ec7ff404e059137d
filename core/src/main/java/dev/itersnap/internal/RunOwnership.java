package dev.itersnap.internal;

import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.internal.sql.ModelTables;

import java.sql.SQLException;
import java.util.List;

/**
 * A run's first check, before anything is written: the history table and this metadata schema belong together
 * (owners table, the table's owner comment, the ledger), and the history is one (itersnap's bookkeeping columns). A
 * full refresh into a new or empty table starts the model over there. Part of one {@link SnapshotRun}, with which it
 * shares only the {@link RunContext}.
 */
final class RunOwnership {
    private final RunContext cx;
    /** Whether {@link #own}, while the run only decided, found something it registers once the run writes. */
    private boolean wouldWrite;

    RunOwnership(RunContext cx) {
        this.cx = cx;
    }

    /**
     * Step 1b: the history table and this metadata schema must belong together, checked before anything is written.
     * A target owned by another model (the owners table here, or the comment the table carries), by this model under
     * another metadata schema, or by no model (history that no ledger here records) is refused; so is a run whose
     * model owns another table, and a missing or emptied history whose ledger records inserted rows. A full refresh
     * into a new or empty table starts the model over there. A target that no row records yet is registered.
     */
    void own(SnapshotRun.Resolved r) {
        ResolvedModel m = r.m();
        if (r.targetColumns() != null) {
            requireBookkeeping(r); // not a history table at all: a setting points at the wrong table
        }
        String key = m.target().toString();
        String schemaName = m.metadataSchema();
        boolean exists = r.targetColumns() != null;
        MetadataStore.Owners owners = cx.store().owners(key);
        String rowOwner = owners.targetOwner();
        if (rowOwner != null && !rowOwner.equals(cx.settings().name())) {
            throw notOwned("target " + key + " belongs to model '" + rowOwner + "' (metadata schema " + schemaName
                    + "); two models cannot share a history table. Point target at a table of its own (a new one is "
                    + "built by the next run, or by full-refresh --yes)");
        }
        ModelTables.OwnerMark mark;
        try {
            mark = exists ? ModelTables.parseOwnerComment(cx.jdbc().tableComment(m.target())) : null;
        } catch (SQLException e) {
            throw cx.jdbc().failure("check owner", null, e);
        }
        if (mark != null && !(mark.model().equals(cx.settings().name())
                && mark.metadataSchema().equalsIgnoreCase(schemaName))) {
            throw notOwned(mark.model().equals(cx.settings().name())
                    ? "target " + key + " is the history of this model under metadata schema " + mark.metadataSchema()
                            + ", not " + schemaName + ", whose ledger does not hold it. Set metadata_schema back to "
                            + mark.metadataSchema()
                            + ", or point target at a new table and run full-refresh --yes (it rebuilds from the "
                            + "batches the source holds)"
                    : "target " + key + " belongs to model '" + mark.model() + "' (metadata schema "
                            + mark.metadataSchema() + "); two "
                            + "models cannot share a history table. Point target at a table of its own (a new one is "
                            + "built by the next run, or by full-refresh --yes)");
        }
        String mine = owners.ownTarget();
        boolean hasRows = exists && Boolean.TRUE.equals(r.targetHasRows()); // read with its description
        MetadataStore.LedgerSize ledger = cx.store().ledgerSize();
        if (mine != null && !mine.equals(key)) {
            if (cx.operation().rebuildsFromSource() && !hasRows) {
                startOver(r, key, exists);
                return;
            }
            throw notOwned("the history of this model is " + mine + " (metadata schema " + schemaName + "); its target"
                    + " is now " + key + ", which it does not own. Set target back to " + mine + ", or build " + key
                    + " from the batches the source holds with full-refresh --yes (" + mine + " is left as it is)");
        }
        if (!hasRows && ledger.inserted() > 0) {
            if (cx.operation().rebuildsFromSource()) {
                startOver(r, key, exists);
                return;
            }
            throw notOwned("target " + key + " is " + (exists ? "empty" : "missing") + ", but the ledger in metadata "
                    + "schema " + schemaName + " records " + ledger.batches() + " applied batches that inserted " + ledger.inserted()
                    + " versions into it. Nothing was written. full-refresh --yes rebuilds it from the batches the "
                    + "source holds (batches no longer in the source are lost with the old table)");
        }
        if (hasRows && ledger.batches() == 0 && mine == null) {
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
        String current = cx.settings().validToCurrent();
        if (cx.planning()) {
            // checked; a plan writes nothing
            wouldWrite = mine == null || exists && !java.util.Objects.equals(mark == null ? null
                    : mark.validToCurrent(), current);
            return;
        }
        wouldWrite = false;
        if (mine == null) {
            cx.store().own(key, cx.runId());
            if (exists && mark == null) {
                cx.jdbc().update(r.tables().markOwner()); // a history built before owners were recorded
            }
            cx.jdbc().commit("register owner");
        }
        if (exists && !java.util.Objects.equals(mark == null ? null : mark.validToCurrent(), current)) {
            // valid_to_current set, changed or removed: the open versions carry the new value from this run on
            cx.jdbc().update(cx.sql().markOpenVersions(m).inStep("mark open versions"));
            cx.jdbc().update(r.tables().markOwner());
            cx.jdbc().commit("mark open versions");
        }
    }

    /** Whether the last {@link #own} checked while the run only decided and found an owner to register or a mark to
     * change, which the run writes once it holds the lock. */
    boolean wouldWrite() {
        return wouldWrite;
    }

    /** A full refresh into a new or empty history table: the model forgets its batches and starts over there. */
    void startOver(SnapshotRun.Resolved r, String key, boolean exists) {
        ResolvedModel m = r.m();
        if (cx.planning()) {
            cx.store().readNothing(); // the run forgets the model's batches: it starts from nothing
            return;
        }
        cx.store().forgetAll();
        if (r.archiveColumns() != null) {
            cx.jdbc().update(r.tables().clear(m.archive()));
        }
        if (r.pendingColumns() != null) {
            cx.jdbc().update(r.tables().clear(m.pending()));
        }
        cx.store().own(key, cx.runId());
        if (exists) {
            cx.jdbc().update(r.tables().markOwner());
        }
        cx.jdbc().commit("start over");
    }

    ItersnapException notOwned(String message) {
        return new ItersnapException(ErrorCode.TARGET_NOT_OWNED, "model '" + cx.settings().name() + "': " + message);
    }

    void requireBookkeeping(SnapshotRun.Resolved r) {
        ResolvedModel m = r.m();
        for (String meta : List.of(m.meta().validFrom(), m.meta().validTo(), m.meta().openedSeq(),
                m.meta().closedSeq(), m.meta().changeType())) {
            if (RunSchema.column(r.targetColumns(), meta) == null) {
                throw new ItersnapException(ErrorCode.INVALID_SETTING, "model '" + cx.settings().name() + "': target "
                        + m.target() + " exists but has no column '" + meta
                        + "'; it was not built by itersnap with "
                        + "these column_names. Choose another target or fix column_names");
            }
        }
    }
}
