package dev.itersnap.internal;

import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.core.Restatements;
import dev.itersnap.core.SnapshotEvent;
import dev.itersnap.spi.Statement;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * What the source holds and what changed in it: the distinct sequences, the fingerprints of the applied batches a run
 * compares (restatements), of the batches it stages and of the keys a key-scoped replay stages, and the detection of
 * late batches (the replay point). Part of one {@link SnapshotRun}: each step returns what it found, which the run
 * holds and passes on; it shares only the run's {@link RunContext}.
 */
final class RunDiscovery {
    private final RunContext cx;
    /**
     * True once this run made sure its fingerprint format is recorded ({@link #recordFormat}): set from the ledger by
     * {@link #compare}, so that the format is written at most once, before the first entry that names it.
     */
    private boolean formatRecorded;

    /**
     * What {@link #compare} found: the applied batches whose fingerprint in the source differs from the ledger's
     * (restated), those whose fingerprint covers columns the source no longer has as they were, so that whether they
     * were corrected since cannot be told (uncomparable: replayed like restated ones), both in business order; and the
     * batch this run's sweep stopped at (its text), or null when it swept nothing.
     */
    record Compared(TreeMap<Seq, MetadataStore.Entry> restated, TreeMap<Seq, MetadataStore.Entry> uncomparable,
                    String checkedThrough) {
    }

    /**
     * What {@link #fingerprintStaged} found: the batches with no row staged, and the fingerprints recorded for the
     * batches the run applies.
     */
    record Staged(List<Seq> gone, Map<Seq, Fingerprint> recorded) {
    }

    RunDiscovery(RunContext cx) {
        this.cx = cx;
    }

    /** Step 3: the sequences present in the source (nothing else: no row is counted or hashed here). */
    SnapshotRun.Discovery discover(SnapshotRun.Resolved r) {
        ResolvedModel m = r.m();
        Map<Seq, String> pending = new java.util.HashMap<>(); // a deletion time may be null
        // the pending table's batches read with the source's sequences where the discovery allows (one statement)
        Statement both = r.pendingColumns() != null ? cx.sql().discoverSequencesAndPending(m) : null;
        if (r.pendingColumns() != null && both == null) {
            cx.jdbc().query(r.tables().pendingBatches(), rs -> {
                        pending.put(Seq.read(m, rs, 1), rs.getString(2));
                        return null;
                    });
        }
        TreeSet<Seq> seqs = new TreeSet<>();
        boolean[] nulls = {false};
        Fingerprints prints = cx.settings().restatements() == Restatements.DETECT ? Fingerprints.of(cx.dialect(), m)
                : null;
        cx.jdbc().query(both != null ? both : cx.sql().discoverSequences(m), rs -> {
            Object v = m.sequenceType().read(rs, 1);
            if (both != null && rs.getInt(3) == 1) {
                pending.put(Seq.of(m, v), rs.getString(2));
            } else if (v == null) {
                nulls[0] = true;
            } else {
                seqs.add(Seq.of(m, v));
            }
            return null;
        });
        return new SnapshotRun.Discovery(seqs, nulls[0], new java.util.HashMap<>(), new java.util.HashMap<>(), prints,
                java.util.Collections.unmodifiableMap(pending));
    }

