package dev.itersnap.internal.sql;

import dev.itersnap.core.ColumnNames;
import dev.itersnap.core.TableName;
import dev.itersnap.spi.AbstractSqlDialect;
import dev.itersnap.spi.MetadataSchema;
import dev.itersnap.internal.ResolvedModel;
import dev.itersnap.spi.SourceColumn;
import dev.itersnap.spi.Statement;
import dev.itersnap.spi.TableSpec;
import dev.itersnap.spi.TableSpec.ColumnType;
import dev.itersnap.spi.TableSpec.Creation;

import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static dev.itersnap.spi.AbstractSqlDialect.slot;
import static dev.itersnap.spi.AbstractSqlDialect.statement;

/**
 * The SQL of the superseded versions (issue 41): the companion of a model's history,
 * {@code <metadata_schema>.itersnap_superseded_<model>}, into which a repair copies every version it deletes or
 * changes, as it was, before its roll back; and the read of the history as it was known at a moment.
 *
 * <p>Each row is an entry ({@link #ENTRY}) of a repair (its run id {@link #BY} and time {@link #AT}):
 * <ul>
 *   <li>{@code version}: a version the repair deleted or changed, with every column of the history as it was;</li>
 *   <li>{@code all} / {@code key}: what the repair computed again from the sequence in the opened-sequence column:
 *       every key, or the key in the key columns (a key-scoped replay, one row per key it replays);</li>
 *   <li>{@code batch}: a ledger entry the repair replaced (the batch's canonical text {@link #SEQTEXT} and the run
 *       that had applied it, {@link #PREV_RUN}), so that when a batch was first known survives its re-recording.</li>
 * </ul>
 * The history as known at a moment K ({@link #knownAt}) is built from the history, these entries, and which runs
 * had finished by K (see docs/semantics.md, "The history as known at a moment").
 */
public final class Supersession {
    /** Superseded: the run that superseded the row. */
    public static final String BY = "itersnap_superseded_by";
    /** Superseded: when (the repair's time). */
    public static final String AT = "itersnap_superseded_at";
    /** Superseded: what the row is: {@code version}, {@code all}, {@code key}, {@code batch}. */
    public static final String ENTRY = "itersnap_entry";
    /** Superseded, batch rows: the run whose ledger entry the repair replaced. */
    public static final String PREV_RUN = "itersnap_prev_run";
    /** Superseded, batch rows: the batch's canonical text (the ledger's form). */
    public static final String SEQTEXT = ModelTables.SEQTEXT;

    /** The entry of a retention's mark ({@link #prune}). */
    private static final String PRUNED = "pruned";
    /** Runs whose rows one statement deletes (each a bound value). */
    private static final int CHUNK = 200;
    private static final String RUN = "suprun";
    private static final String WHEN = "supat";

    private final SqlSteps steps;
    private final AbstractSqlDialect d;

    public Supersession(SqlSteps steps) {
        this.steps = steps;
        this.d = steps.primitives();
    }

    /** The companion table's name: {@code itersnap_superseded_<model>} in the metadata schema. */
    public static TableName table(ResolvedModel m) {
        return m.metadata().tableNamed(m.fit("itersnap_superseded_" + m.name()));
    }

    /** The companion table with the history's columns ({@code historyColumns}, as described) and its own. */
    public TableSpec spec(ResolvedModel m, List<SourceColumn> historyColumns) {
        TableSpec.Builder b = TableSpec.builder(table(m), Creation.IF_NOT_EXISTS).widenable()
                .writers(TableSpec.Writers.MANY);
        historyColumns.forEach(c -> b.column(c.name(), ColumnType.like(c)));
        return b.column(m.id(BY), ColumnType.text(36)).column(m.id(AT), ColumnType.timestamp())
                .column(m.id(ENTRY), ColumnType.text(8)).column(m.id(PREV_RUN), ColumnType.text(36))
                .column(m.id(SEQTEXT), ColumnType.text(256)).build();
    }

    /** The columns of the companion's own besides the history's. */
    public static List<String> ownColumns(ResolvedModel m) {
        return List.of(m.id(BY), m.id(AT), m.id(ENTRY), m.id(PREV_RUN), m.id(SEQTEXT));
    }

