package dev.itersnap.internal;

import dev.itersnap.core.TableName;
import dev.itersnap.internal.sql.Rollback;
import dev.itersnap.internal.sql.Supersession;
import dev.itersnap.spi.Relation;
import dev.itersnap.spi.SourceColumn;

import java.sql.SQLException;
import java.time.LocalDateTime;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Keeps what a repair replaces ({@code keep_superseded}, issue 41): before a roll back, the versions it deletes or
 * changes, what it computes again and the ledger entries it replaces go to the model's companion table
 * ({@link Supersession}), in the roll back's transaction where the database has one. Without transactions, a run
 * that failed may have copied already: the next run takes its rows over (they are what the history was before that
 * run) and copies each row at most once. Part of one {@link SnapshotRun}.
 */
final class SupersededVersions {
    /** Ledger entries copied per statement (each a bound value). */
    private static final int CHUNK = 200;

    private final RunContext cx;
    private final Supersession sql;
    /** The history's columns, which the companion has: set by {@link #prepare}. */
    private List<String> columns;

    SupersededVersions(RunContext cx) {
        this.cx = cx;
        this.sql = new Supersession(cx.sql());
    }

    private boolean enabled() {
        return cx.settings().keepSuperseded();
    }

    /**
     * Before a repair's writes: creates the companion table, or adds the history's columns it lacks; without
     * transactions, takes over the rows a failed run copied. Committed (DDL ends a transaction on some databases).
     */
    void prepare(ResolvedModel m) {
        if (!enabled()) {
            return;
        }
        try {
            List<SourceColumn> history = cx.jdbc().describe(cx.sql().describe(Relation.table(m.target())));
            TableName t = Supersession.table(m);
            if (!cx.jdbc().tableExists(t)) {
                cx.dialect().createTable(sql.spec(m, history)).forEach(s -> cx.jdbc().update(s.inStep(
                        "create superseded")));
            } else {
                List<SourceColumn> have = cx.jdbc().describe(cx.sql().describe(Relation.table(t)));
                for (SourceColumn c : history) {
                    SourceColumn existing = RunSchema.column(have, c.name());
                    if (existing == null) {
                        cx.jdbc().update(cx.sql().primitives().addColumn(t, c).inStep("create superseded"));
                    } else if (!cx.dialect().columnType(existing).equals(cx.dialect().columnType(c))
                            && cx.dialect().widens(existing, c)) {
                        // the history's column was widened since the companion was created (the run checked that
                        // the history's could be): the copies must fit the same values
                        cx.sql().primitives().prepareWidening(t).forEach(s -> cx.jdbc().update(s.inStep(
                                "create superseded")));
                        cx.jdbc().update(cx.sql().primitives().widenColumn(t, existing.name(), c)
                                .inStep("create superseded"));
                    }
                }
                if (!cx.transactional()) {
                    takeOver(m);
                }
            }
            columns = history.stream().map(SourceColumn::name).toList();
        } catch (SQLException e) {
            throw cx.jdbc().failure("create superseded", null, e);
        }
        cx.jdbc().commit("prepare");
    }

    /**
     * Without transactions, after a run that did not succeed: its rows in the companion become this run's, whatever
     * this run does (its roll back, or the recovery of what it left, supersedes them now).
     */
    void takeOverAfterFailure(ResolvedModel m) {
        if (!enabled() || cx.transactional()) {
            return;
        }
        try {
            if (cx.jdbc().tableExists(Supersession.table(m))) {
                takeOver(m);
            }
        } catch (SQLException e) {
            throw cx.jdbc().failure("keep superseded", null, e);
        }
    }

    private void takeOver(ResolvedModel m) {
        List<String> runs = cx.jdbc().query(sql.runs(m), rs -> rs.getString(1));
        if (runs.isEmpty()) {
            return;
        }
        Map<String, String> status = statuses(cx.jdbc(), m);
        List<String> failed = runs.stream().filter(r -> r != null && !r.equals(cx.runId())
                && !"success".equals(status.get(r))).toList();
        if (!failed.isEmpty()) {
            cx.jdbc().update(sql.takeOver(m, failed, cx.runId(), LocalDateTime.now()));
        }
    }

    /**
     * Right before roll back {@code r}, and before the ledger forgets {@code replaced}: copies what it replaces.
     * Nothing when {@code keep_superseded} is off.
     */
    void copy(ResolvedModel m, Rollback r, Collection<Seq> replaced) {
        if (!enabled()) {
            return;
        }
        if (columns == null) {
            throw new IllegalStateException("SupersededVersions.prepare must come first");
        }
        LocalDateTime at = LocalDateTime.now();
        boolean idempotent = !cx.transactional();
        cx.jdbc().updateAll(sql.copy(m, r, columns, cx.runId(), at, idempotent));
        List<String> texts = replaced.stream().map(Seq::text).toList();
        for (int from = 0; from < texts.size(); from += CHUNK) {
            cx.jdbc().update(sql.copyLedger(m, texts.subList(from, Math.min(texts.size(), from + CHUNK)), cx.runId(),
                    at, idempotent));
        }
        retain(m, at);
    }

    /**
     * {@code superseded_retention}: deletes what the repairs that finished (whatever their status) before {@code at}
     * minus the retention superseded, leaving the mark of the latest such finish (a known-at read before it is
     * refused).
     * One read when a retention is set, up to three writes when there is something to delete; nothing otherwise.
     */
    private void retain(ResolvedModel m, LocalDateTime at) {
        java.time.Duration retention = cx.settings().supersededRetention();
        if (retention == null) {
            return;
        }
        Map<String, LocalDateTime> expired = new HashMap<>();
        cx.jdbc().query(sql.expired(m, at.minus(retention)), rs -> expired.put(rs.getString(1),
                dev.itersnap.spi.SqlValues.readLocalDateTime(rs, 2)));
        if (expired.isEmpty()) {
            return;
        }
        LocalDateTime through = expired.values().stream().max(LocalDateTime::compareTo).orElseThrow();
        cx.jdbc().updateAll(sql.prune(m, expired.keySet().stream().sorted().toList(), cx.runId(), through));
    }

    /** Each run of the model in the run log with its status. */
    private Map<String, String> statuses(Jdbc jdbc, ResolvedModel m) {
        Map<String, String> out = new HashMap<>();
        jdbc.query(sql.runLog(m), rs -> out.put(rs.getString(1), rs.getString(2)));
        return out;
    }
}
