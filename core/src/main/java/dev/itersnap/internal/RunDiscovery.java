package dev.itersnap.internal;

import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.core.Restatements;
import dev.itersnap.core.SnapshotEvent;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * What the source holds and what changed in it: the distinct sequences, the fingerprints of the applied batches a run
 * compares (restatements), of the batches it stages and of the keys a key-scoped replay stages, and the detection of
 * late batches (the replay point). Part of one {@link SnapshotRun}, whose state it reads and sets.
 */
final class RunDiscovery {
    private final SnapshotRun run;

    RunDiscovery(SnapshotRun run) {
        this.run = run;
    }

    /** Step 3: the sequences present in the source (nothing else: no row is counted or hashed here). */
    SnapshotRun.Discovery discover() {
        if (run.pendingColumns != null) {
            run.jdbc.query(run.tables.pendingBatches(), rs -> {
                        run.pending.put(Seq.read(run.m, rs, 1), rs.getString(2));
                        return null;
                    });
            run.pendingUsed = !run.pending.isEmpty();
        }
        TreeSet<Seq> seqs = new TreeSet<>();
        boolean[] nulls = {false};
        run.prints = run.settings.restatements() == Restatements.DETECT ? Fingerprints.of(run.dialect, run.m) : null;
        run.jdbc.query(run.sql.discoverSequences(run.m), rs -> {
            Object v = run.m.sequenceType().read(rs, 1);
            if (v == null) {
                nulls[0] = true;
            } else {
                seqs.add(Seq.of(run.m, v));
            }
            return null;
        });
        return new SnapshotRun.Discovery(seqs, nulls[0], new java.util.HashMap<>(), new java.util.HashMap<>());
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
    void compare(TreeMap<Seq, MetadataStore.Entry> applied, SnapshotRun.Discovery source, TreeSet<Seq> fresh) {
        if (run.prints != null) {
            // an entry that names this run's signature was recorded with its format (see recordFormat)
            String sig = run.prints.signature() + ":";
            run.formatRecorded = applied.values().stream().anyMatch(e -> e.fingerprint() != null
                    && e.fingerprint().startsWith(sig));
        }
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
        // dropped or widened since, or the entry predates fingerprints) is compared over the columns its fingerprint
        // covers where the source still has them as they were (compareOlderFormats), and every batch the source
        // holds is fingerprinted again in this one run, so that the ledger records them over the columns it has now
        boolean columnsChanged = run.prints != null && held.stream().map(applied::get)
                .anyMatch(e -> !e.reproduced() && !run.prints.comparable(e.fingerprint()));
        // a deliberate rebuild (replay, full refresh) compares every applied batch too, as its dry run shows
        boolean all = run.operation == SnapshotRun.Operation.FULL_CHECK || run.operation == SnapshotRun.Operation.REPLAY
                || run.operation == SnapshotRun.Operation.FULL_REFRESH || columnsChanged;
        TreeSet<Seq> checked = new TreeSet<>();
        if (!all) {
            int newest = Math.max(0, held.size() - run.settings.restatementLookback());
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
            int sweep = Math.min(run.settings.restatementSweep(), older.size());
            if (sweep > 0) {
                Seq after = null;
                try {
                    after = run.sweptThrough == null ? null : Seq.parse(run.m, run.sweptThrough);
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
                run.checkedThrough = swept.get(swept.size() - 1).text();
            }
            if (checked.isEmpty()) {
                return;
            }
        }
        // a replay thousands of batches deep compares them all in one pass rather than binding each sequence
        boolean every = all || checked.size() > SnapshotRun.MAX_BOUND_SEQUENCES;
        readFingerprints(source, every ? null : checked.stream().map(Seq::value).map(v -> (Object) v).toList());
        if (run.prints != null) {
            run.restated.putAll(run.prints.restated(applied, source.fingerprints()));
            if (columnsChanged) {
                compareOlderFormats(applied, held);
            }
        }
    }

    /**
     * The applied batches among {@code held} whose fingerprint has another signature than this run's (the source's
     * columns changed since they were fingerprinted): each is compared over the columns its fingerprint covers, read
     * from the fingerprint formats table, in one statement per earlier format; one whose content differs is restated.
     * Where that cannot be done (a column it covers left the source or changed type, or its format is unknown) nothing
     * tells whether the batch was corrected since: it is uncomparable, and replayed like a restated batch (never
     * recorded again as if compared).
     */
    private void compareOlderFormats(TreeMap<Seq, MetadataStore.Entry> applied, List<Seq> held) {
        Fingerprints.OlderFormats found = Fingerprints.compareOlderFormats(run.jdbc, run.dialect, run.m, run.prints,
                applied, held, run.store::formats);
        run.restated.putAll(found.restated());
        run.uncomparable.putAll(found.uncomparable());
        if (!run.uncomparable.isEmpty()) {
            run.listener.onEvent(new SnapshotEvent.UncomparableBatches(run.settings.name(), run.runId,
                    found.columns(), run.uncomparable.size(), run.uncomparable.firstKey().shown()));
        }
    }

    /**
     * The rows and fingerprints of the source's batches {@code sequences} (null: every batch, as an adoption records
     * them) into {@code source}.
     */
    void readFingerprints(SnapshotRun.Discovery source, List<Object> sequences) {
        Fingerprints columnsOnly = Fingerprints.of(run.dialect, run.m);
        run.jdbc.query(run.sql.fingerprintSequences(run.m, run.prints == null ? null : run.prints.columns(),
                sequences), rs -> {
            Object v = run.m.sequenceType().read(rs, 1);
            if (v != null) {
                Seq s = Seq.of(run.m, v);
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
    String fingerprint(java.sql.ResultSet rs, Fingerprints columnsOnly) throws SQLException {
        long rows = rs.getLong(2);
        java.math.BigDecimal hash = rs.getMetaData().getColumnCount() > 2 ? rs.getBigDecimal(3) : null;
        if (run.prints == null) {
            return columnsOnly.withoutHash(rows); // the columns a batch is applied under, without a hash
        }
        return hash == null ? null : run.prints.of(rows, hash);
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
    List<Seq> fingerprintStaged(SnapshotRun.Discovery source, List<Seq> fromSource) {
        Map<Seq, String> found = new java.util.HashMap<>(source.fingerprints());
        run.recorded = found;
        Fingerprints columnsOnly = Fingerprints.of(run.dialect, run.m);
        java.util.Set<Seq> staged = new java.util.HashSet<>();
        run.jdbc.query(run.sql.fingerprintStaged(run.m, run.prints == null ? null : run.prints.columns()), rs -> {
            Object v = run.m.sequenceType().read(rs, 1);
            if (v != null) {
                Seq s = Seq.of(run.m, v);
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
                found.put(s, run.prints == null ? columnsOnly.withoutHash(0) : run.prints.of(0,
                        java.math.BigDecimal.ZERO));
            }
        }
        run.store.fingerprints(found);
        recordFormat();
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
    void checkReplayedKeys(List<Seq> replayed, SnapshotRun.Discovery source) {
        if (run.prints == null || replayed.isEmpty() || run.recorded == null) {
            return;
        }
        List<Object> bound = replayed.size() > SnapshotRun.MAX_BOUND_SEQUENCES ? null
                : replayed.stream().map(Seq::value).map(v -> (Object) v).toList();
        dev.itersnap.spi.Statement check = run.sql.fingerprintReplayedKeys(run.m, run.prints.columns(), bound);
        if (check == null) {
            return;
        }
        Map<Seq, java.math.BigDecimal> whole = new java.util.HashMap<>();
        Map<Seq, java.math.BigDecimal> keyed = new java.util.HashMap<>();
        Map<Seq, java.math.BigDecimal> staged = new java.util.HashMap<>();
        run.jdbc.query(check, rs -> {
            Object v = run.m.sequenceType().read(rs, 1);
            if (v != null) {
                Seq s = Seq.of(run.m, v);
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
                run.recorded.put(s, run.prints.of(compared == null ? 0 : Fingerprints.rows(compared),
                        java.math.BigDecimal.ZERO));
                changed = true;
            }
        }
        if (changed) {
            run.store.fingerprints(run.recorded);
        }
    }

    /**
     * The fingerprints to record for applied batches this run does not apply again: those the ledger has none for,
     * or one over other columns (a column added, dropped or widened since), found in the source now.
     */
    Map<Seq, String> unrecordedFingerprints(TreeMap<Seq, MetadataStore.Entry> applied, SnapshotRun.Discovery source,
                                                    TreeSet<Seq> batches) {
        Map<Seq, String> out = new TreeMap<>();
        if (run.prints == null) {
            return out;
        }
        for (MetadataStore.Entry e : applied.values()) {
            String now = source.fingerprints().get(e.sequence());
            if (now != null && !e.lost() && !e.reproduced() && !batches.contains(e.sequence())
                    && !run.prints.comparable(e.fingerprint())) {
                out.put(e.sequence(), Fingerprints.recordedLater(now));
            }
        }
        return out;
    }

    /** Records the fingerprints {@link #unrecordedFingerprints} found, under the lock. */
    void recordFingerprints(Map<Seq, String> unrecorded) {
        if (unrecorded.isEmpty()) {
            return;
        }
        run.lock.verifyHeld();
        recordFormat();
        run.store.recordFingerprints(unrecorded);
        run.jdbc.commit("record fingerprints");
    }

    /**
     * Rows added to a batch after it was applied are replayed as a restatement when the batch's fingerprint is
     * compared. When it is not ({@code restatements: ignore}, a ledger entry recorded before fingerprints were, or
     * over other columns), each applied batch that this run does not apply again and whose rows in the source
     * outnumber those the ledger recorded is reported, so that nothing is dropped silently. A {@code replay --from}
     * the batch applies them.
     */
    void warnAboutGrownBatches(TreeMap<Seq, MetadataStore.Entry> applied, SnapshotRun.Discovery source,
                                       TreeSet<Seq> batches) {
        for (MetadataStore.Entry e : applied.values()) {
            Long now = source.rows().get(e.sequence());
            if (now != null && !e.lost() && !e.reproduced() && now > e.sourceRows()
                    && !batches.contains(e.sequence()) && (run.prints == null
                    || !run.prints.comparable(e.fingerprint()))) {
                run.listener.onEvent(new SnapshotEvent.RowsAddedToAppliedBatch(run.settings.name(), run.runId,
                        e.sequence().shown(), now, e.sourceRows()));
            }
        }
    }

    /**
     * Records what this run's fingerprint signature stands for, before the first ledger entry that names it, unless an
     * applied batch's fingerprint names it already (then it was recorded with that entry's): a later run whose source
     * has other columns compares those entries over the columns they cover ({@link #compareOlderFormats}).
     */
    void recordFormat() {
        if (run.prints == null || run.formatRecorded) {
            return;
        }
        run.formatRecorded = true;
        run.store.recordFormat(run.prints);
    }

    /** Step 4: decide the replay point (late batches, or a deliberate replay / full refresh). */
    boolean detect(TreeSet<Seq> fresh, TreeMap<Seq, MetadataStore.Entry> applied, SnapshotRun.Discovery source,
                           Seq lostFrom) {
        Seq point = lostFrom;
        if (run.operation == SnapshotRun.Operation.REPLAY) {
            try {
                Seq asked = Seq.coerce(run.m, run.replayFrom);
                point = point == null || asked.compareTo(point) < 0 ? asked : point;
            } catch (IllegalArgumentException e) {
                throw new ItersnapException(ErrorCode.INVALID_SEQUENCE, "model '" + run.settings.name()
                        + "': cannot replay"
                        + " from " + run.replayFrom + ": " + e.getMessage() + " (" + run.m.sequenceDescription() + ")");
            }
        }
        if (run.operation == SnapshotRun.Operation.FULL_REFRESH && !applied.isEmpty()
                && !source.sequences().isEmpty()) {
            Seq first = source.sequences().first();
            point = point == null || first.compareTo(point) < 0 ? first : point;
        }
        boolean late = false;
        if (!fresh.isEmpty() && !applied.isEmpty() && fresh.first().compareTo(applied.lastKey()) < 0) {
            late = true;
            Seq lateFrom = fresh.first();
            point = point == null || lateFrom.compareTo(point) < 0 ? lateFrom : point;
            List<Object> incoming = fresh.headSet(applied.lastKey()).stream().map(Seq::shown).toList();
            run.listener.onEvent(new SnapshotEvent.OutOfOrder(run.settings.name(), run.runId, incoming,
                    applied.lastKey().shown(),
                    point.shown()));
        }
        if (!run.restated.isEmpty()) {
            // a restated batch is replayed like a late one, for every key, with everything applied after it
            Seq first = run.restated.firstKey();
            point = point == null || first.compareTo(point) < 0 ? first : point;
            for (MetadataStore.Entry e : run.restated.values()) {
                run.listener.onEvent(new SnapshotEvent.BatchRestated(run.settings.name(), run.runId,
                        e.sequence().shown(),
                        Fingerprints.rows(e.fingerprint()), source.rows().getOrDefault(e.sequence(), 0L)));
            }
        }
        if (!run.uncomparable.isEmpty()) {
            // batches fingerprinted over columns the source no longer has as they were: replayed, for every key
            Seq first = run.uncomparable.firstKey();
            point = point == null || first.compareTo(point) < 0 ? first : point;
        }
        if (point != null && (applied.isEmpty() || point.compareTo(applied.lastKey()) > 0)) {
            point = null; // nothing applied at or after it: nothing to roll back
        }
        run.replayPoint = point;
        return late;
    }
}