    /**
     * Copies, before roll back {@code r} (from a sequence on, of every key or of the keys a key-scoped replay computes
     * again), the versions it deletes (opened from the sequence on) or changes (closed from it on) as they are, and
     * what it computes again (one {@code all} row, or a {@code key} row per key). {@code columns}: the history's
     * columns, which the companion has. With {@code idempotent} (a database without transactions, where a run that
     * failed may have copied already and this run took its copies over) a row this run already copied is not copied
     * again: keyed by (run, key, opened sequence) for versions, (run, key) for keys.
     */
    public List<Statement> copy(ResolvedModel m, Rollback r, List<String> columns, String runId, Object at,
                                boolean idempotent) {
        ColumnNames n = m.meta();
        String s = d.table(table(m));
        String p = d.ordered(m, d.param(m.sequenceColumn(), SqlSteps.FROM));
        String run = "CAST(" + slot(RUN) + " AS " + d.typeName(ColumnType.text(36)) + ")";
        String when = "CAST(" + slot(WHEN) + " AS " + d.typeName(ColumnType.timestamp()) + ")";
        String mine = d.col("x", m.id(BY)) + " = " + run + " AND " + d.col("x", m.id(ENTRY));
        List<String> sql = new ArrayList<>();
        List<String> into = new ArrayList<>(columns);
        into.addAll(List.of(m.id(BY), m.id(AT), m.id(ENTRY)));
        // the subqueries below read the superseded table, whose columns are the history's: the aliases they refer
        // to are reserved names (SqlSteps.outer)
        String t = SqlSteps.outer("t");
        String k = SqlSteps.outer("k");
        String keys = r.keyScoped() ? " JOIN " + d.table(m.keysTable()) + " " + k + " ON " + d.keyJoin(m, k, t) + " AND "
                + d.col(k, m.id(ModelTables.FROM_IDX)) + " = 1" : "";
        sql.add("INSERT INTO " + s + " (" + d.list(into, null) + ") SELECT " + d.list(columns, t) + ", " + run
                + ", " + when + ", 'version' FROM " + d.table(m.target()) + " " + t + keys + " WHERE ("
                + d.ordered(m, d.col(t, n.openedSeq())) + " >= " + p + " OR "
                + d.ordered(m, d.col(t, n.closedSeq())) + " >= " + p + ")"
                + (idempotent ? " AND NOT EXISTS (SELECT 1 FROM " + s + " x WHERE " + mine + " = 'version' AND "
                + d.keyJoin(m, "x", t) + " AND " + d.col("x", n.openedSeq()) + " = " + d.col(t, n.openedSeq())
                + ")" : ""));
        if (r.keyScoped()) {
            List<String> keyInto = new ArrayList<>(m.keys());
            keyInto.addAll(List.of(n.openedSeq(), m.id(BY), m.id(AT), m.id(ENTRY)));
            sql.add("INSERT INTO " + s + " (" + d.list(keyInto, null) + ") SELECT " + d.list(m.keys(), k) + ", "
                    + d.param(m.sequenceColumn(), SqlSteps.FROM) + ", " + run + ", " + when + ", 'key' FROM "
                    + d.table(m.keysTable()) + " " + k + " WHERE " + d.col(k, m.id(ModelTables.FROM_IDX)) + " = 1"
                    + (idempotent ? " AND NOT EXISTS (SELECT 1 FROM " + s + " x WHERE " + mine + " = 'key' AND "
                    + d.keyJoin(m, "x", k) + ")" : ""));
        } else {
            sql.add("INSERT INTO " + s + " (" + d.list(List.of(n.openedSeq(), m.id(BY), m.id(AT), m.id(ENTRY)), null)
                    + ") SELECT " + d.param(m.sequenceColumn(), SqlSteps.FROM) + ", " + run + ", " + when + ", 'all'"
                    + (idempotent ? " WHERE NOT EXISTS (SELECT 1 FROM " + s + " x WHERE " + mine + " = 'all')" : ""));
        }
        Map<String, Object> values = new LinkedHashMap<>();
        values.put(SqlSteps.FROM, r.sequence());
        values.put(RUN, runId);
        values.put(WHEN, at);
        return sql.stream().map(q -> statement("keep superseded", q, values)).toList();
    }

    /**
     * Copies the ledger entries of {@code batches} (canonical texts, at most a few hundred) as {@code batch} rows
     * before the repair replaces them; with {@code idempotent}, not those this run copied already.
     */
    public Statement copyLedger(ResolvedModel m, List<String> batches, String runId, Object at, boolean idempotent) {
        MetadataSchema.Ledger l = m.metadata().ledger();
        String lo = SqlSteps.outer("l");
        String s = d.table(table(m));
        String run = "CAST(" + slot(RUN) + " AS " + d.typeName(ColumnType.text(36)) + ")";
        String when = "CAST(" + slot(WHEN) + " AS " + d.typeName(ColumnType.timestamp()) + ")";
        Map<String, Object> values = new LinkedHashMap<>();
        values.put(RUN, runId);
        values.put(WHEN, at);
        values.put(SqlSteps.MODEL, m.name());
        List<String> in = new ArrayList<>();
        for (int i = 0; i < batches.size(); i++) {
            in.add(slot("b" + i));
            values.put("b" + i, batches.get(i));
        }
        String sql = "INSERT INTO " + s + " (" + d.list(List.of(m.id(SEQTEXT), m.id(PREV_RUN), m.id(BY), m.id(AT),
                m.id(ENTRY)), null) + ") SELECT " + d.col(lo, l.sequence()) + ", " + d.col(lo, l.runId()) + ", "
                + run + ", " + when + ", 'batch' FROM " + d.table(l.spec().name()) + " " + lo + " WHERE "
                + d.col(lo, l.model()) + " = " + slot(SqlSteps.MODEL) + " AND " + d.col(lo, l.sequence()) + " IN ("
                + String.join(", ", in) + ")"
                + (idempotent ? " AND NOT EXISTS (SELECT 1 FROM " + s + " x WHERE " + d.col("x", m.id(BY)) + " = "
                + run + " AND " + d.col("x", m.id(ENTRY)) + " = 'batch' AND " + d.col("x", m.id(SEQTEXT)) + " = "
                + d.col(lo, l.sequence()) + ")" : "");
        return statement("keep superseded", sql, values);
    }

