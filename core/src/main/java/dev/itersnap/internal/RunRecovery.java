package dev.itersnap.internal;

import dev.itersnap.core.SnapshotEvent;
import dev.itersnap.internal.sql.Rollback;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Recovery and the ledger's checks: history writes the ledger does not record are undone (a crash between a write and
 * its ledger entry), a ledger whose versions are gone is replayed, and rows logged without an entry are forgotten.
 * Part of one {@link SnapshotRun}: it takes what the run found and returns what it finds, and shares only the run's
 * {@link RunContext}.
 */
final class RunRecovery {
    private final RunContext cx;
    /** What {@link #checkLedger} counted of the versions the batches compared with the source opened, or null. */
    private OpenedVersions openedVersions;

    RunRecovery(RunContext cx) {
        this.cx = cx;
    }

    /**
     * The versions each of {@code counted} opened in the history (a sequence missing from {@code opened}: none), as
     * {@link #checkLedger} read them with its probe, before anything is written.
     */
    record OpenedVersions(java.util.Set<Seq> counted, java.util.Map<Seq, Long> opened) {
    }

    /** What {@link #checkLedger} counted with its probe, or null (it counted nothing). */
    OpenedVersions openedVersions() {
        return openedVersions;
    }

    /**
     * Step 3: a sequence the history records (opened or closed a version) must be in the ledger. One that is not was
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
    Seq checkLedger(SnapshotRun.Resolved r, TreeMap<Seq, MetadataStore.Entry> applied, TreeSet<Seq> fresh,
                    RunDiscovery.Compared compared, java.util.Map<Seq, String> pending,
                    java.util.Set<Seq> comparedWithSource) {
        ResolvedModel m = r.m();
        if (r.targetColumns() == null) {
            return null;
        }
        Seq requested = null;
        if (cx.operation().requestsPoint()) {
            try {
                requested = Seq.coerce(m, cx.replayFrom());
            } catch (IllegalArgumentException e) {
                // detect() says what is wrong with it
            }
        }
        // the lowest point this run's replay can start at (a full refresh probes every applied batch)
        Seq from = ReplayDecision.lowest(new ReplayDecision.Found(false, requested, applied.navigableKeySet(), fresh,
                new TreeSet<>(), compared.restated().navigableKeySet(), compared.uncomparable().navigableKeySet(),
                null));
        if (cx.operation().rebuildsFromSource() && !applied.isEmpty()) {
            from = applied.firstKey();
        }
        List<Object> probed = new ArrayList<>();
        for (Seq s : fresh) {
            if (!pending.containsKey(s)) {
                probed.add(s.value());
            }
        }
        if (probed.size() > SnapshotRun.MAX_BOUND_SEQUENCES) {
            // a catch-up of many batches: one range from the first of them instead of thousands of bound values
            from = lower(from, fresh.first());
            probed.clear();
        }
        TreeSet<Seq> lost = new TreeSet<>();
        if (cx.operation() == SnapshotRun.Operation.FULL_CHECK) { // every sequence, not only a replay's range
            cx.jdbc().query(r.tables().historySequences(), rs -> lost.add(Seq.read(m, rs, 1)));
        } else if (from != null || !probed.isEmpty()) {
            // the same read counts the versions of the batches the edited-history check counts before writing
            List<Seq> counted = new ArrayList<>();
            for (MetadataStore.Entry e : applied.values()) {
                if (!e.lost() && e.counts() != null && comparedWithSource.contains(e.sequence())) {
                    counted.add(e.sequence());
                }
            }
            if (counted.size() > SnapshotRun.MAX_BOUND_SEQUENCES) {
                counted.clear(); // the check counts every version then (EditedHistory)
            }
            java.util.Map<Seq, Long> opened = new java.util.HashMap<>();
            cx.jdbc().query(cx.sql().historySequences(m, probed, from == null ? null : from.value(),
                    counted.stream().map(Seq::value).toList()), rs -> {
                        Seq s = Seq.read(m, rs, 1);
                        long n = counted.isEmpty() ? 0 : rs.getLong(2);
                        if (counted.isEmpty() || rs.wasNull()) {
                            lost.add(s);
                        } else {
                            opened.put(s, n);
                        }
                        return null;
                    });
            if (!counted.isEmpty()) {
                openedVersions = new OpenedVersions(java.util.Set.copyOf(counted), opened);
            }
        }
        lost.removeAll(applied.keySet());
        if (lost.isEmpty()) {
            return null;
        }
        for (Seq s : lost) {
            applied.put(s, new MetadataStore.Entry(s, null, null, false, true, null, null));
        }
        fresh.removeAll(lost);
        cx.listener().onEvent(new SnapshotEvent.LedgerRepaired(cx.settings().name(), cx.runId(),
                lost.stream().map(Seq::shown).toList()));
        return lost.first();
    }

    static Seq lower(Seq a, Seq b) {
        return a == null || b.compareTo(a) < 0 ? b : a;
    }

    /**
     * A batch about to be applied that already has set-aside rows in the error log: its ledger entry was deleted by
     * hand and it opened and closed no version (so the history did not show it to {@link #checkLedger}), or a run
     * without transactions died between logging and recording it. Applying it logs them again, so they are forgotten
     * first; the batch is reported as repaired. One read, only by runs that apply new batches.
     */
    void forgetRowsLoggedWithoutEntry(ResolvedModel m, TreeSet<Seq> fresh) {
        if (fresh.isEmpty()) {
            return;
        }
        List<Seq> logged = new ArrayList<>();
        for (String text : cx.store().loggedSequences(new ArrayList<>(fresh))) {
            logged.add(Seq.parse(m, text));
        }
        if (logged.isEmpty()) {
            return;
        }
        logged.sort(null);
        cx.store().forget(logged);
        cx.jdbc().commit("repair ledger");
        cx.listener().onEvent(new SnapshotEvent.LedgerRepaired(cx.settings().name(), cx.runId(),
                logged.stream().map(Seq::shown).toList()));
    }

