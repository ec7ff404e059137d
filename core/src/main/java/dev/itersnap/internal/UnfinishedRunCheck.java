package dev.itersnap.internal;

import dev.itersnap.core.SnapshotEvent;
import dev.itersnap.core.SnapshotListener;
import dev.itersnap.core.TableName;
import dev.itersnap.spi.Dialect;
import dev.itersnap.spi.MetadataSchema;
import dev.itersnap.spi.Statement;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * After a run that did not finish (the run log still shows it running, and this run holds the lock, so it is dead):
 * are the batches it recorded in the ledger really in the history? A database whose commit is not durable when it
 * returns (H2 with a write delay, decision 0007) can come back with the ledger's entries and only part of the versions
 * they count. Each such batch must have opened exactly as many versions as its entry's {@code inserted} count (what
 * the engine counts as inserted is the versions a batch opens, deletion records included); a batch that did not is
 * treated like a batch whose ledger entry was lost, so the history is replayed from the first of them.
 *
 * <p>Scoped to the entries of the unfinished runs: one read of the run log and one grouped count of the history
 * restricted to those batches (through the index on the opened sequence), only on a run that follows an unfinished
 * one. Ordinary runs do nothing here.
 */
final class UnfinishedRunCheck {
    /** Batches per count statement: far below every database's limit of bound values. */
    private static final int CHUNK = 500;

    private UnfinishedRunCheck() {
    }

    /**
     * Marks the entries of {@code applied} recorded by an unfinished run whose versions the history does not hold as
     * lost (so {@code detect} replays from the first and the replay is not key-scoped), reports them, and returns the
     * first, or null when every one is in the history.
     */
    static Seq verify(Jdbc jdbc, Dialect dialect, ResolvedModel m, String runId, SnapshotListener listener,
                      TreeMap<Seq, MetadataStore.Entry> applied) {
        Set<String> unfinished = unfinishedRuns(jdbc, dialect, m, runId);
        List<MetadataStore.Entry> claimed = new ArrayList<>();
        for (MetadataStore.Entry e : applied.values()) {
            if (e.runId() != null && unfinished.contains(e.runId()) && !e.lost() && e.counts() != null) {
                claimed.add(e);
            }
        }
        if (claimed.isEmpty()) {
            return null;
        }
        Map<Seq, Long> opened = openedVersions(jdbc, dialect, m, claimed);
        TreeSet<Seq> missing = new TreeSet<>();
        long recorded = 0;
        long found = 0;
        for (MetadataStore.Entry e : claimed) {
            long holds = opened.getOrDefault(e.sequence(), 0L);
            if (holds != e.counts().inserted()) {
                missing.add(e.sequence());
                recorded += e.counts().inserted();
                found += holds;
                applied.put(e.sequence(), new MetadataStore.Entry(e.sequence(), e.runId(), e.deletionTime(),
                        e.reproduced(), true, e.counts(), e.fingerprint()));
            }
        }
        if (missing.isEmpty()) {
            return null;
        }
        listener.onEvent(new SnapshotEvent.UnfinishedRunRepaired(m.name(), runId, new ArrayList<>(unfinished),
                missing.stream().map(Seq::shown).toList(), recorded, found));
        return missing.first();
    }

    /** The runs of the model, other than this one, that the run log shows running. */
    private static Set<String> unfinishedRuns(Jdbc jdbc, Dialect dialect, ResolvedModel m, String runId) {
        MetadataSchema.Runs r = m.metadata().runs();
        return new TreeSet<>(jdbc.query(Statement.builder("verify unfinished run").sql("SELECT "
                + dialect.quote(r.runId()) + " FROM " + name(dialect, r.spec().name()) + " WHERE "
                + dialect.quote(r.model()) + " = ").bind(m.name()).sql(" AND " + dialect.quote(r.status())
                + " = 'running' AND " + dialect.quote(r.runId()) + " <> ").bind(runId).build(), rs -> rs.getString(1)));
    }

    /** The versions each of the batches opened: one grouped count per {@value #CHUNK} batches. */
    private static Map<Seq, Long> openedVersions(Jdbc jdbc, Dialect dialect, ResolvedModel m,
                                                 List<MetadataStore.Entry> batches) {
        String opened = dialect.quote(m.meta().openedSeq());
        Map<Seq, Long> out = new HashMap<>();
        for (int from = 0; from < batches.size(); from += CHUNK) {
            List<MetadataStore.Entry> chunk = batches.subList(from, Math.min(batches.size(), from + CHUNK));
            Statement.Builder b = Statement.builder("verify unfinished run").sql("SELECT " + opened + ", COUNT(*) FROM "
                    + name(dialect, m.target()) + " WHERE " + opened + " IN (");
            for (int i = 0; i < chunk.size(); i++) {
                b.sql(i == 0 ? "" : ", ").bind(chunk.get(i).sequence().value());
            }
            jdbc.query(b.sql(") GROUP BY " + opened).build(), rs -> {
                out.put(Seq.read(m, rs, 1), rs.getLong(2));
                return null;
            });
        }
        return out;
    }

    private static String name(Dialect dialect, TableName table) {
        return table.parts().stream().map(dialect::quote).collect(Collectors.joining("."));
    }
}