    /** Makes the rows of the runs {@code failed} (run ids) this run's: a run that did not finish copied them. */
    public Statement takeOver(ResolvedModel m, List<String> failed, String runId, Object at) {
        Map<String, Object> values = new LinkedHashMap<>();
        values.put(RUN, runId);
        values.put(WHEN, at);
        List<String> in = new ArrayList<>();
        for (int i = 0; i < failed.size(); i++) {
            in.add(slot("f" + i));
            values.put("f" + i, failed.get(i));
        }
        return statement("keep superseded", "UPDATE " + d.table(table(m)) + " SET " + d.quote(m.id(BY)) + " = "
                + slot(RUN) + ", " + d.quote(m.id(AT)) + " = " + slot(WHEN) + " WHERE " + d.quote(m.id(BY)) + " IN ("
                + String.join(", ", in) + ")", values);
    }

    /** The model's runs in the run log: (run id, status, finished_at). */
    public Statement runLog(ResolvedModel m) {
        MetadataSchema.Runs r = m.metadata().runs();
        return statement("known at", "SELECT " + d.quote(r.runId()) + ", " + d.quote(r.status()) + ", "
                + d.quote(r.finishedAt()) + " FROM " + d.table(r.spec().name()) + " WHERE " + d.quote(r.model())
                + " = " + slot(SqlSteps.MODEL), SqlSteps.MODEL, m.name());
    }

    /** The model's ledger: (canonical text, run id). */
    public Statement ledger(ResolvedModel m) {
        MetadataSchema.Ledger l = m.metadata().ledger();
        return statement("known at", "SELECT " + d.quote(l.sequence()) + ", " + d.quote(l.runId()) + " FROM "
                + d.table(l.spec().name()) + " WHERE " + d.quote(l.model()) + " = " + slot(SqlSteps.MODEL),
                SqlSteps.MODEL, m.name());
    }

    /** The distinct runs that have rows in the companion (a retention's mark left aside). */
    public Statement runs(ResolvedModel m) {
        return Statement.of("known at", "SELECT DISTINCT " + d.quote(m.id(BY)) + " FROM " + d.table(table(m))
                + " WHERE " + d.quote(m.id(ENTRY)) + " <> '" + PRUNED + "'");
    }

    /**
     * The repairs with rows in the companion that finished before {@code cutoff}, whatever their status (a repair that
     * committed and failed to record its success has its failure's end; a dead one, the end a later run gave it):
     * (run id, finished_at).
     * Reads the companion (which the retention bounds) and the run log's rows of those runs only.
     */
    public Statement expired(ResolvedModel m, LocalDateTime cutoff) {
        MetadataSchema.Runs r = m.metadata().runs();
        Map<String, Object> values = new LinkedHashMap<>();
        values.put(SqlSteps.MODEL, m.name());
        values.put(WHEN, cutoff);
        return statement("retain superseded", "SELECT DISTINCT " + d.col("r", r.runId()) + ", "
                + d.col("r", r.finishedAt()) + " FROM " + d.table(table(m)) + " c JOIN " + d.table(r.spec().name())
                + " r ON " + d.col("r", r.runId()) + " = " + d.col("c", m.id(BY)) + " WHERE " + d.col("c", m.id(ENTRY))
                + " <> '" + PRUNED + "' AND " + d.col("r", r.model()) + " = " + slot(SqlSteps.MODEL) + " AND "
                + d.col("r", r.finishedAt()) + " < CAST(" + slot(WHEN)
                + " AS " + d.typeName(ColumnType.timestamp()) + ")", values);
    }

    /**
     * The retention's mark: the latest moment up to which it deleted repairs (every repair it deleted had finished by
     * then), or no row / NULL when it deleted none. A known-at read before it is refused.
     */
    public Statement prunedThrough(ResolvedModel m) {
        return Statement.of("read retention", "SELECT MAX(" + d.quote(m.id(AT)) + ") FROM " + d.table(table(m))
                + " WHERE " + d.quote(m.id(ENTRY)) + " = '" + PRUNED + "'");
    }