    /**
     * Step 2: undo history writes the ledger does not record (a crash between a write and its ledger entry). Needed
     * only when the previous run did not finish, or when the database has no transactional DML.
     */
    void recover(SnapshotRun.Resolved r) {
        ResolvedModel m = r.m();
        boolean needed = cx.transactional() ? "running".equals(cx.previousStatus())
                : !"success".equals(cx.previousStatus());
        if (r.targetColumns() == null || !needed) {
            return;
        }
        TreeSet<Seq> recorded = new TreeSet<>(cx.store().ledger(m).keySet());
        TreeSet<Seq> inHistory = new TreeSet<>();
        for (String column : List.of(m.meta().openedSeq(), m.meta().closedSeq())) {
            cx.jdbc().query(r.tables().historySequences(column), rs -> inHistory.add(Seq.read(m, rs, 1)));
        }
        inHistory.removeAll(recorded);
        if (!inHistory.isEmpty() && (recorded.isEmpty() || inHistory.first().compareTo(recorded.last()) > 0)) {
            // the usual case: a batch (or, after a replay forgot its batches, everything from the replay point on)
            // written but not recorded, above every recorded one: the replay's own roll back undoes it
            Seq from = inHistory.first();
            List<String> reset = new ArrayList<>();
            cx.store().columns().values().forEach(c -> {
                if (c.introducedText() != null
                        && Seq.parse(m, c.introducedText()).compareTo(from) >= 0) {
                    reset.add(c.name());
                }
            });
            recoverBy(m, Rollback.from(from.value(), reset)); // the archive's rows from there on go with it
        } else {
            for (Seq s : inHistory.descendingSet()) {
                recoverBy(m, Rollback.batch(s.value()));
            }
        }
        if (r.archiveColumns() != null) {
            TreeSet<Seq> archived = new TreeSet<>();
            cx.jdbc().query(r.tables().archivedSequences(), rs ->
                    archived.add(Seq.read(m, rs, 1)));
            archived.removeAll(recorded);
            archived.removeAll(inHistory); // already undone with their batch
            for (Seq s : archived) {
                recoverBy(m, Rollback.archived(s.value()));
            }
        }
        // set-aside rows logged for a batch that was never recorded (its replay logs them again)
        List<Seq> logged = new ArrayList<>();
        for (String text : cx.store().loggedSequences()) {
            Seq s = Seq.parse(m, text);
            if (!recorded.contains(s)) {
                logged.add(s);
            }
        }
        if (!logged.isEmpty()) {
            cx.store().forget(logged);
        }
        // untracked_columns: overwrite: a run that stopped inside a key-scoped roll back (its ledger entries already
        // forgotten, its keys' versions rolled back, their values not yet restored) leaves no sequence to find above
        recoverBy(m, Rollback.restoreOnly());
        cx.jdbc().commit("recover");
    }

    void recoverBy(ResolvedModel m, Rollback r) {
        cx.sql().rollback(m, r).forEach(s -> cx.jdbc().update(s.inStep("recover")));
    }
}