    /**
     * Step 3: compares applied batches with the source, a bounded number per run: the {@code restatement_lookback}
     * newest applied batches the source holds, the batches a late batch makes this run replay (their rows and
     * fingerprints decide whether the replay can be key-scoped), and {@code restatement_sweep} older ones, taking up
     * after the batch where the last sweep stopped and starting over at the oldest (so every retained batch is compared
     * within a bounded number of runs). A full check ({@link Operation#FULL_CHECK}) compares every applied batch the
     * source holds. One statement, which counts (and with {@code restatements: detect} hashes) only those batches'
     * rows; the applied batches among them whose content hash differs from the ledger's are restated.
     * {@code sweptThrough}: the batch the sweep of the last run that swept stopped at (its text), or null.
     */
    Compared compare(ResolvedModel m, TreeMap<Seq, MetadataStore.Entry> applied, SnapshotRun.Discovery source,
                     TreeSet<Seq> fresh,
                     String sweptThrough) {
        Fingerprints prints = source.prints();
        TreeMap<Seq, MetadataStore.Entry> restated = new TreeMap<>();
        TreeMap<Seq, MetadataStore.Entry> uncomparable = new TreeMap<>();
        String checkedThrough = null;
        if (prints != null) {
            // an entry that names this run's signature was recorded with its format (see recordFormat)
            formatRecorded = applied.values().stream().anyMatch(e -> e.fingerprint() != null
                    && e.fingerprint().signature().equals(prints.signature()));
        }
        List<Seq> held = new ArrayList<>();
        for (MetadataStore.Entry e : applied.values()) {
            if (!e.lost() && source.sequences().contains(e.sequence())) {
                held.add(e.sequence());
            }
        }
        if (held.isEmpty()) {
            return new Compared(restated, uncomparable, checkedThrough);
        }
        // an applied batch whose fingerprint covers other columns than the source has now (a column was added,
        // dropped or widened since, or the entry predates fingerprints) is compared over the columns its fingerprint
        // covers where the source still has them as they were (compareOlderFormats), and every batch the source
        // holds is fingerprinted again in this one run, so that the ledger records them over the columns it has now
        boolean columnsChanged = prints != null && held.stream().map(applied::get)
                .anyMatch(e -> !e.reproduced() && !prints.comparable(e.fingerprint()));
        // a deliberate rebuild (replay, full refresh) compares every applied batch too, as its dry run shows
        boolean all = cx.operation().comparesAll() || columnsChanged;
        TreeSet<Seq> checked = new TreeSet<>();
        if (!all) {
            int newest = Math.max(0, held.size() - cx.settings().restatementLookback());
            checked.addAll(held.subList(newest, held.size()));
            Seq late = ReplayDecision.lateFrom(fresh, applied.navigableKeySet());
            if (late != null) {
                for (Seq s : held) {
                    if (s.compareTo(late) > 0) {
                        checked.add(s);
                    }
                }
            }
            List<Seq> older = new ArrayList<>(held.subList(0, newest));
            older.removeAll(checked);
            int sweep = Math.min(cx.settings().restatementSweep(), older.size());
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
                return new Compared(restated, uncomparable, checkedThrough);
            }
        }
        // a replay thousands of batches deep compares them all in one pass rather than binding each sequence
        boolean every = all || checked.size() > SnapshotRun.MAX_BOUND_SEQUENCES;
        readFingerprints(m, source, every ? null : checked.stream().<Object>map(Seq::value).toList());
        if (prints != null) {
            restated.putAll(prints.restated(applied, source.fingerprints()));
            if (columnsChanged) {
                compareOlderFormats(m, applied, held, prints, restated, uncomparable);
            }
        }
        return new Compared(restated, uncomparable, checkedThrough);
    }

    /**
     * The applied batches among {@code held} whose fingerprint has another signature than this run's (the source's
     * columns changed since they were fingerprinted): each is compared over the columns its fingerprint covers, read
     * from the fingerprint formats table, in one statement per earlier format; one whose content differs is restated.
     * Where that cannot be done (a column it covers left the source or changed type, or its format is unknown) nothing
     * tells whether the batch was corrected since: it is uncomparable, and replayed like a restated batch (never
     * recorded again as if compared). Adds what it finds to {@code restated} and {@code uncomparable}.
     */
    private void compareOlderFormats(ResolvedModel m, TreeMap<Seq, MetadataStore.Entry> applied, List<Seq> held,
                                     Fingerprints prints,
                                     TreeMap<Seq, MetadataStore.Entry> restated,
                                     TreeMap<Seq, MetadataStore.Entry> uncomparable) {
        Fingerprints.OlderFormats found = Fingerprints.compareOlderFormats(cx.jdbc(), cx.dialect(), m, prints,
                applied, held, cx.store()::formats);
        restated.putAll(found.restated());
        uncomparable.putAll(found.uncomparable());
        if (!uncomparable.isEmpty()) {
            cx.listener().onEvent(new SnapshotEvent.UncomparableBatches(cx.settings().name(), cx.runId(),
                    found.columns(), uncomparable.size(), uncomparable.firstKey().shown()));
        }
    }

    /**
     * The rows and fingerprints of the source's batches {@code sequences} (null: every batch, as an adoption records
     * them) into {@code source}.
     */
    void readFingerprints(ResolvedModel m, SnapshotRun.Discovery source, List<Object> sequences) {
        Fingerprints columnsOnly = Fingerprints.of(cx.dialect(), m);
        Fingerprints prints = source.prints();
        cx.jdbc().query(cx.sql().fingerprintSequences(m, prints == null ? null : prints.columns(),
                sequences), rs -> {
            Object v = m.sequenceType().read(rs, 1);
            if (v != null) {
                Seq s = Seq.of(m, v);
                source.rows().put(s, rs.getLong(2));
                Fingerprint fingerprint = fingerprint(rs, columnsOnly, prints);
                if (fingerprint != null) {
                    source.fingerprints().put(s, fingerprint);
                }
            }
            return null;
        });
    }

    /**
     * The fingerprint of the batch of a fingerprint statement's row (sequence, rows, hash): with {@code restatements:
     * ignore} ({@code prints} null) the columns it covers and its rows without a hash; null where the dialect gave no
     * hash.
     */
    static Fingerprint fingerprint(java.sql.ResultSet rs, Fingerprints columnsOnly, Fingerprints prints)
            throws SQLException {
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
    Staged fingerprintStaged(ResolvedModel m, SnapshotRun.Discovery source, List<Seq> fromSource) {
        Fingerprints prints = source.prints();
        Map<Seq, Fingerprint> found = new java.util.HashMap<>(source.fingerprints());
        Fingerprints columnsOnly = Fingerprints.of(cx.dialect(), m);
        java.util.Set<Seq> staged = new java.util.HashSet<>();
        cx.jdbc().query(cx.sql().fingerprintStaged(m, prints == null ? null : prints.columns()), rs -> {
            Object v = m.sequenceType().read(rs, 1);
            if (v != null) {
                Seq s = Seq.of(m, v);
                staged.add(s);
                Fingerprint fingerprint = fingerprint(rs, columnsOnly, prints);
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
                found.put(s, prints == null ? columnsOnly.withoutHash(0) : prints.of(0,
                        java.math.BigDecimal.ZERO));
            }
        }
        cx.store().fingerprints(found);
        recordFormat(prints);
        return new Staged(gone, found);
    }

    /**
     * A key-scoped replay records each replayed batch with the fingerprint {@link #compare} read, and stages the
     * batch's rows of the keys it recomputes in a later statement: a loader that deleted the batch between the two and
     * inserted it again unchanged would leave those keys without its rows, with nothing for a later comparison to
     * find. So, once staged, one statement reads each replayed batch's hash and the hash of its rows of those keys from
     * the source (one snapshot), and the hash of the rows staged: unless the batch is as compared and the staged rows
     * are its rows of those keys, the batch is recorded with a content hash of 0, which matches no content, and the
     * next run that compares it replays it for every key. {@code recorded}: what {@link #fingerprintStaged} recorded,
     * corrected here.
     */
    void checkReplayedKeys(ResolvedModel m, List<Seq> replayed, SnapshotRun.Discovery source,
                           Map<Seq, Fingerprint> recorded) {
        Fingerprints prints = source.prints();
        if (prints == null || replayed.isEmpty()) {
            return;
        }
        List<Object> bound = replayed.size() > SnapshotRun.MAX_BOUND_SEQUENCES ? null
                : replayed.stream().<Object>map(Seq::value).toList();
        dev.itersnap.spi.Statement check = cx.sql().fingerprintReplayedKeys(m, prints.columns(), bound);
        if (check == null) {
            return;
        }
        Map<Seq, java.math.BigDecimal> whole = new java.util.HashMap<>();
        Map<Seq, java.math.BigDecimal> keyed = new java.util.HashMap<>();
        Map<Seq, java.math.BigDecimal> staged = new java.util.HashMap<>();
        cx.jdbc().query(check, rs -> {
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
            Fingerprint compared = source.fingerprints().get(s);
            java.math.BigDecimal expected = compared == null ? null : compared.hash();
            boolean asCompared = expected != null && whole.get(s) != null && expected.compareTo(whole.get(s)) == 0;
            java.math.BigDecimal k = keyed.get(s) == null ? java.math.BigDecimal.ZERO : keyed.get(s);
            java.math.BigDecimal st = staged.get(s) == null ? java.math.BigDecimal.ZERO : staged.get(s);
            if (!asCompared || k.compareTo(st) != 0) {
                recorded.put(s, prints.of(compared == null ? 0 : compared.rows(),
                        java.math.BigDecimal.ZERO));
                changed = true;
            }
        }
        if (changed) {
            cx.store().fingerprints(recorded);
        }
    }

    /**
     * The fingerprints to record for applied batches this run does not apply again: those the ledger has none for,
     * or one over other columns (a column added, dropped or widened since), found in the source now.
     */
    Map<Seq, Fingerprint> unrecordedFingerprints(TreeMap<Seq, MetadataStore.Entry> applied, SnapshotRun.Discovery source,
                                                    TreeSet<Seq> batches) {
        Map<Seq, Fingerprint> out = new TreeMap<>();
        Fingerprints prints = source.prints();
        if (prints == null) {
            return out;
        }
        for (MetadataStore.Entry e : applied.values()) {
            Fingerprint now = source.fingerprints().get(e.sequence());
            if (now != null && !e.lost() && !e.reproduced() && !batches.contains(e.sequence())
                    && !prints.comparable(e.fingerprint())) {
                out.put(e.sequence(), now.later());
            }
        }
        return out;
    }

    /** Records the fingerprints {@link #unrecordedFingerprints} found (over {@code prints}), under the lock. */
    void recordFingerprints(Map<Seq, Fingerprint> unrecorded, Fingerprints prints) {
        if (unrecorded.isEmpty()) {
            return;
        }
        cx.lock().verifyHeld();
        recordFormat(prints);
        cx.store().recordFingerprints(unrecorded);
        cx.jdbc().commit("record fingerprints");
    }

    /**
     * Rows added to a batch after it was applied are replayed as a restatement when the batch's fingerprint is
     * compared. When it is not ({@code restatements: ignore}, or
     * over other columns), each applied batch that this run does not apply again and whose rows in the source
     * outnumber those the ledger recorded is reported, so that nothing is dropped silently. A {@code replay --from}
     * the batch applies them.
     */
    void warnAboutGrownBatches(TreeMap<Seq, MetadataStore.Entry> applied, SnapshotRun.Discovery source,
                                       TreeSet<Seq> batches) {
        for (MetadataStore.Entry e : applied.values()) {
            Long now = source.rows().get(e.sequence());
            if (now != null && !e.lost() && !e.reproduced() && now > e.sourceRows()
                    && !batches.contains(e.sequence()) && (source.prints() == null
                    || !source.prints().comparable(e.fingerprint()))) {
                cx.listener().onEvent(new SnapshotEvent.RowsAddedToAppliedBatch(cx.settings().name(), cx.runId(),
                        e.sequence().shown(), now, e.sourceRows()));
            }
        }
    }

    /**
     * Records what this run's fingerprint signature stands for, before the first ledger entry that names it, unless an
     * applied batch's fingerprint names it already (then it was recorded with that entry's): a later run whose source
     * has other columns compares those entries over the columns they cover ({@link #compareOlderFormats}).
     */
    private void recordFormat(Fingerprints prints) {
        if (prints == null || formatRecorded) {
            return;
        }
        formatRecorded = true;
        cx.store().recordFormat(prints);
    }

    /**
     * Step 4: decide the replay point and the batches to apply (late batches, restated or uncomparable ones, or a
     * deliberate replay / full refresh), reporting the late and restated batches.
     */
    ReplayDecision.Decision detect(ResolvedModel m, TreeSet<Seq> fresh, TreeMap<Seq, MetadataStore.Entry> applied,
                                   SnapshotRun.Discovery source, Compared compared, Seq lostFrom) {
        Seq requested = null;
        if (cx.operation().requestsPoint()) {
            try {
                requested = Seq.coerce(m, cx.replayFrom());
            } catch (IllegalArgumentException e) {
                throw new ItersnapException(ErrorCode.INVALID_SEQUENCE, "model '" + cx.settings().name()
                        + "': cannot replay"
                        + " from " + cx.replayFrom() + ": " + e.getMessage() + " (" + m.sequenceDescription() + ")");
            }
        }
        ReplayDecision.Decision d = ReplayDecision.decide(new ReplayDecision.Found(
                cx.operation().rebuildsFromSource(), requested, applied.navigableKeySet(), fresh,
                source.sequences(), compared.restated().navigableKeySet(), compared.uncomparable().navigableKeySet(),
                lostFrom));
        if (d.late()) {
            List<Object> incoming = fresh.headSet(applied.lastKey()).stream().map(Seq::shown).toList();
            cx.listener().onEvent(new SnapshotEvent.OutOfOrder(cx.settings().name(), cx.runId(), incoming,
                    applied.lastKey().shown(), d.point().shown()));
        }
        // a restated batch is replayed like a late one, for every key, with everything applied after it
        for (MetadataStore.Entry e : compared.restated().values()) {
            cx.listener().onEvent(new SnapshotEvent.BatchRestated(cx.settings().name(), cx.runId(),
                    e.sequence().shown(),
                    e.fingerprint().rows(), source.rows().getOrDefault(e.sequence(), 0L)));
        }
        return d;
    }
}