    /**
     * Deletes what the repairs {@code runs} superseded (every row of theirs but a mark), and leaves one mark: the
     * mark {@code through} is written first, then the rows and the older marks are deleted, so that after a failure
     * between them (without transactions) a known-at read is refused where it might lack rows, never wrong.
     */
    public List<Statement> prune(ResolvedModel m, List<String> runs, String runId, LocalDateTime through) {
        String s = d.table(table(m));
        String e = d.quote(m.id(ENTRY));
        List<Statement> out = new ArrayList<>();
        Map<String, Object> mark = new LinkedHashMap<>();
        mark.put(RUN, runId);
        mark.put(WHEN, through);
        out.add(statement("retain superseded", "INSERT INTO " + s + " (" + d.list(List.of(m.id(BY), m.id(AT),
                m.id(ENTRY)), null) + ") VALUES (CAST(" + slot(RUN) + " AS " + d.typeName(ColumnType.text(36))
                + "), CAST(" + slot(WHEN) + " AS " + d.typeName(ColumnType.timestamp()) + "), '" + PRUNED + "')",
                mark));
        for (int from = 0; from < runs.size(); from += CHUNK) {
            List<String> chunk = runs.subList(from, Math.min(runs.size(), from + CHUNK));
            Map<String, Object> values = new LinkedHashMap<>();
            List<String> in = new ArrayList<>();
            for (int i = 0; i < chunk.size(); i++) {
                values.put("r" + i, chunk.get(i));
                in.add(slot("r" + i));
            }
            out.add(statement("retain superseded", "DELETE FROM " + s + " WHERE " + e + " <> '" + PRUNED + "' AND "
                    + d.quote(m.id(BY)) + " IN (" + String.join(", ", in) + ")", values));
        }
        Map<String, Object> older = new LinkedHashMap<>();
        older.put(WHEN, through);
        out.add(statement("retain superseded", "DELETE FROM " + s + " WHERE " + e + " = '" + PRUNED + "' AND "
                + d.quote(m.id(AT)) + " < CAST(" + slot(WHEN) + " AS " + d.typeName(ColumnType.timestamp()) + ")",
                older));
        return out;
    }

    /**
     * Per repair (run) with rows in the companion: (run id, when, versions, keys computed again, {@code all} rows,
     * ledger entries replaced).
     */
    public Statement repairs(ResolvedModel m) {
        String e = d.quote(m.id(ENTRY));
        return Statement.of("read repairs", "SELECT " + d.quote(m.id(BY)) + ", MIN(" + d.quote(m.id(AT)) + "), "
                + count(e, "version") + ", " + count(e, "key") + ", " + count(e, "all") + ", " + count(e, "batch")
                + " FROM " + d.table(table(m)) + " WHERE " + e + " <> '" + PRUNED + "' GROUP BY " + d.quote(m.id(BY)));
    }

    private static String count(String entry, String kind) {
        return "SUM(CASE WHEN " + entry + " = '" + kind + "' THEN 1 ELSE 0 END)";
    }

    /**
     * Per repair, the keys of which it superseded a version: (run id, key columns, how many such keys the repair
     * has), at most {@code examples} keys of each repair, the least first.
     */
    public Statement repairedKeys(ResolvedModel m, int examples) {
        String by = d.quote(m.id(BY));
        String keys = d.list(m.keys(), null);
        String rn = d.quote(m.id("itersnap_rn"));
        String n = d.quote(m.id("itersnap_n"));
        return Statement.of("read repairs", "SELECT " + by + ", " + keys + ", " + n + " FROM (SELECT " + by + ", "
                + keys + ", ROW_NUMBER() OVER (PARTITION BY " + by + " ORDER BY " + keys + ") AS " + rn
                + ", COUNT(*) OVER (PARTITION BY " + by + ") AS " + n + " FROM (SELECT DISTINCT " + by + ", " + keys
                + " FROM " + d.table(table(m)) + " WHERE " + d.quote(m.id(ENTRY)) + " = 'version') y) x WHERE " + rn
                + " <= " + examples + " ORDER BY " + by + ", " + rn);
    }

    /** The companion's {@code batch} rows: (canonical text, the run that had applied it). */
    public Statement replacedEntries(ResolvedModel m) {
        return Statement.of("known at", "SELECT " + d.quote(m.id(SEQTEXT)) + ", " + d.quote(m.id(PREV_RUN)) + " FROM "
                + d.table(table(m)) + " WHERE " + d.quote(m.id(ENTRY)) + " = 'batch'");
    }

