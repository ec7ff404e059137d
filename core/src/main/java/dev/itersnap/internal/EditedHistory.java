package dev.itersnap.internal;

import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.core.SnapshotEvent;
import dev.itersnap.internal.sql.SqlSteps;
import dev.itersnap.internal.sql.SqlSteps.HistoryRule;
import dev.itersnap.spi.Dialect;
import dev.itersnap.spi.Statement;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A history edited by hand is refused, never extended (docs/semantics.md, "Edited histories"). Before a run writes
 * to the history (after its own roll back, if it replays), two checks: the versions of the keys it writes (the keys
 * table, through the history's index on the key) must be in a state runs of the model leave ({@link HistoryRule}),
 * and the batches it compares with the source (the newest applied ones and the sweep's, every applied batch in a full
 * check) must have opened as many versions as the ledger counts (through the index on the opened sequence; counted by
 * the ledger's probe, {@link RunRecovery#checkLedger}, where the run makes one, so no read of its own). After
 * its writes the same rules hold for every key it touched, or the run fails (rolled back where the database has
 * transactions). Either way the run stops with {@code HISTORY_EDITED}, naming keys or batches and the way out.
 * Part of one {@link SnapshotRun}; its static parts serve {@code doctor} and the model's audit.
 */
final class EditedHistory {
    /** Example keys a message names. */
    private static final int EXAMPLES = 5;

    private final RunContext cx;
    private final RunAdoption adoption;
    /** The ledger as the run read it, or null when nothing was applied before (nothing to check). */
    private TreeMap<Seq, MetadataStore.Entry> applied;
    /** The entries whose versions the run counts before writing; null once counted. */
    private List<MetadataStore.Entry> counted;
    /** What the ledger's probe counted for {@link #counted}, compared with the ledger; null once reported. */
    private List<Miscounted> miscounted;
    /** Whether every applied batch is counted (a full check): one grouped count of the whole history. */
    private boolean countAll;
    /** The run's replay point (null: none), which a message about a roll back without transactions names. */
    private Seq replayPoint;

    EditedHistory(RunContext cx, RunAdoption adoption) {
        this.cx = cx;
        this.adoption = adoption;
    }

    /** A key's first broken rule and the earliest batch that opened one of its broken versions. */
    record EditedKey(String key, HistoryRule rule, Seq opened) {
    }

    /** A batch whose versions in the history are not as many as its ledger entry's {@code inserted}. */
    record Miscounted(Seq sequence, long recorded, long found) {
    }

    /** What a check found. */
    record Findings(int keys, List<EditedKey> examples, List<Miscounted> batches, Seq repairFrom) {
        boolean clean() {
            return keys == 0 && batches.isEmpty();
        }
    }

    /**
     * Decides, before anything is written, which batches the run compares with the history: the applied batches the
     * run compared with the source ({@code compared}) below its replay point, or every applied one below it in a full
     * check. Nothing when nothing was applied before.
     */
    void plan(SnapshotRun.Resolved r, TreeMap<Seq, MetadataStore.Entry> applied, java.util.Set<Seq> compared,
              Seq replayPoint, RunRecovery.OpenedVersions read) {
        this.replayPoint = replayPoint;
        if (applied.isEmpty() || r.targetColumns() == null) {
            return;
        }
        this.applied = applied;
        countAll = cx.operation() == SnapshotRun.Operation.FULL_CHECK;
        List<MetadataStore.Entry> out = new ArrayList<>();
        for (MetadataStore.Entry e : applied.values()) {
            boolean below = replayPoint == null || e.sequence().compareTo(replayPoint) < 0;
            if (below && !e.lost() && e.counts() != null && (countAll || compared.contains(e.sequence()))) {
                out.add(e);
            }
        }
        if (out.size() > SnapshotRun.MAX_BOUND_SEQUENCES) {
            countAll = true;
        }
        counted = out;
        if (!countAll && read != null && out.stream().allMatch(e -> read.counted().contains(e.sequence()))) {
            // counted by the ledger's probe, before anything was written: the versions of batches below the replay
            // point are the same after the roll back (it reopens versions, it removes only those opened from there)
            miscounted = miscounted(out, read.opened());
            counted = null;
        }
    }

    /**
     * The statement whose rows are the versions {@link #verifyBeforeWriting} refuses, for the run's counts query to
     * count; null when the run checks none (nothing applied yet).
     */
    Statement editedVersions(ResolvedModel m) {
        return applied == null ? null : cx.sql().editedVersions(m, null);
    }

    /**
     * Before the run's first write to the history (once the keys table holds the keys it writes): refuses with
     * {@code HISTORY_EDITED} when one of them is in a state no run left, or a counted batch's versions are not as the
     * ledger counts. The batches are counted once (the first pass). {@code found}: the rows of {@link #editedVersions}
     * a read of the run counted (negative: not counted); they are read, to name them, only when it found some.
     */
    void verifyBeforeWriting(ResolvedModel m, long found) {
        if (applied == null) {
            return;
        }
        List<Row> rows = found == 0 ? List.of() : rules(cx.jdbc(), m, cx.sql().editedVersions(m, null));
        if (!rows.isEmpty()) {
            rows = withoutAdopted(m, rows, a -> cx.sql().editedVersions(m, a));
        }
        List<Miscounted> batches = List.of();
        if (counted != null) {
            batches = count(cx.jdbc(), cx.sql(), m, counted, countAll);
            counted = null;
        } else if (miscounted != null) {
            batches = miscounted;
            miscounted = null;
        }
        Findings f = findings(rows, batches);
        if (!f.clean()) {
            // a replay has rolled back (on a database without transactions, for good: its ledger entries are
            // forgotten first, so the next run applies those batches again)
            String status = cx.transactional() || replayPoint == null
                    ? "A run would extend them wrongly: nothing was written."
                    : "A run would extend them wrongly: nothing was written over them (this database has no "
                    + "transactions: the run's roll back from " + replayPoint.text() + " stays, and the next run "
                    + "applies those batches again).";
            throw new ItersnapException(ErrorCode.HISTORY_EDITED, message(cx.settings().name(), f, status));
        }
    }

    /**
     * The timeline check after the run's writes, before they are committed: the keys with a version opened or closed
     * from {@code first} on must keep the rules. A violation fires {@code TimelineViolation} and fails the run with
     * {@code HISTORY_EDITED} (its writes are rolled back where the database has transactions).
     */
    void verifyAfterWriting(ResolvedModel m, Seq first) {
        List<Row> rows = rules(cx.jdbc(), m, cx.sql().timelineCheck(m, first.value()));
        if (!rows.isEmpty() && applied != null) {
            rows = withoutAdopted(m, rows, a -> cx.sql().timelineCheck(m, first.value(), a));
        }
        if (rows.isEmpty()) {
            return;
        }
        Findings f = findings(rows, List.of());
        cx.listener().onEvent(new SnapshotEvent.TimelineViolation(cx.settings().name(), cx.runId(), f.keys(),
                f.examples().stream().map(EditedKey::key).toList()));
        throw new ItersnapException(ErrorCode.HISTORY_EDITED, message(cx.settings().name(), f, "Found by the "
                + "timeline check after this run's writes, which " + (cx.transactional()
                ? "were rolled back: nothing was written."
                : "stay (this database has no transactions; the ledger records them).") + " The versions were "
                + "edited while the run wrote, or before it in versions it did not check before writing (keys it "
                + "did not write), or this is a bug of itersnap (please report it with the keys' versions)."));
    }

    /** A history adopted with its problems: the rows again, with the versions the adoption kept exempt. */
    private List<Row> withoutAdopted(ResolvedModel m, List<Row> rows,
                                     java.util.function.Function<Object, Statement> again) {
        Seq point = adoption.adoptionPoint(m, applied);
        return point == null ? rows : rules(cx.jdbc(), m, again.apply(point.value()));
    }

    // ---------------------------------------------------------------- shared with doctor and the model's audit

    /** One row of a rule check: the key as text, the rule, the opened sequence. */
    record Row(String key, HistoryRule rule, Seq opened) {
    }

    static List<Row> rules(Jdbc jdbc, ResolvedModel m, Statement check) {
        int k = m.keys().size();
        return jdbc.query(check, rs -> {
            StringBuilder key = new StringBuilder();
            for (int i = 1; i <= k; i++) {
                key.append(i > 1 ? ", " : "").append(m.keys().get(i - 1)).append('=').append(rs.getString(i));
            }
            return new Row(key.toString(), HistoryRule.of(rs.getString(k + 1)), Seq.read(m, rs, k + 2));
        });
    }

    /**
     * The entries whose versions the history does not hold as many as they count: one grouped count through the index
     * on the opened sequence, restricted to them, or of every version when {@code all}.
     */
    static List<Miscounted> count(Jdbc jdbc, SqlSteps sql, ResolvedModel m, List<MetadataStore.Entry> entries,
                                  boolean all) {
        if (entries.isEmpty()) {
            return List.of();
        }
        Map<Seq, Long> opened = new HashMap<>();
        jdbc.query(sql.openedVersions(m, all ? List.of() : entries.stream().map(e -> e.sequence().value()).toList()),
                rs -> opened.put(Seq.read(m, rs, 1), rs.getLong(2)));
        return miscounted(entries, opened);
    }

    /** The entries whose {@code inserted} is not the number of versions they opened ({@code opened}; absent: 0). */
    private static List<Miscounted> miscounted(List<MetadataStore.Entry> entries, Map<Seq, Long> opened) {
        List<Miscounted> out = new ArrayList<>();
        for (MetadataStore.Entry e : entries) {
            long found = opened.getOrDefault(e.sequence(), 0L);
            if (found != e.counts().inserted()) {
                out.add(new Miscounted(e.sequence(), e.counts().inserted(), found));
            }
        }
        return out;
    }

    static Findings findings(List<Row> rows, List<Miscounted> batches) {
        Map<String, EditedKey> keys = new LinkedHashMap<>();
        Seq from = null;
        for (Row r : rows) {
            keys.merge(r.key(), new EditedKey(r.key(), r.rule(), r.opened()), (a, b) -> new EditedKey(a.key(),
                    b.rule().ordinal() < a.rule().ordinal() ? b.rule() : a.rule(),
                    b.opened().compareTo(a.opened()) < 0 ? b.opened() : a.opened()));
            from = RunRecovery.lower(from, r.opened());
        }
        for (Miscounted b : batches) {
            from = RunRecovery.lower(from, b.sequence());
        }
        List<EditedKey> examples = keys.values().stream().sorted(java.util.Comparator.comparing(EditedKey::opened)
                .thenComparing(EditedKey::key)).limit(EXAMPLES).toList();
        return new Findings(keys.size(), examples, batches, from);
    }

    /** What a rule's break looks like, for a message. */
    static String describe(HistoryRule rule) {
        return switch (rule) {
            case REOPENED -> "a version a batch closed is open again";
            case CLOSED_WITHOUT_BATCH -> "a version is closed that no batch closed";
            case OPEN_TWICE -> "more than one open version";
            case OPEN_NOT_LAST -> "an open version is followed by another";
            case SUCCESSOR_MISSING -> "the version a change opened is missing";
            case CLOSED_LAST -> "no current version and no deletion";
            case SUCCESSOR_EARLY -> "versions out of batch order";
            case INVERTED -> "a version ends before it starts";
            case OVERLAP -> "versions overlap";
            case GAP -> "a gap after a change";
        };
    }

    /** The findings, {@code status} (what the run did), and the way out, for a message. */
    static String message(String model, Findings f, String status) {
        StringBuilder b = new StringBuilder("model '").append(model).append("': the history holds ");
        List<String> parts = new ArrayList<>();
        if (f.keys() > 0) {
            parts.add(f.keys() + (f.keys() == 1 ? " key" : " keys") + " whose versions are in a state no run of "
                    + "this model leaves (" + String.join("; ", f.examples().stream().map(k -> k.key() + ": "
                    + describe(k.rule()) + ", from batch " + k.opened().text()).toList())
                    + (f.keys() > f.examples().size() ? "; ..." : "") + ")");
        }
        if (!f.batches().isEmpty()) {
            parts.add(f.batches().size() + (f.batches().size() == 1 ? " batch" : " batches") + " whose versions are "
                    + "not as many as the ledger counts (" + String.join("; ", f.batches().stream().limit(EXAMPLES)
                    .map(x -> "batch " + x.sequence().text() + " opened " + x.recorded() + " by the ledger, the "
                            + "history holds " + x.found()).toList())
                    + (f.batches().size() > EXAMPLES ? "; ..." : "") + "; versions deleted or added by hand)");
        }
        b.append(String.join(" and ", parts)).append(". ").append(status);
        b.append(" Rebuild the edited versions from the batches: replay --from ").append(f.repairFrom().text())
                .append(" (IterativeSnapshot.replayFrom; a batch at or before the first edited version");
        if (!f.batches().isEmpty()) {
            b.append(", and before the first version of a key whose versions were all deleted, which may be earlier");
        }
        b.append("), or full-refresh --yes (IterativeSnapshot.fullRefresh: from the oldest batch the source holds); "
                + "or undo the edit by hand. itersnap doctor lists every edited key.");
        return b.toString();
    }

    // ---------------------------------------------------------------- the whole history (doctor, the model's audit)

    /**
     * The whole history of {@code settings} checked as a run checks what it writes: every key by the rules, every
     * applied batch's versions against the ledger; reads only. Null when there is no history or no ledger (nothing to
     * compare), or the source cannot be described (the sequence type comes from it).
     */
    static Findings everything(Connection c, Dialect dialect, ModelSettings settings) throws SQLException {
        MetadataStore store = MetadataStore.reading(c, dialect, settings);
        if (!store.exists()) {
            return null;
        }
        Jdbc jdbc = new Jdbc(c, settings.name(), dialect);
        ResolvedModel m;
        try {
            m = ModelResolver.withTables(jdbc, dialect, ModelResolver.resolveSource(jdbc, dialect, settings)).model();
        } catch (ItersnapException e) {
            return null;
        }
        if (!jdbc.tableExists(m.target())) {
            return null;
        }
        TreeMap<Seq, MetadataStore.Entry> ledger = store.ledger(m);
        if (ledger.isEmpty()) {
            return null;
        }
        Seq adopted = null;
        dev.itersnap.core.Inspection.Adoption adoption = store.adoption();
        if (adoption != null) {
            Seq point = Seq.parse(m, adoption.through());
            MetadataStore.Entry e = ledger.get(point);
            adopted = e != null && adoption.runId().equals(e.runId()) ? point : null;
        }
        SqlSteps sql = SqlSteps.of(dialect);
        List<Row> rows = rules(jdbc, m, sql.editedVersionsOfEveryKey(m, adopted == null ? null : adopted.value()));
        List<MetadataStore.Entry> entries = ledger.values().stream().filter(e -> !e.lost() && e.counts() != null)
                .toList();
        return findings(rows, count(jdbc, sql, m, entries, true));
    }

    /** {@link #everything} as doctor's check {@code history}; null when there is nothing to compare. */
    static dev.itersnap.core.Check doctor(Connection c, Dialect dialect, ModelSettings settings) {
        try {
            Findings f = everything(c, dialect, settings);
            if (f == null) {
                return null; // no history yet: nothing to say before a first run
            }
            if (f.clean()) {
                return dev.itersnap.core.Check.ok("history", "every key's versions as runs leave them, every batch's "
                        + "versions as many as the ledger counts");
            }
            return dev.itersnap.core.Check.failed("history", message(settings.name(), f, "A run that writes these "
                    + "keys, or a full check, stops before writing (HISTORY_EDITED, exit 8)."));
        } catch (SQLException | RuntimeException e) {
            return dev.itersnap.core.Check.failed("history", "could not be read: " + Jdbc.firstLine(
                    String.valueOf(e.getMessage())));
        }
    }

    /**
     * The audit's {@code ledger_counts} of a model's history: the batches whose versions are not as many as the
     * ledger counts, or null when there is nothing to compare ({@link #everything}).
     */
    static dev.itersnap.core.AuditReport.Finding ledgerFinding(Connection c, Dialect dialect, ModelSettings settings,
                                                              int examples) throws SQLException {
        Findings f = everything(c, dialect, settings);
        if (f == null) {
            return null;
        }
        return new dev.itersnap.core.AuditReport.Finding(dev.itersnap.core.AuditReport.Check.LEDGER_COUNTS,
                "batches whose versions in the table are not as many as the ledger counts (versions deleted or added "
                        + "by hand)", f.batches().size(), List.of("batch", "ledger_inserted", "versions"),
                f.batches().stream().limit(examples).map(b -> List.of(b.sequence().text(),
                        String.valueOf(b.recorded()), String.valueOf(b.found()))).toList());
    }
}