    /**
     * What a moment K knows, computed from the ledger, the companion's batch rows and the run log: the greatest
     * batch first applied by a run finished by K ({@code maxKnown}, null: none), the batches below it first applied
     * later ({@code unknown}), and the repairs that finished after K in the order they finished ({@code repairsAfter},
     * run ids).
     */
    public record Known(Object maxKnown, List<Object> unknown, List<String> repairsAfter) {
        public Known {
            unknown = List.copyOf(unknown);
            repairsAfter = List.copyOf(repairsAfter);
        }
    }

    /**
     * The history as it was known at a moment: the versions of the history and of its companion as the last run
     * finished by then had left them (columns {@code columns}, the history's), restricted to those valid at
     * {@code time} when not null (half-open {@code [valid_from, valid_to)}, deletion records left out), the time
     * written as a typed literal. A version counts when the batch that opened it was first applied by then, no
     * repair after K (and before the repair that superseded it, for a superseded copy) computed its key again from a
     * batch at or before the one that opened it, or copied the same version; and it was not superseded by then.
     * Its closing counts likewise by the batch that closed it; else it shows as open, as a roll back reopens it.
     */
    public Statement knownAt(ResolvedModel m, List<String> columns, Known k, Object time) {
        ColumnNames n = m.meta();
        String s = d.table(table(m));
        int now = k.repairsAfter().size() + 1;
        String runIn = k.repairsAfter().stream().map(d::stringLiteral).reduce((a, b) -> a + ", " + b).orElse(null);
        StringBuilder rank = new StringBuilder("CASE %s");
        for (int i = 0; i < k.repairsAfter().size(); i++) {
            rank.append(" WHEN ").append(d.stringLiteral(k.repairsAfter().get(i))).append(" THEN ").append(i + 1);
        }
        rank.append(" ELSE ").append(now).append(" END");
        String xr = d.quote(m.id("itersnap_xr"));
        List<String> parts = new ArrayList<>();
        parts.add("SELECT " + d.list(columns, "h") + ", " + now + " AS " + xr + " FROM " + d.table(m.target()) + " h");
        if (runIn != null) {
            parts.add("SELECT " + d.list(columns, "h") + ", " + String.format(rank.toString(), d.col("h", m.id(BY)))
                    + " AS " + xr + " FROM " + s + " h WHERE " + d.col("h", m.id(ENTRY)) + " = 'version' AND "
                    + d.col("h", m.id(BY)) + " IN (" + runIn + ")");
        }
        String v = SqlSteps.outer("v");
        String before = runIn == null ? null : d.col("c", m.id(BY)) + " IN (" + runIn + ") AND "
                + String.format(rank.toString(), d.col("c", m.id(BY))) + " < " + d.col(v, m.id("itersnap_xr"));
        String opened = d.col(v, n.openedSeq());
        String closed = d.col(v, n.closedSeq());
        List<String> where = new ArrayList<>();
        where.add(known(m, k, opened));
        if (before != null) {
            where.add("NOT EXISTS (" + recomputed(m, s, before, v, opened) + ")");
            where.add("NOT EXISTS (SELECT 1 FROM " + s + " c WHERE " + before + " AND " + d.col("c", m.id(ENTRY))
                    + " = 'version' AND " + d.keyJoin(m, "c", v) + " AND " + d.col("c", n.openedSeq()) + " = "
                    + opened + ")");
        }
        String closingKnown = closed + " IS NOT NULL AND " + known(m, k, closed)
                + (before == null ? "" : " AND NOT EXISTS (" + recomputed(m, s, before, v, closed) + ")");
        List<String> shown = new ArrayList<>();
        for (String c : columns) {
            String open = c.equals(n.validTo()) ? steps.openValidTo(m)
                    : c.equals(n.closedSeq()) || c.equals(n.changedAttributes()) ? "NULL"
                    : c.equals(n.changeType()) ? "'insert'" : null;
            shown.add(open == null ? d.col(v, c) + " AS " + d.quote(c)
                    : "CASE WHEN " + closingKnown + " THEN " + d.col(v, c) + " ELSE " + open + " END AS " + d.quote(c));
        }
        // the projection and the filter in each branch, not over their union: Spark 4.2 fails to plan an EXISTS
        // subquery correlated to a UNION ALL ("key not found"), and takes it over one relation
        List<String> branches = new ArrayList<>();
        for (String part : parts) {
            branches.add("SELECT " + String.join(", ", shown) + " FROM (" + part + ") " + v + " WHERE "
                    + String.join(" AND ", where));
        }
        String history = String.join(" UNION ALL ", branches);
        if (time == null) {
            return Statement.of("known at", history);
        }
        String lit = steps.literal(m.updatedAtColumn(), time);
        return Statement.of("known at", "SELECT * FROM (" + history + ") h WHERE " + d.col("h", n.validFrom())
                + " <= " + lit + " AND (" + steps.isOpen(m, d.col("h", n.validTo())) + " OR "
                + d.col("h", n.validTo()) + " > " + lit + ")"
                + (m.deletionRecords() ? " AND " + d.col("h", n.isDeleted()) + " = FALSE" : ""));
    }

    /**
     * Both timelines in one relation, for SQL users (a view, {@code AsOf.bitemporal()}): every version of the
     * history and of its companion in each form it had, with the system-time interval in which the history showed it
     * so: {@code itersnap_known_from} (inclusive; NULL: before the run log's first record) and
     * {@code itersnap_known_to} (exclusive; NULL: still shown). Filtered at a moment K
     * ({@code known_from <= K < known_to}) it is exactly {@link #knownAt} at K: the same rule, with the facts a
     * known-at read computes for one K (which batches were known, which repairs came after) computed for every K
     * from the run log, the ledger and the companion when the query runs, so the view stays right as runs go on.
     *
     * <p>Per version V (of the history, or a copy superseded by repair S): it shows from the latest of the first finish
     * of a run that applied its opening batch, and the ends of the repairs before S that computed its key again from
     * a batch at or before its opening one or copied the same version; until S's end (a history version: still).
     * Its closing shows from the latest of the first finish of its closing batch and the ends of the repairs before S
     * that computed its key again from a batch at or before its closing one; before that it shows open (as
     * {@link #knownAt} shows it). So a closed version has up to two rows: open, then closed. A run's end: its
     * {@code finished_at}, or after every moment while it is shown running, or before every moment when the run log
     * has no end for it (ids it no longer holds). Needs one sequence column: the ledger's text is read as that
     * column's type. {@code history}: the history's columns; {@code companionColumns}: the companion's (null: it
     * does not exist, and repairs are not seen).
     */
    public Statement bitemporal(ResolvedModel m, List<SourceColumn> history, List<String> companionColumns) {
        boolean companion = companionColumns != null;
        List<String> columns = history.stream().map(SourceColumn::name).toList();
        ColumnNames n = m.meta();
        MetadataSchema.Runs runs = m.metadata().runs();
        MetadataSchema.Ledger l = m.metadata().ledger();
        String ts = d.typeName(ColumnType.timestamp());
        String lo = "CAST('0001-01-01 00:00:00' AS " + ts + ")";
        String hi = "CAST('9999-12-31 00:00:00' AS " + ts + ")";
        String model = d.stringLiteral(m.name());
        String s = d.table(table(m));
        String e = d.quote(m.id("itersnap_e"));
        String run = d.quote(m.id("itersnap_r"));
        String seq = d.quote(m.id("itersnap_s"));
        String sby = d.quote(m.id("itersnap_sby"));
        String se = d.quote(m.id("itersnap_se"));
        String kind = d.quote(m.id("itersnap_kind"));
        String ro = d.quote(m.id("itersnap_ro"));
        String rc = d.quote(m.id("itersnap_rc"));
        String kf = d.quote(m.id("itersnap_kf"));
        String kc = d.quote(m.id("itersnap_kc"));
        String opened = d.quote(n.openedSeq());
        String closed = d.quote(n.closedSeq());
        List<String> with = new ArrayList<>();
        // each run's end
        with.add("itersnap_ends AS (SELECT " + d.quote(runs.runId()) + " AS " + run + ", CASE WHEN "
                + d.quote(runs.finishedAt()) + " IS NOT NULL THEN " + d.quote(runs.finishedAt()) + " WHEN "
                + d.quote(runs.status()) + " = 'running' THEN " + hi + " ELSE " + lo + " END AS " + e + " FROM "
                + d.table(runs.spec().name()) + " WHERE " + d.quote(runs.model()) + " = " + model + ")");
        // when each batch was first known: the earliest end of a run that applied it; the text read as the sequence
        // type only on this model's rows (the ledger holds every model's)
        String entries = "SELECT CASE WHEN " + d.quote(l.model()) + " = " + model + " THEN "
                + d.quote(l.sequence()) + " END AS " + seq + ", " + d.quote(l.runId()) + " AS " + run + " FROM "
                + d.table(l.spec().name()) + " WHERE " + d.quote(l.model()) + " = " + model
                + (companion ? " UNION ALL SELECT " + d.quote(m.id(SEQTEXT)) + ", " + d.quote(m.id(PREV_RUN))
                + " FROM " + s + " WHERE " + d.quote(m.id(ENTRY)) + " = 'batch'" : "");
        String typed = steps.typedFromText(m.sequenceColumn(), d.col("x", m.id("itersnap_s")));
        with.add("itersnap_first AS (SELECT " + typed + " AS " + seq + ", MIN(COALESCE(" + d.col("r", m.id("itersnap_e"))
                + ", " + lo + ")) AS " + e + " FROM (" + entries + ") x LEFT JOIN itersnap_ends r ON "
                + d.col("r", m.id("itersnap_r")) + " = " + d.col("x", m.id("itersnap_r")) + " WHERE "
                + d.col("x", m.id("itersnap_s")) + " IS NOT NULL GROUP BY " + typed + ")");
        // the versions: the history's (no superseding repair), and the copies with the end of the repair that
        // superseded them
        String versions = "SELECT " + d.list(columns, "h") + ", CAST(NULL AS " + d.typeName(ColumnType.text(36))
                + ") AS " + sby + ", " + hi + " AS " + se + " FROM " + d.table(m.target()) + " h";
        if (companion) {
            // a column the history gained after the companion's last repair: no copy had it (NULL)
            List<String> copied = history.stream().map(c -> companionColumns.contains(c.name()) ? d.col("h", c.name())
                    : "CAST(NULL AS " + d.columnType(c) + ") AS " + d.quote(c.name())).toList();
            versions += " UNION ALL SELECT " + String.join(", ", copied) + ", " + d.col("h", m.id(BY)) + ", COALESCE("
                    + d.col("r", m.id("itersnap_e")) + ", " + lo + ") FROM " + s + " h LEFT JOIN itersnap_ends r ON "
                    + d.col("r", m.id("itersnap_r")) + " = " + d.col("h", m.id(BY)) + " WHERE "
                    + d.col("h", m.id(ENTRY)) + " = 'version'";
            // what each repair computed again or copied, with its end
            with.add("itersnap_repairs AS (SELECT " + d.list(m.keys(), "c") + ", " + d.col("c", n.openedSeq())
                    + ", " + d.col("c", m.id(ENTRY)) + ", " + d.col("c", m.id(BY)) + ", COALESCE("
                    + d.col("r", m.id("itersnap_e")) + ", " + lo + ") AS " + e + " FROM " + s + " c LEFT JOIN "
                    + "itersnap_ends r ON " + d.col("r", m.id("itersnap_r")) + " = " + d.col("c", m.id(BY))
                    + " WHERE " + d.col("c", m.id(ENTRY)) + " IN ('all', 'key', 'version'))");
        }
        with.add("itersnap_versions AS (" + versions + ")");
        String vKey = d.list(m.keys(), "v") + ", " + d.col("v", n.openedSeq()) + ", " + d.col("v", m.id("itersnap_sby"));
        String g = null;
        if (companion) {
            // c is before v's superseding repair (in the order the repairs ended, then by run id); any, for the history
            String before = "(" + d.col("v", m.id("itersnap_sby")) + " IS NULL OR " + d.col("c", m.id("itersnap_e"))
                    + " < " + d.col("v", m.id("itersnap_se")) + " OR (" + d.col("c", m.id("itersnap_e")) + " = "
                    + d.col("v", m.id("itersnap_se")) + " AND " + d.col("c", m.id(BY)) + " < "
                    + d.col("v", m.id("itersnap_sby")) + "))";
            String from = " FROM itersnap_versions v JOIN itersnap_repairs c ON " + before + " AND ";
            String pc = d.ordered(m, d.col("c", n.openedSeq()));
            List<String> evidence = new ArrayList<>();
            for (String[] side : new String[][] {{"'o'", n.openedSeq()}, {"'c'", n.closedSeq()}}) {
                String at = d.ordered(m, d.col("v", side[1]));
                String head = "SELECT " + vKey + ", " + side[0] + " AS " + kind + ", " + d.col("c", m.id("itersnap_e"))
                        + " AS " + e + from;
                evidence.add(head + d.col("c", m.id(ENTRY)) + " = 'all' AND " + pc + " <= " + at);
                evidence.add(head + d.col("c", m.id(ENTRY)) + " = 'key' AND " + d.keyJoin(m, "c", "v") + " AND "
                        + pc + " <= " + at);
            }
            evidence.add("SELECT " + vKey + ", 'o' AS " + kind + ", " + d.col("c", m.id("itersnap_e")) + " AS " + e
                    + from + d.col("c", m.id(ENTRY)) + " = 'version' AND " + d.keyJoin(m, "c", "v") + " AND "
                    + d.col("c", n.openedSeq()) + " = " + d.col("v", n.openedSeq()));
            String keys = d.list(m.keys(), null) + ", " + opened + ", " + sby;
            with.add("itersnap_rewritten AS (SELECT " + keys + ", MAX(CASE WHEN " + kind + " = 'o' THEN " + e
                    + " END) AS " + ro + ", MAX(CASE WHEN " + kind + " = 'c' THEN " + e + " END) AS " + rc
                    + " FROM (" + String.join(" UNION ALL ", evidence) + ") y GROUP BY " + keys + ")");
            g = " LEFT JOIN itersnap_rewritten g ON " + d.keyJoin(m, "g", "v") + " AND " + d.col("g", n.openedSeq())
                    + " = " + d.col("v", n.openedSeq()) + " AND (" + d.col("g", m.id("itersnap_sby")) + " = "
                    + d.col("v", m.id("itersnap_sby")) + " OR " + d.col("g", m.id("itersnap_sby")) + " IS NULL AND "
                    + d.col("v", m.id("itersnap_sby")) + " IS NULL)";
        }
        String fromFirst = "GREATEST(COALESCE(" + d.col("fo", m.id("itersnap_e")) + ", " + lo + "), "
                + (g == null ? lo : "COALESCE(" + d.col("g", m.id("itersnap_ro")) + ", " + lo + ")") + ")";
        String closing = "CASE WHEN " + d.col("v", n.closedSeq()) + " IS NULL THEN " + hi + " ELSE GREATEST(COALESCE("
                + d.col("fc", m.id("itersnap_e")) + ", " + lo + "), "
                + (g == null ? lo : "COALESCE(" + d.col("g", m.id("itersnap_rc")) + ", " + lo + ")") + ") END";
        with.add("itersnap_known AS (SELECT v.*, " + fromFirst + " AS " + kf + ", " + closing + " AS " + kc
                + " FROM itersnap_versions v LEFT JOIN itersnap_first fo ON " + d.col("fo", m.id("itersnap_s"))
                + " = " + d.col("v", n.openedSeq()) + " LEFT JOIN itersnap_first fc ON "
                + d.col("fc", m.id("itersnap_s")) + " = " + d.col("v", n.closedSeq()) + (g == null ? "" : g) + ")");
        String kfv = d.col("k", m.id("itersnap_kf"));
        String kcv = d.col("k", m.id("itersnap_kc"));
        String sev = d.col("k", m.id("itersnap_se"));
        String knownFrom = d.quote(m.id("itersnap_known_from"));
        String knownTo = d.quote(m.id("itersnap_known_to"));
        List<String> open = new ArrayList<>();
        List<String> shut = new ArrayList<>();
        for (String c : columns) {
            String o = c.equals(n.validTo()) ? steps.openValidTo(m)
                    : c.equals(n.closedSeq()) || c.equals(n.changedAttributes()) ? "NULL"
                    : c.equals(n.changeType()) ? "'insert'" : null;
            open.add(o == null ? d.col("k", c) + " AS " + d.quote(c) : o + " AS " + d.quote(c));
            shut.add(d.col("k", c) + " AS " + d.quote(c));
        }
        String openTo = "LEAST(" + kcv + ", " + sev + ")";
        String shutFrom = "GREATEST(" + kfv + ", " + kcv + ")";
        String sql = "WITH " + String.join(", ", with)
                + " SELECT " + String.join(", ", open) + ", " + moment(kfv, lo) + " AS " + knownFrom + ", "
                + moment(openTo, hi) + " AS " + knownTo + " FROM itersnap_known k WHERE " + kfv + " < " + openTo
                + " UNION ALL SELECT " + String.join(", ", shut) + ", " + moment(shutFrom, lo) + " AS " + knownFrom
                + ", " + moment(sev, hi) + " AS " + knownTo + " FROM itersnap_known k WHERE " + kcv + " < " + hi
                + " AND " + shutFrom + " < " + sev;
        return Statement.of("both timelines", sql);
    }

    /** {@code expr}, or NULL where it holds the bound {@code bound} (before or after every moment). */
    private static String moment(String expr, String bound) {
        return "CASE WHEN " + expr + " = " + bound + " THEN NULL ELSE " + expr + " END";
    }

    /** A repair before the row's (by {@code before}) that computed its key again from {@code seq} or earlier. */
    private String recomputed(ResolvedModel m, String s, String before, String v, String seq) {
        return "SELECT 1 FROM " + s + " c WHERE " + before + " AND (" + d.col("c", m.id(ENTRY)) + " = 'all' OR ("
                + d.col("c", m.id(ENTRY)) + " = 'key' AND " + d.keyJoin(m, "c", v) + ")) AND "
                + d.ordered(m, d.col("c", m.meta().openedSeq())) + " <= " + d.ordered(m, seq);
    }

    /** {@code seq} was first applied by a run finished by the moment. */
    private String known(ResolvedModel m, Known k, String seq) {
        if (k.maxKnown() == null) {
            return "1 = 0";
        }
        String in = d.ordered(m, seq) + " <= " + d.ordered(m, steps.literal(m.sequenceColumn(), k.maxKnown()));
        if (k.unknown().isEmpty()) {
            return in;
        }
        return in + " AND " + seq + " NOT IN (" + String.join(", ", k.unknown().stream()
                .map(u -> steps.literal(m.sequenceColumn(), u)).toList()) + ")";
    }
}
