package dev.itersnap.internal.sql;

import dev.itersnap.core.ColumnNames;
import dev.itersnap.core.Strategy;
import dev.itersnap.core.TableName;
import dev.itersnap.spi.AbstractSqlDialect;
import dev.itersnap.spi.MetadataSchema;
import dev.itersnap.internal.sql.ModelTables;
import dev.itersnap.internal.ResolvedModel;
import dev.itersnap.spi.SourceColumn;
import dev.itersnap.spi.Statement;
import dev.itersnap.spi.TableSpec;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static dev.itersnap.spi.AbstractSqlDialect.slot;
import static dev.itersnap.spi.AbstractSqlDialect.statement;
import static dev.itersnap.internal.sql.ModelTables.ACTION;
import static dev.itersnap.internal.sql.ModelTables.DEL;
import static dev.itersnap.internal.sql.ModelTables.DELTIME;
import static dev.itersnap.internal.sql.ModelTables.FROM_IDX;
import static dev.itersnap.internal.sql.ModelTables.IDX;
import static dev.itersnap.internal.sql.ModelTables.IEND;
import static dev.itersnap.internal.sql.ModelTables.ISTATE;
import static dev.itersnap.internal.sql.ModelTables.IUPD;
import static dev.itersnap.internal.sql.ModelTables.IVF;
import static dev.itersnap.internal.sql.ModelTables.KIND;
import static dev.itersnap.internal.sql.ModelTables.ND_REPLAYED;
import static dev.itersnap.internal.sql.ModelTables.OIDX;
import static dev.itersnap.internal.sql.ModelTables.RECORDED;
import static dev.itersnap.internal.sql.ModelTables.REG;
import static dev.itersnap.internal.sql.ModelTables.REJECT;
import static dev.itersnap.internal.sql.ModelTables.REPLAYED;
import static dev.itersnap.internal.sql.ModelTables.SCC;
import static dev.itersnap.internal.sql.ModelTables.SEQTEXT;
import static dev.itersnap.internal.sql.ModelTables.T;
import static dev.itersnap.internal.sql.ModelTables.TT;
import static dev.itersnap.internal.sql.ModelTables.UPTO;

/**
 * The shared SQL that applies a run's batches together ({@link SqlSteps#applyBatches}): the batch rules as
 * a computation over all rows of all batches at once, per key ordered by batch, with window functions.
 *
 * <p>How. Every key's rows of the run become events in batch order ({@link #events}): the key's state before the run
 * (position 0, read from the history), its accepted rows (U, or D for an explicit delete), and the batches where rows
 * of it were set aside (present, untouched); a row that repeats the rows before and after it (consecutive batches,
 * equal data) is left out. Windows give, for each event, whether the key has a live version just before it (no
 * deletion since its last upsert, no deleting batch in which it was absent), the values of the version current then
 * (carried through the group of events from one upsert to the next), and the batch that deletes it by absence after
 * it. {@link #derive}, in the same statement, classifies each event (insert, return, change, noop, delete, ...),
 * counts the events that change the key's state (a version's end is the one with one more), takes the time each takes
 * effect as the running maximum of their times, so that a version never ends before it starts, and makes a row of
 * each deletion by absence; the work table receives only the rows the writes read.
 *
 * <p>Regressions. A change or delete earlier than the version it would close is set aside, and that decision depends
 * on the rows before it. The derivation assumes there is none; where it finds some, the earliest per key is set aside
 * in the stage and the key derived again (everything before it was exact), until none is left. Runs without
 * regressions derive once.
 */
final class SetBasedApply {
    /** Actions of events that change a key's state, in the order of {@code derive}'s window. */
    private static final String STATE_CHANGES = "('ilive', 'idrec', 'iclosed', 'open', 'change', 'delete', 'absent')";
    /** The same, as the work table holds them (an {@code open} is an {@code insert} or a {@code return}). */
    private static final String STATE_CHANGE_ACTIONS = "('ilive', 'idrec', 'iclosed', 'insert', 'return', 'change', "
            + "'delete', 'absent')";

    private final SqlSteps steps;
    /** The dialect's SQL primitives. */
    private final AbstractSqlDialect p;
    private final ResolvedModel m;
    private final BatchRun run;
    private final ColumnNames n;
    private final boolean full;
    private final ModelTables tables;

    SetBasedApply(SqlSteps steps, ResolvedModel m, BatchRun run) {
        this.steps = steps;
        this.p = steps.primitives();
        this.m = m;
        this.run = run;
        this.n = m.meta();
        this.full = m.settings().hardDeletes().fullBatches();
        this.tables = new ModelTables(p, m);
    }

    ApplyStatements statements() {
        Map<String, Object> values = new LinkedHashMap<>();
        values.put(SqlSteps.MODEL, m.name());
        values.put(SqlSteps.RUN_ID, run.runId());
        values.put(SqlSteps.LOGGED_AT, run.loggedAt());
        values.put(SqlSteps.SEQ, run.batches().get(0).sequence());
        List<Statement> clear = List.of(tables.clear(m.work()));
        ApplyStatements.Derivation before = null;
        Statement resetRegressions = null;
        if (run.keyScoped()) {
            before = derivation(true, values, clear);
            resetRegressions = Statement.of("put regressions back", "UPDATE " + table(m.stage()) + " SET " + internal(REJECT)
                    + " = NULL WHERE " + internal(REJECT) + " = " + RejectReason.UPDATED_AT_REGRESSION.literal());
        }
        String written = writeVersions();
        return new ApplyStatements(listBatches(), prepare(), before, resetRegressions, derivation(false, values, clear),
                statement("close current versions", closeCurrent(), values),
                statement("insert versions", insertVersions(), values),
                written == null ? null : statement("write versions", written, values),
                statement("set rows aside", logRejected(), values),
                statement("archive rows", archive(), values));
    }

    private ApplyStatements.Derivation derivation(boolean before, Map<String, Object> values, List<Statement> clear) {
        String which = before ? " before the late batches" : "";
        return new ApplyStatements.Derivation(
                statement("derive versions" + which, derive(before), values), List.of(),
                statement("count batches" + which, counts(), values),
                List.of(statement("set regressions aside" + which, markRegressions(), values),
                        clear.get(0)), clear);
    }

    // ---------------------------------------------------------------- names

    private String quoted(String identifier) {
        return p.quote(identifier);
    }

    /** An internal column, folded and quoted. */
    private String internal(String internal) {
        return p.quote(m.id(internal));
    }

    private String col(String alias, String column) {
        return p.col(alias, column);
    }

    /** A working alias of a derived table's column (internal prefix: no source column can be called so). */
    private String working(String name) {
        return p.quote(m.id("itersnap_w_" + name));
    }

    /** {@code alias.}{@link #working}. */
    private String workingOf(String alias, String name) {
        return alias + "." + working(name);
    }

    /**
     * {@code WITH q0 AS (levels[0]), q1 AS (levels[1]), ...}: a chain of window levels, each over the one before.
     * Written as common table expressions, not nested derived tables: H2 plans nested derived tables again for every
     * level above them (the time to prepare doubles with each level).
     */
    private String with(String... levels) {
        List<String> parts = new ArrayList<>();
        for (int k = 0; k < levels.length; k++) {
            parts.add(cte(k) + " AS " + p.windowLevelMaterialization(k) + "(" + levels[k] + ")");
        }
        return "WITH " + String.join(", ", parts);
    }

    /** The name of level {@code k} of {@link #with}. */
    private String cte(int k) {
        return quoted(m.id("itersnap_q" + k));
    }

    private String nullText(int length) {
        return "CAST(NULL AS " + p.typeName(TableSpec.ColumnType.text(length)) + ")";
    }

    /** An internal column of an alias. */
    private String internalOf(String alias, String internal) {
        return p.col(alias, m.id(internal));
    }

    private String table(TableName table) {
        return p.table(table);
    }

    private String keys(String alias) {
        return p.list(m.keys(), alias);
    }

    private String partition(String alias) {
        return "PARTITION BY " + keys(alias) + " ORDER BY " + internalOf(alias, IDX);
    }

    private String nullOf(SourceColumn column) {
        return "CAST(NULL AS " + p.columnType(column) + ")";
    }

    private String nullUpd() {
        return nullOf(m.updatedAtColumn());
    }

    private String text(String literal) {
        return p.stringLiteral(literal);
    }

    /** The data columns of the history (source, then history-only), with {@code expr} giving each one's value. */
    private String data(java.util.function.Function<SourceColumn, String> expr) {
        return m.historyDataSourceColumns().stream().map(col -> expr.apply(col) + " AS " + quoted(col.name()))
                .collect(Collectors.joining(", "));
    }

    private String dataNames() {
        return p.list(m.historyDataColumns(), null);
    }

    // ---------------------------------------------------------------- which columns compare where

    /** Is {@code column} compared at the position {@code idxExpr}? Null: never; "": always; else a condition. */
    private String comparedAt(String column, String idxExpr) {
        if (run.untracked().contains(column)) {
            return null;
        }
        return run.introducedAtFirst().contains(column) ? idxExpr + " > 1" : "";
    }

    /** A condition true when {@code column} differs between {@code a} and {@code b}, compared at {@code idxExpr}. */
    private String differs(String column, String a, String b, String idxExpr) {
        return valuesDiffer(column, col(a, column), col(b, column), idxExpr);
    }

    /** {@link #differs} of two expressions of {@code column}'s values. */
    private String valuesDiffer(String column, String left, String right, String idxExpr) {
        String when = comparedAt(column, idxExpr);
        if (when == null) {
            return null;
        }
        String distinct = p.isDistinct(steps.comparable(m, column, left), steps.comparable(m, column, right));
        return when.isEmpty() ? distinct : "(" + when + " AND " + distinct + ")";
    }

    /** Whether row {@code b} changes the version {@code a} under the model's strategy, compared at {@code idxExpr}. */
    private String changed(String a, String b, String idxExpr, String versionUpdatedAt) {
        if (m.settings().strategy() == Strategy.TIMESTAMP) {
            return "(" + col(b, m.updatedAt()) + " > " + versionUpdatedAt + ")";
        }
        List<String> parts = new ArrayList<>();
        for (String column : m.tracked()) {
            String diff = differs(column, a, b, idxExpr);
            if (diff != null) {
                parts.add(diff);
            }
        }
        return parts.isEmpty() ? "FALSE" : "(" + String.join(" OR ", parts) + ")";
    }

    /** changed_attributes of version {@code a} closed by row {@code b} at {@code idxExpr}: a JSON array text. */
    private String changedAttributes(String a, String b, String idxExpr) {
        List<String> parts = new ArrayList<>();
        for (String column : m.tracked()) {
            String diff = differs(column, a, b, idxExpr);
            if (diff != null) {
                parts.add("CASE WHEN " + diff + " THEN " + text(",\"" + column + "\"") + " ELSE '' END");
            }
        }
        String json = parts.isEmpty() ? "'[]'"
                : p.concat(List.of("'['", "SUBSTRING(" + p.concat(parts) + " FROM 2)", "']'"));
        return p.changedAttributesValue(json);
    }

    // ---------------------------------------------------------------- prepare

    /** The most batches one statement lists (beyond, a few statements: none carries thousands of values). */
    private static final int BATCHES_PER_STATEMENT = 60;

    /**
     * Whether the batches are listed with their deletion times in one statement ({@link #listBatches}): with full
     * batches, where the stage is filled before the batches are listed (not a key-scoped replay, which stages by
     * them) and one statement lists them all. Otherwise they are listed, then their times set by a MERGE.
     */
    private boolean listedWithTimes() {
        return full && !run.keyScoped() && run.batches().size() <= BATCHES_PER_STATEMENT;
    }

    /**
     * The run's batches into the batches table, a few dozen per statement; with {@link #listedWithTimes}, one
     * statement that also writes each batch's deletion time and the batches that delete absent keys ({@link
     * #deletionTimes}), read from the stage.
     */
    private List<Statement> listBatches() {
        List<Statement> out = new ArrayList<>();
        List<BatchRun.BatchInfo> batches = run.batches();
        String seqType = p.columnType(m.sequenceColumn());
        String updType = p.columnType(m.updatedAtColumn());
        List<String> listed = List.of(quoted(m.sequenceBy()), internal(IDX), internal(ModelTables.SEQTEXT),
                internal(DELTIME), internal(RECORDED), internal(REPLAYED));
        for (int from = 0; from < batches.size(); from += BATCHES_PER_STATEMENT) {
            Statement.Builder values = Statement.builder("list batches").sql("VALUES ");
            for (int k = from; k < Math.min(batches.size(), from + BATCHES_PER_STATEMENT); k++) {
                BatchRun.BatchInfo info = batches.get(k);
                values.sql(k == from ? "(CAST(" : ", (CAST(").bind(info.sequence()).sql(" AS " + seqType + "), "
                        + (k + 1) + ", CAST(").bind(info.sequenceText()).sql(" AS "
                        + p.typeName(TableSpec.ColumnType.text(256)) + "), CAST(").bind(info.deletionTime()).sql(" AS "
                        + updType + "), " + (info.recorded() ? "TRUE" : "FALSE") + ", "
                        + (info.replayed() ? "TRUE" : "FALSE") + ")");
            }
            if (listedWithTimes()) {
                Statement relation = Statement.builder("list batches").sql("(").sql(values.build()).sql(") b ("
                        + String.join(", ", listed) + ")").build();
                List<String> written = new ArrayList<>(listed);
                written.set(3, working("dt"));
                out.add(Statement.builder("list batches").sql("INSERT INTO " + table(m.batches()) + " ("
                        + String.join(", ", listed) + ", " + internal(ModelTables.ND) + ", " + internal(ND_REPLAYED)
                        + ") SELECT " + written.stream().map(c -> "z." + c).collect(Collectors.joining(", ")) + ", z."
                        + working("nd") + ", z." + working("ndr") + " FROM (").sql(deletionTimes(relation))
                        .sql(") z").build());
            } else {
                out.add(Statement.builder("list batches").sql("INSERT INTO " + table(m.batches()) + " ("
                        + String.join(", ", listed) + ") ").sql(values.build()).build());
            }
        }
        return out;
    }

    /**
     * Each batch of {@code batches} (the batches table, or the batches listed as values, aliased {@code b}) with its
     * deletion time where the engine does not know it (the greatest updated_at of its rows in the stage) as
     * {@code dt}, and the first batch from each one on that deletes absent keys ({@code nd}; among the replayed ones
     * only: {@code ndr}).
     */
    private Statement deletionTimes(Statement batches) {
        String bb = "b";
        String y = "y";
        String dt = "CASE WHEN " + internalOf(bb, RECORDED) + " OR " + internalOf(bb, DELTIME) + " IS NOT NULL THEN "
                + internalOf(bb, DELTIME) + " ELSE " + workingOf("x", "mu") + " END";
        String listed = Stream.of(col(bb, m.sequenceBy()), internalOf(bb, IDX), internalOf(bb, ModelTables.SEQTEXT),
                internalOf(bb, RECORDED), internalOf(bb, REPLAYED)).collect(Collectors.joining(", "));
        String following = " OVER (ORDER BY " + internalOf(y, IDX) + " ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING)";
        return Statement.builder("list batches").sql("SELECT " + y + ".*, MIN(CASE WHEN " + workingOf(y, "dt")
                + " IS NOT NULL THEN " + internalOf(y, IDX) + " END)" + following + " AS " + working("nd")
                + ", MIN(CASE WHEN " + workingOf(y, "dt") + " IS NOT NULL AND " + internalOf(y, REPLAYED) + " THEN "
                + internalOf(y, IDX) + " END)" + following + " AS " + working("ndr") + " FROM (SELECT " + listed + ", "
                + dt + " AS " + working("dt") + " FROM ").sql(batches).sql(" LEFT JOIN (SELECT "
                + col("s", m.sequenceBy()) + ", MAX(" + col("s", m.updatedAt()) + ") AS " + working("mu") + " FROM "
                + table(m.stage()) + " s WHERE " + col("s", m.sequenceBy()) + " IS NOT NULL GROUP BY "
                + col("s", m.sequenceBy()) + ") x ON " + col("x", m.sequenceBy()) + " = " + col(bb, m.sequenceBy())
                + ") " + y).build();
    }

    private List<Statement> prepare() {
        List<Statement> out = new ArrayList<>();
        if (full && !listedWithTimes()) {
            out.add(Statement.builder("list batches").sql("MERGE INTO " + table(m.batches()) + " b USING (")
                    .sql(deletionTimes(Statement.of("list batches", table(m.batches()) + " b"))).sql(") z ON "
                    + internalOf("b", IDX) + " = " + internalOf("z", IDX) + " WHEN MATCHED THEN UPDATE SET "
                    + internal(DELTIME) + " = " + workingOf("z", "dt") + ", " + internal(ModelTables.ND) + " = "
                    + workingOf("z", "nd") + ", " + internal(ND_REPLAYED) + " = " + workingOf("z", "ndr")).build());
        }
        for (String column : run.introducedAtFirst()) {
            out.add(statement("fill new column", fillIntroduced(column),
                    SqlSteps.SEQ, run.batches().get(0).sequence()));
        }
        out.add(Statement.of("find changed keys", affectedKeys()));
        return out;
    }

    /**
     * Row {@code s} of the stage equals version {@code h} in every source column but key and sequence. When the
     * sequence is also {@code updated_at} under strategy timestamp, a newer sequence is a change, so it is compared.
     */
    private String sameAsVersion(String h, String s) {
        boolean sequenceTracked = m.sequenceBy().equals(m.updatedAt())
                && m.settings().strategy() == Strategy.TIMESTAMP;
        List<String> parts = new ArrayList<>();
        for (String column : m.sourceNames()) {
            if ((sequenceTracked || !m.isSequenceColumn(column)) && !m.keys().contains(column)) {
                parts.add("NOT " + p.isDistinct(steps.comparable(m, column, col(h, column)),
                        steps.comparable(m, column, col(s, column))));
            }
        }
        return parts.isEmpty() ? "1 = 1" : String.join(" AND ", parts);
    }

    /** Version {@code h} is live (not a deletion record); {@code h} may be an outer join's missing row. */
    private String live(String h) {
        return h + "." + quoted(m.keys().get(0)) + " IS NOT NULL" + (m.deletionRecords()
                ? " AND COALESCE(" + col(h, n.isDeleted()) + ", FALSE) = FALSE" : "");
    }

    /** Version {@code h} was current just before batch {@code b} (whose sequence no version holds yet). */
    /** A late batch ({@code b}: the batches table's alias): one before {@code after} that is not replayed. */
    private String lateBatch(String b, int after) {
        return internalOf(b, IDX) + " < " + after + " AND NOT " + internalOf(b, REPLAYED);
    }

    private String currentAt(String h, String b) {
        String at = p.ordered(m, col(b, m.sequenceBy()));
        return p.ordered(m, col(h, n.openedSeq())) + " < " + at + " AND (" + col(h, n.closedSeq()) + " IS NULL OR "
                + p.ordered(m, col(h, n.closedSeq())) + " > " + at + ")";
    }

    /**
     * The keys the run may change, each with the first batch whose rows are its events ({@link ModelTables#FROM_IDX}).
     *
     * <p>From the first batch after the replayed ones (every batch when none is replayed): a key whose rows in every
     * such batch are accepted (exact copies aside: a batch applies them once), not deletes, and equal to its current
     * live version in every column is left out: each
     * batch leaves it as it is, and nothing of it is logged (without full batches its rows are archived as they
     * are). Under full batches the live keys absent from those batches are in (they are deleted). With a column
     * introduced at the first batch every key of the run is in.
     *
     * <p>A key-scoped replay adds, from the first batch, the keys a late batch changes: a row that is not equal to
     * the key's live version just before the late batch (read from the history by the sequences that opened and
     * closed each version), or an explicit delete; under full batches also the keys live then and absent from a late
     * batch that deletes absent keys. Every other key's history is already that of the batches in order: for it
     * each late batch changes nothing.
     */
    private String affectedKeys() {
        String s = "s";
        String h = "c";
        int after = run.firstAfterReplayed();
        int count = run.batches().size() - after + 1;
        String present = "NOT (" + m.keys().stream().map(k -> col(s, k) + " IS NULL").collect(Collectors.joining(" OR "))
                + ")";
        List<String> parts = new ArrayList<>();
        if (count > 0) {
            String changed = run.introducedAtFirst().isEmpty()
                    ? " HAVING SUM(CASE WHEN " + internalOf(s, REJECT) + " = " + RejectReason.DUPLICATE_COPY.literal()
                    + " THEN 0 ELSE 1 END) <> " + count
                            + " OR SUM(CASE WHEN " + live(h) + " AND " + internalOf(s, REJECT)
                            + " IS NULL AND NOT " + internalOf(s, DEL) + " AND " + sameAsVersion(h, s)
                            + " THEN 1 ELSE 0 END) <> " + count
                    : "";
            String inRun = " JOIN " + table(m.batches()) + " b ON " + col("b", m.sequenceBy()) + " = " + col(s, m.sequenceBy())
                    + " AND " + internalOf("b", IDX) + " >= " + after;
            parts.add("SELECT " + keys(s) + ", " + after + " AS " + internal(FROM_IDX) + " FROM " + table(m.stage())
                    + " s" + inRun + " LEFT JOIN " + table(m.target()) + " c ON " + p.keyJoin(m, h, s) + " AND "
                    + steps.isOpen(m, col(h, n.validTo())) + " WHERE " + present + " GROUP BY " + keys(s) + changed);
            if (full) {
                String hh = SqlSteps.outer("h");
                parts.add("SELECT " + keys(hh) + ", " + after + " FROM " + table(m.target()) + " " + hh + " WHERE "
                        + steps.isOpen(m, col(hh, n.validTo())) + (m.deletionRecords() ? " AND COALESCE("
                        + col(hh, n.isDeleted()) + ", FALSE) = FALSE" : "") + " AND NOT EXISTS (SELECT 1 FROM "
                        + table(m.stage()) + " s" + inRun + " WHERE " + p.keyJoin(m, s, hh) + ")");
            }
        }
        if (run.keyScoped()) {
            String late = lateBatch("b", after);
            // the versions current at each late batch, of the keys its rows name: found by key equality first (a
            // semi-join of the late rows' keys), the validity range applied to those versions only, then joined to the
            // late rows by key and batch. An outer join on the range itself is a nested loop over the whole history
            // on DuckDB (1.9 s of a 2.1 s statement at 10,000 keys); this form is a hash join there and on PostgreSQL
            String at = m.id("itersnap_at");
            String c0 = SqlSteps.outer("c");
            String current = "SELECT " + c0 + ".*, " + col("b0", m.sequenceBy()) + " AS " + quoted(at) + " FROM "
                    + table(m.target()) + " " + c0 + " JOIN " + table(m.batches()) + " b0 ON " + lateBatch("b0", after)
                    + " AND " + currentAt(c0, "b0") + " WHERE EXISTS (SELECT 1 FROM " + table(m.stage()) + " s1 JOIN "
                    + table(m.batches()) + " b1 ON " + col("b1", m.sequenceBy()) + " = " + col("s1", m.sequenceBy())
                    + " AND " + lateBatch("b1", after) + " WHERE " + p.keyJoin(m, "s1", c0) + ")";
            parts.add("SELECT " + keys(s) + ", 1 AS " + internal(FROM_IDX) + " FROM " + table(m.stage()) + " s JOIN "
                    + table(m.batches()) + " b ON "
                    + col("b", m.sequenceBy()) + " = " + col(s, m.sequenceBy()) + " AND " + late + " LEFT JOIN ("
                    + current + ") c ON " + p.keyJoin(m, h, s) + " AND " + col(h, at) + " = " + col("b", m.sequenceBy())
                    + " WHERE " + present
                    + " AND " + internalOf(s, REJECT) + " IS NULL AND (" + internalOf(s, DEL) + " OR NOT (" + live(h) + " AND "
                    + sameAsVersion(h, s) + "))");
            if (full) {
                String hh = SqlSteps.outer("h");
                String bb = SqlSteps.outer("b");
                parts.add("SELECT " + keys(hh) + ", 1 FROM " + table(m.target()) + " " + hh + " JOIN "
                        + table(m.batches()) + " " + bb + " ON " + lateBatch(bb, after) + " AND " + internalOf(bb, DELTIME)
                        + " IS NOT NULL AND " + currentAt(hh, bb) + " WHERE " + live(hh) + " AND NOT EXISTS (SELECT 1 FROM "
                        + table(m.stage()) + " s WHERE " + p.keyJoin(m, s, hh) + " AND " + col(s, m.sequenceBy()) + " = "
                        + col(bb, m.sequenceBy()) + ")");
            }
        }
        String k = "k";
        String union = String.join(" UNION ALL ", parts);
        // without a replay the parts are disjoint (a key with rows in the run, a live key without)
        String select = !run.keyScoped() ? union
                : "SELECT " + keys(k) + ", MIN(" + internalOf(k, FROM_IDX) + ") FROM (" + union + ") k GROUP BY "
                        + keys(k);
        return "INSERT INTO " + table(m.keysTable()) + " (" + p.list(m.keys(), null) + ", " + internal(FROM_IDX) + ") "
                + select;
    }

    /**
     * A column first seen in the run's first batch: the versions current when it starts take its value from the
     * batch's row in place (a row set aside, or a regression, leaves its version alone).
     */
    private String fillIntroduced(String column) {
        String s = "s";
        String h = "t";
        String live = m.deletionRecords() ? "COALESCE(" + col(h, n.isDeleted()) + ", FALSE) = FALSE" : "1 = 1";
        String regression = "(" + live + " AND (" + changed(h, s, "1", col(h, n.updatedAt())) + " OR " + internalOf(s, DEL)
                + ") AND " + col(s, m.updatedAt()) + " < " + col(h, n.validFrom()) + ")";
        return "MERGE INTO " + table(m.target()) + " t USING (SELECT * FROM " + table(m.stage()) + " x WHERE "
                + col("x", m.sequenceBy()) + " = " + p.param(m.sequenceColumn(), SqlSteps.SEQ) + " AND "
                + internalOf("x", REJECT) + " IS NULL) s ON " + p.keyJoin(m, h, s) + " AND " + steps.isOpen(m, col(h,
                n.validTo()))
                + " AND NOT " + regression + " WHEN MATCHED THEN UPDATE SET " + quoted(column) + " = "
                + col(s, column);
    }

    // ---------------------------------------------------------------- events

    /**
     * The levels of {@link #derive} that give the keys' events: the state before the run, accepted rows, batches where
     * rows were set aside; each with the first batch after it that deletes absent keys ({@code nd_after}), then the
     * windows over them, one level each. The last level has one row per event, ordered per key by position.
     */
    private List<String> events(boolean beforeLate) {
        String s = "s";
        String h = "h";
        String nd = beforeLate ? ND_REPLAYED : ModelTables.ND;
        String next = full ? " LEFT JOIN " + table(m.batches()) + " bn ON " + internalOf("bn", IDX) + " = " + internalOf("b", IDX) + " + 1"
                : "";
        String ndAfter = (full ? internalOf("bn", nd) : "CAST(NULL AS INT)") + " AS " + working("nd_after");
        // the keys whose events these are: before the late batches, those computed again from the first batch
        String keysOf = " JOIN " + table(m.keysTable()) + " k ON " + p.keyJoin(m, "k", s) + (beforeLate
                ? " AND " + internalOf("k", FROM_IDX) + " = 1" : "");
        String seqJoin = keysOf + " JOIN " + table(m.batches()) + " b ON " + col("b", m.sequenceBy()) + " = "
                + col(s, m.sequenceBy()) + " AND " + (beforeLate ? internalOf("b", REPLAYED) : internalOf("b", IDX) + " >= "
                + internalOf("k", FROM_IDX)) + next;
        String accepted = "SELECT " + data(col -> m.sourceColumn(col.name()) != null ? col(s, col.name()) : nullOf(col))
                + ", " + internalOf("b", IDX) + " AS " + internal(IDX) + ", CASE WHEN " + internalOf(s, DEL) + " THEN 'D' ELSE 'U' END AS "
                + internal(KIND) + ", " + nullText(8) + " AS " + internal(ISTATE) + ", " + nullUpd() + " AS " + internal(IVF) + ", "
                + nullUpd() + " AS " + internal(IUPD) + ", " + nullUpd() + " AS " + internal(IEND) + ", " + ndAfter + " FROM "
                + table(m.stage()) + " s" + seqJoin + " WHERE " + internalOf(s, REJECT) + " IS NULL";
        // one event per key and batch with rows set aside: DISTINCT over the key, batch and kind only (the data
        // columns are NULL there, and some types have no equality, e.g. PostgreSQL's json)
        String sa = "sa";
        String setAside = "SELECT " + data(col -> m.keys().contains(col.name()) ? col(sa, col.name()) : nullOf(col))
                + ", " + workingOf(sa, "ix") + ", " + workingOf(sa, "kd") + ", " + nullText(8) + ", " + nullUpd() + ", " + nullUpd()
                + ", " + nullUpd() + ", " + workingOf(sa, "nd_after") + " FROM (SELECT DISTINCT " + keys(s) + ", "
                + internalOf("b", IDX) + " AS " + working("ix") + ", CASE WHEN " + internalOf(s, REJECT)
                + " = " + RejectReason.UPDATED_AT_REGRESSION.literal() + " THEN 'G' ELSE 'R' END AS " + working("kd") + ", "
                + ndAfter + " FROM "
                + table(m.stage()) + " s" + seqJoin + " WHERE " + internalOf(s, REJECT)
                + " IN (" + RejectReason.DUPLICATE_KEY.literal() + ", " + RejectReason.NULL_UPDATED_AT.literal()
                + ", " + RejectReason.UPDATED_AT_REGRESSION.literal() + ")) " + sa;
        // the state before the run, at position 0: the first batch that deletes absent keys is the one from the
        // key's first batch on
        String first = full ? " LEFT JOIN " + table(m.batches()) + " bn ON " + internalOf("bn", IDX) + " = "
                + (beforeLate ? "1" : internalOf("k", FROM_IDX)) : "";
        String keysOnly = beforeLate ? " WHERE " + internalOf("k", FROM_IDX) + " = 1" : "";
        String drec = m.deletionRecords() ? "COALESCE(" + col(h, n.isDeleted()) + ", FALSE)" : "FALSE";
        String current = "SELECT " + data(col -> col(h, col.name())) + ", 0, 'I', CASE WHEN " + drec
                + " THEN 'drec' ELSE 'live' END, " + col(h, n.validFrom()) + ", " + col(h, n.updatedAt()) + ", "
                + nullUpd() + ", " + ndAfter + " FROM " + table(m.keysTable()) + " k JOIN " + table(m.target()) + " h ON "
                + p.keyJoin(m, "k", h) + " AND " + steps.isOpen(m, col(h, n.validTo())) + first + keysOnly;
        String hc = SqlSteps.outer("h");
        String closed = "SELECT " + data(col -> m.keys().contains(col.name()) ? col(hc, col.name()) : nullOf(col))
                + ", 0, 'I', 'closed', " + nullUpd() + ", " + nullUpd() + ", MAX(" + col(hc, n.validTo()) + "), "
                + (full ? "MAX(" + internalOf("bn", nd) + ")" : "CAST(NULL AS INT)") + " FROM "
                + table(m.keysTable()) + " k JOIN " + table(m.target()) + " " + hc + " ON " + p.keyJoin(m, "k", hc)
                + first + (beforeLate ? keysOnly + " AND" : " WHERE") + " NOT EXISTS (SELECT 1 FROM "
                + table(m.target()) + " o WHERE " + p.keyJoin(m, "o", hc) + " AND "
                + steps.isOpen(m, col("o", n.validTo())) + ") GROUP BY " + keys(hc);
        String rows = accepted + " UNION ALL " + setAside + " UNION ALL " + current + " UNION ALL " + closed;
        List<String> fill = nullsFilled();
        List<String> repeats = repeatsLeftOut(1 + fill.size());
        int o = fill.size() + repeats.size(); // the levels before the windows below
        String before = " ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING";
        // the previous event's first deleting batch after it, and the next event; the position up to which (not
        // included) the event's row repeats: where rows left out repeat it, the next event's
        String r = "r";
        String nextIdx = "LEAD(" + internalOf(r, IDX) + ") OVER (" + partition(r) + ")";
        String upTo = repeats.isEmpty() ? internalOf(r, IDX) + " + 1"
                : "CASE WHEN " + workingOf(r, "rn") + " = 1 THEN " + nextIdx + " ELSE " + internalOf(r, IDX) + " + 1 END";
        String l1 = "SELECT r.*, LAG(" + workingOf(r, "nd_after") + ") OVER (" + partition(r) + ") AS " + working("prev_nd")
                + ", " + nextIdx + " AS " + working("next_idx") + ", " + upTo + " AS " + working("upto") + " FROM " + cte(o + 0)
                + " r";
        // g: how many batches before or at this event deleted the key by its absence (if it was live then)
        String y = "y";
        String l2 = "SELECT y.*, SUM(CASE WHEN " + workingOf(y, "prev_nd") + " < " + internalOf(y, IDX) + " THEN 1 ELSE 0 END) OVER ("
                + partition(y) + " ROWS UNBOUNDED PRECEDING) AS " + working("g") + " FROM " + cte(o + 1) + " y";
        // the last upsert, delete or state before this event (position * 4 + what), the absences up to it, and the
        // last upsert or state (the version an upsert is compared with)
        String z = "z";
        String l3 = "SELECT z.*, MAX(CASE " + internalOf(z, KIND) + " WHEN 'U' THEN " + internalOf(z, IDX) + " * 4 + 1 WHEN 'D' THEN "
                + internalOf(z, IDX) + " * 4 + 2 WHEN 'I' THEN (CASE WHEN " + internalOf(z, ISTATE)
                + " = 'live' THEN 3 ELSE 0 END) END)"
                + " OVER (" + partition(z) + before + ") AS " + working("pud") + ", MAX(CASE WHEN " + internalOf(z, KIND)
                + " IN ('U', 'D', 'I') THEN " + workingOf(z, "g") + " END) OVER (" + partition(z) + before + ") AS " + working("gud")
                + " FROM " + cte(o + 2) + " z";
        // live before: the last of those was an upsert or a live state, and no absence deleted the key since
        String v = "v";
        String lb = "CASE WHEN " + workingOf(v, "pud") + " IS NULL THEN FALSE WHEN " + workingOf(v, "g") + " > " + workingOf(v, "gud")
                + " THEN FALSE ELSE MOD(" + workingOf(v, "pud") + ", 4) IN (1, 3) END";
        String la = "CASE " + internalOf(v, KIND) + " WHEN 'U' THEN TRUE WHEN 'D' THEN FALSE WHEN 'I' THEN " + internalOf(v, ISTATE)
                + " = 'live' ELSE " + lb + " END";
        String l4 = "SELECT v.*, " + lb + " AS " + working("lb") + ", " + la + " AS " + working("la") + ", SUM(CASE WHEN "
                + internalOf(v, KIND) + " = 'U' AND NOT (" + lb + ") THEN 1 ELSE 0 END) OVER (" + partition(v)
                + " ROWS UNBOUNDED PRECEDING) AS " + working("streak") + ", COUNT(CASE WHEN " + internalOf(v, KIND)
                + " IN ('U', 'I') THEN 1 END) OVER (" + partition(v) + " ROWS UNBOUNDED PRECEDING) AS " + working("ug")
                + " FROM " + cte(o + 3) + " v";
        List<String> out = new ArrayList<>();
        out.add(rows);
        out.addAll(fill);
        out.addAll(repeats);
        out.addAll(List.of(l1, l2, l3, l4));
        return out;
    }

    /**
     * Two levels over the events ({@code cte(from - 1)}) that leave out the rows that repeat the row before them and
     * are repeated by the row after them: U events in consecutive batches, equal in every data column but the
     * sequence (updated_at always compared). Such a row
     * changes nothing (it is a noop of the version its first row left), no batch between its neighbours can delete its
     * key by absence, and it is archived, where it is, from the stage by the range of its run's first row (the work
     * table's {@code upto}). So the levels after see, of a key present and unchanged in 30 daily batches, two rows
     * instead of 30. The first row of a run of three or more carries {@code rn = 1} and no first deleting batch after
     * it (the key is present until the run's last row). None under untracked_columns: overwrite (every noop may
     * overwrite its version) and ignore_null_updates (its levels fill NULLs from the rows before).
     */
    private List<String> repeatsLeftOut(int from) {
        if (!overwrittenColumns().isEmpty() || m.settings().ignoreNullUpdates()) {
            return List.of();
        }
        String r = "r";
        String w = partition(r);
        List<String> prev = new ArrayList<>(List.of(internalOf(r, KIND) + " = 'U'", "LAG(" + internalOf(r, KIND) + ") OVER (" + w
                + ") = 'U'", "LAG(" + internalOf(r, IDX) + ") OVER (" + w + ") = " + internalOf(r, IDX) + " - 1"));
        List<String> nextOne = new ArrayList<>(List.of(internalOf(r, KIND) + " = 'U'", "LEAD(" + internalOf(r, KIND) + ") OVER (" + w
                + ") = 'U'", "LEAD(" + internalOf(r, IDX) + ") OVER (" + w + ") = " + internalOf(r, IDX) + " + 1"));
        for (String col : m.historyDataColumns()) {
            if (m.keys().contains(col) || m.sourceColumn(col) == null
                    || (m.isSequenceColumn(col) && !col.equals(m.updatedAt()))) {
                // the key is the partition's; a column the source lacks is NULL in every row; the sequence differs
                // in every batch, and a version keeps its first row's (updated_at is compared even when it is the
                // sequence: under strategy timestamp a newer one is a change)
                continue;
            }
            String here = steps.comparable(m, col, col(r, col));
            prev.add("NOT " + p.isDistinct(steps.comparable(m, col, "LAG(" + col(r, col) + ") OVER (" + w + ")"), here));
            nextOne.add("NOT " + p.isDistinct(steps.comparable(m, col, "LEAD(" + col(r, col) + ") OVER (" + w + ")"),
                    here));
        }
        String marked = "SELECT r.*, CASE WHEN " + String.join(" AND ", prev) + " THEN 1 ELSE 0 END AS " + working("rp")
                + ", CASE WHEN " + String.join(" AND ", nextOne) + " THEN 1 ELSE 0 END AS " + working("rn") + " FROM "
                + cte(from - 1) + " r";
        String k = "k";
        List<String> cols = new ArrayList<>();
        m.historyDataColumns().forEach(col -> cols.add(col(k, col)));
        List.of(IDX, KIND, ISTATE, IVF, IUPD, IEND).forEach(x -> cols.add(internalOf(k, x)));
        cols.add("CASE WHEN " + workingOf(k, "rn") + " = 1 THEN NULL ELSE " + workingOf(k, "nd_after") + " END AS " + working("nd_after"));
        cols.add(workingOf(k, "rn"));
        String kept = "SELECT " + String.join(", ", cols) + " FROM " + cte(from) + " k WHERE NOT (" + workingOf(k, "rp")
                + " = 1 AND " + workingOf(k, "rn") + " = 1)";
        return List.of(marked, kept);
    }

    /**
     * The group of an event that {@link #derive}'s levels after the events are ordered by within a key, before the
     * position: under strategy timestamp the key's live streak (the greatest updated_at of the version current is
     * taken within it), else the count of U and I events up to it (the version an upsert is compared with is the
     * first of its group before). Both grow with the position, so that the order is the position's, and each level
     * reuses one sort.
     */
    private String group() {
        return working(m.settings().strategy() == Strategy.TIMESTAMP ? "streak" : "ug");
    }

    /**
     * The columns an upsert is compared in with the version it sees as current ({@link #changed}): the tracked ones
     * (none under strategy timestamp, which compares updated_at with the streak's greatest, {@code cupd}).
     */
    private List<String> comparedWithVersion() {
        if (m.settings().strategy() == Strategy.TIMESTAMP) {
            return List.of();
        }
        return m.tracked().stream().filter(col -> comparedAt(col, "1") != null).toList();
    }

    /**
     * {@code ignore_null_updates}: two levels over the events ({@code cte(0)}) that give an accepted row's NULL the
     * value of the key's current version just before it (every column is tracked then, so the key's latest row or
     * state that supplied a value, within the key's life: an explicit delete ends a life, and the key's state before
     * the run counts as a row). Per column: {@code nn} counts the rows and states that supplied a value so far; the
     * rows of one (life, nn) group all stand for the value of its first row. The key, updated_at, sequence_by, columns
     * the source no longer has and columns introduced after the run's batches are left as they are. None without
     * the setting.
     */
    private List<String> nullsFilled() {
        List<SourceColumn> filled = filledColumns();
        if (filled.isEmpty()) {
            return List.of();
        }
        String r = "r";
        StringBuilder counts = new StringBuilder("SELECT r.*, COALESCE(SUM(CASE WHEN " + internalOf(r, KIND)
                + " = 'D' THEN 1 ELSE 0 END) OVER (" + partition(r) + " ROWS BETWEEN UNBOUNDED PRECEDING AND 1 "
                + "PRECEDING), 0) AS " + working("life"));
        for (int j = 0; j < filled.size(); j++) {
            counts.append(", COUNT(CASE WHEN ").append(internalOf(r, KIND)).append(" IN ('U', 'I') THEN ")
                    .append(col(r, filled.get(j).name())).append(" END) OVER (").append(partition(r))
                    .append(" ROWS UNBOUNDED PRECEDING) AS ").append(working("nn" + j));
        }
        counts.append(" FROM ").append(cte(0)).append(" r");
        String f = "f";
        String values = data(col -> {
            int j = filled.indexOf(col);
            if (j < 0) {
                return col(f, col.name());
            }
            return "CASE WHEN " + internalOf(f, KIND) + " = 'U' AND " + col(f, col.name()) + " IS NULL THEN FIRST_VALUE("
                    + col(f, col.name()) + ") OVER (PARTITION BY " + keys(f) + ", " + workingOf(f, "life") + ", "
                    + workingOf(f, "nn" + j) + " ORDER BY " + internalOf(f, IDX) + ") ELSE " + col(f, col.name()) + " END";
        });
        String rest = String.join(", ", List.of(IDX, KIND, ISTATE, IVF, IUPD, IEND).stream()
                .map(x -> internalOf(f, x) + " AS " + internal(x)).toList()) + ", " + workingOf(f, "nd_after") + " AS " + working("nd_after");
        return List.of(counts.toString(), "SELECT " + values + ", " + rest + " FROM " + cte(1) + " f");
    }

    /**
     * The columns whose NULLs {@code ignore_null_updates} fills: every column but the key, updated_at, sequence_by,
     * columns the source no longer has and columns introduced after the run's batches. None without the setting.
     */
    private List<SourceColumn> filledColumns() {
        if (!m.settings().ignoreNullUpdates()) {
            return List.of();
        }
        return m.historyDataSourceColumns().stream().filter(col -> !m.keys().contains(col.name())
                && !col.name().equals(m.updatedAt()) && !m.isSequenceColumn(col.name())
                && m.sourceColumn(col.name()) != null && !run.untracked().contains(col.name())).toList();
    }

    /**
     * {@code untracked_columns: overwrite}: the columns a row that changes no tracked column updates in place (see
     * {@link ResolvedModel#overwritten}), but those introduced after the run's batches. None without the setting.
     */
    private List<String> overwrittenColumns() {
        return m.overwritten().stream().filter(col -> !run.untracked().contains(col)).toList();
    }

    // ---------------------------------------------------------------- derive

    /**
     * The derivation, one statement: the events ({@link #events}), each classified, the deletions by absence added,
     * and the events that change the key's state ordered: the time each takes effect (a running maximum), how many
     * such events there are up to it (the next one is the first of the count after), and the version each row sees as
     * current; into the work table.
     *
     * <p>One pass per key in position order, with one sort more by the event's {@link #group} (a small one: the rows
     * are already in key order). A deletion by absence follows the event before it (its position lies between that
     * event's and the next one's), so it is made from that event's row (a join with two numbers, not a second
     * reading) and ordered by the event's group and position then 1. No window frame starts after the current row:
     * such a frame makes a database aggregate again for every row, quadratic in a key's events.
     */
    private String derive(boolean beforeLate) {
        List<String> levels = new ArrayList<>(events(beforeLate));
        boolean timestamp = m.settings().strategy() == Strategy.TIMESTAMP;
        List<String> compared = comparedWithVersion();
        String g = group();
        // the group's level: the deletion by absence after each event, and what an upsert is compared with
        // the alias the subquery of classified refers to
        String x = SqlSteps.outer("x");
        String adel = "CASE WHEN " + workingOf(x, "la") + " AND " + workingOf(x, "nd_after") + " IS NOT NULL AND ("
                + workingOf(x, "next_idx") + " IS NULL OR " + workingOf(x, "nd_after") + " < " + workingOf(x, "next_idx") + ") THEN "
                + workingOf(x, "nd_after") + " END";
        String inGroup = "PARTITION BY " + keys(x) + ", " + x + "." + g + " ORDER BY " + internalOf(x, IDX);
        // Every level below computes a window function: a database may merge a level without one into the level
        // above it, and then compute each of its expressions again wherever that level refers to it.
        StringBuilder grouped = new StringBuilder("SELECT " + x + ".*, " + adel + " AS " + working("adel"));
        if (timestamp) {
            // an upsert changes the version when its updated_at is greater than the greatest of the streak's upserts
            // and state before it
            String cupd = "MAX(CASE " + internalOf(x, KIND) + " WHEN 'U' THEN " + col(x, m.updatedAt()) + " WHEN 'I' THEN "
                    + internalOf(x, IUPD) + " END) OVER (" + inGroup + " ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)";
            grouped.append(", ").append(classified(x, "(" + col(x, m.updatedAt()) + " > " + cupd + ")", adel))
                    .append(" FROM ").append(cte(levels.size() - 1)).append(" ").append(x);
            levels.add(grouped.toString());
        } else {
            // each event carries the compared columns of the last U or I up to it (the first of its group), and an
            // upsert's version is that of the event before it
            for (int j = 0; j < compared.size(); j++) {
                grouped.append(", FIRST_VALUE(").append(col(x, compared.get(j))).append(") OVER (").append(inGroup)
                        .append(") AS ").append(working("pv" + j));
            }
            levels.add(grouped.append(" FROM ").append(cte(levels.size() - 1)).append(" ").append(x).toString());
            String inOrder = "PARTITION BY " + keys(x) + " ORDER BY " + x + "." + g + ", " + internalOf(x, IDX);
            List<String> parts = new ArrayList<>();
            for (int j = 0; j < compared.size(); j++) {
                parts.add(valuesDiffer(compared.get(j), "LAG(" + workingOf(x, "pv" + j) + ") OVER (" + inOrder + ")",
                        col(x, compared.get(j)), internalOf(x, IDX)));
            }
            String changed = parts.isEmpty() ? "FALSE" : "(" + String.join(" OR ", parts) + ")";
            levels.add("SELECT " + x + ".*, " + classified(x, changed, workingOf(x, "adel")) + " FROM "
                    + cte(levels.size() - 1) + " " + x);
        }
        // the state changes in order: an event's deletion by absence, if any, right after it
        String s = "s";
        String order = "PARTITION BY " + keys(s) + " ORDER BY " + s + "." + g + ", " + internalOf(s, IDX);
        String sc = workingOf(s, "act") + " IN " + STATE_CHANGES;
        String deleting = workingOf(s, "act") + " IN ('delete', 'idrec')";
        String upTo = " ROWS UNBOUNDED PRECEDING";
        String before = " ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING";
        // the times of the state changes up to the event (tsc) and before it (tpc), and of the absences before it
        levels.add("SELECT s.*, MAX(CASE WHEN " + sc + " THEN " + workingOf(s, "t") + " END) OVER (" + order + upTo + ") AS "
                + working("tsc") + ", MAX(CASE WHEN " + sc + " THEN " + workingOf(s, "t") + " END) OVER (" + order + before + ") AS "
                + working("tpc") + ", MAX(" + workingOf(s, "ta") + ") OVER (" + order + before + ") AS " + working("tab")
                + ", COUNT(CASE WHEN "
                + sc + " THEN 1 END) OVER (" + order + upTo + ") + COUNT(" + workingOf(s, "adel") + ") OVER (" + order
                + before + ") AS " + working("scc") + ", MAX(CASE WHEN " + workingOf(s, "adel") + " IS NOT NULL THEN "
                + workingOf(s, "adel") + " * 2 + 1 WHEN " + sc + " THEN " + internalOf(s, IDX) + " * 2 + (CASE WHEN " + deleting
                + " THEN 1 ELSE 0 END) END) OVER (" + order + before + ") AS " + working("pdel") + ", MAX(CASE WHEN "
                + workingOf(s, "act") + " IN ('open', 'change', 'ilive') THEN " + internalOf(s, IDX) + " END) OVER (" + order + upTo
                + ") AS " + working("oidx") + " FROM " + cte(levels.size() - 1) + " s");
        String y = "y";
        String action = "CASE WHEN " + workingOf(y, "act") + " = 'open' THEN (CASE WHEN " + (m.deletionRecords()
                ? "MOD(" + workingOf(y, "pdel") + ", 2) = 1" : "1 = 0") + " THEN 'return' ELSE 'insert' END) ELSE "
                + workingOf(y, "act") + " END";
        String reg = "CASE WHEN " + workingOf(y, "act") + " IN ('change', 'delete') AND " + workingOf(y, "t") + " < "
                + greatest(workingOf(y, "tpc"), workingOf(y, "tab")) + " THEN TRUE ELSE FALSE END";
        // Which noops the work table keeps: under untracked_columns: overwrite all (a noop may overwrite its version);
        // under full batches those that differ from the row that opened their version in a compared column (they
        // are archived: the history cannot reproduce them), compared with the opener's values carried through the
        // opener's rows (one sort more, by the opener: the rows are in key order); else none (the archive takes them
        // from the stage). The rows set aside (present, regr) are no key's state change and are left out too.
        String keptNoop;
        List<String> sameAs = full && overwrittenColumns().isEmpty() ? comparedWithOpener() : List.of();
        if (!overwrittenColumns().isEmpty()) {
            keptNoop = "TRUE";
        } else if (!full) {
            keptNoop = "FALSE";
        } else if (sameAs.isEmpty()) {
            keptNoop = "FALSE";
        } else {
            String o = "o";
            StringBuilder openers = new StringBuilder("SELECT o.*");
            for (int j = 0; j < sameAs.size(); j++) {
                openers.append(", FIRST_VALUE(").append(col(o, sameAs.get(j))).append(") OVER (PARTITION BY ")
                        .append(keys(o)).append(", ").append(workingOf(o, "oidx")).append(" ORDER BY ").append(o).append(".")
                        .append(g).append(", ").append(internalOf(o, IDX)).append(") AS ").append(working("ov" + j));
            }
            levels.add(openers.append(" FROM ").append(cte(levels.size() - 1)).append(" o").toString());
            List<String> parts = new ArrayList<>();
            for (int j = 0; j < sameAs.size(); j++) {
                parts.add(valuesDiffer(sameAs.get(j), workingOf(y, "ov" + j), col(y, sameAs.get(j)), internalOf(y, IDX)));
            }
            keptNoop = "(" + String.join(" OR ", parts) + ")";
        }
        levels.add("SELECT " + versionData(y) + ", " + internalOf(y, IDX) + ", " + action + " AS " + working("action") + ", "
                + workingOf(y, "t") + ", " + greatest(workingOf(y, "tsc"), workingOf(y, "tab")) + " AS " + working("tt") + ", " + reg + " AS "
                + working("reg") + ", " + workingOf(y, "scc") + ", "
                + workingOf(y, "oidx") + ", " + workingOf(y, "adel") + ", " + workingOf(y, "ta") + ", " + workingOf(y, "upto") + ", CASE WHEN "
                + workingOf(y, "act")
                + " IN ('present', 'regr') OR (" + workingOf(y, "act") + " = 'noop' AND NOT " + keptNoop
                + ") THEN FALSE ELSE TRUE END AS " + working("kept") + " FROM " + cte(levels.size() - 1) + " y");
        // each event (n = 0) and, where the key is deleted by absence after it, that deletion (n = 1)
        String v = "v";
        String absence = workingOf("n", "n") + " = 1";
        List<String> out = new ArrayList<>();
        for (String col : m.historyDataColumns()) {
            out.add(m.keys().contains(col) ? col(v, col) : "CASE WHEN " + absence + " THEN NULL ELSE " + col(v, col)
                    + " END");
        }
        out.add("CASE WHEN " + absence + " THEN " + workingOf(v, "adel") + " ELSE " + internalOf(v, IDX) + " END");
        out.add("CASE WHEN " + absence + " THEN 'absent' ELSE " + workingOf(v, "action") + " END");
        out.add("CASE WHEN " + absence + " THEN " + workingOf(v, "ta") + " ELSE " + workingOf(v, "t") + " END");
        out.add("CASE WHEN " + absence + " THEN " + greatest(workingOf(v, "tt"), workingOf(v, "ta")) + " ELSE " + workingOf(v, "tt")
                + " END");
        out.add("CASE WHEN " + absence + " THEN FALSE ELSE " + workingOf(v, "reg") + " END");
        out.add("CAST(" + workingOf(v, "scc") + " + " + workingOf("n", "n") + " AS " + p.typeName(TableSpec.ColumnType.integer())
                + ")");
        out.add(workingOf(v, "oidx"));
        out.add(workingOf(v, "upto"));
        return "INSERT INTO " + table(m.work()) + " (" + dataNames() + ", " + internal(IDX) + ", " + internal(ACTION) + ", " + internal(T) + ", "
                + internal(TT) + ", " + internal(REG) + ", " + internal(SCC) + ", " + internal(OIDX) + ", " + internal(UPTO) + ") "
                + with(levels.toArray(String[]::new))
                + " SELECT " + String.join(", ", out) + " FROM " + cte(levels.size() - 1) + " v JOIN (SELECT 0 AS "
                + working("n") + " UNION ALL SELECT 1 AS " + working("n") + ") n ON (" + workingOf("n", "n") + " = 0 AND "
                + workingOf(v, "kept") + ") OR (" + absence + " AND " + workingOf(v, "adel") + " IS NOT NULL)";
    }

    /**
     * The columns a noop is compared in with the row that opened its version, to decide whether the archive keeps it
     * (under full batches): every source column but the key and the sequence, as compared at the noop's position.
     */
    private List<String> comparedWithOpener() {
        return m.sourceNames().stream().filter(col -> !m.isSequenceColumn(col) && !m.keys().contains(col)
                && comparedAt(col, "1") != null).toList();
    }

    /**
     * The columns an event of level {@code e} is classified by ({@link #derive}): what it does ({@code act}: each U,
     * given {@code changed}, opens, changes or leaves the key's version as it is), the time it takes effect at
     * ({@code t}), and that of the deletion by absence after it ({@code ta}, given its position {@code adel}; few events
     * have one: a subquery for each, an aggregate so that Spark knows it has one row).
     */
    private String classified(String e, String changed, String adel) {
        String lb = workingOf(e, "lb");
        String cls = "CASE WHEN " + internalOf(e, KIND) + " = 'I' THEN " + p.concat(List.of("'i'", internalOf(e, ISTATE)))
                + " WHEN " + internalOf(e, KIND) + " = 'U' AND NOT " + lb + " THEN 'open' WHEN " + internalOf(e, KIND)
                + " = 'U' AND " + changed + " THEN 'change' WHEN " + internalOf(e, KIND)
                + " = 'U' THEN 'noop' WHEN " + internalOf(e, KIND) + " = 'D' AND " + lb + " THEN 'delete' WHEN "
                + internalOf(e, KIND) + " = 'D' THEN 'delnoop' WHEN " + internalOf(e, KIND) + " = 'G' THEN 'regr' ELSE 'present' END";
        String time = "CASE WHEN " + internalOf(e, KIND) + " = 'I' THEN (CASE WHEN " + internalOf(e, ISTATE) + " = 'closed' THEN "
                + internalOf(e, IEND) + " ELSE " + internalOf(e, IVF) + " END) ELSE " + col(e, m.updatedAt()) + " END";
        String absentAt = "CASE WHEN " + adel + " IS NOT NULL THEN (SELECT MAX(" + internalOf("ba", DELTIME) + ") FROM "
                + table(m.batches()) + " ba WHERE " + internalOf("ba", IDX) + " = " + adel + ") END";
        return cls + " AS " + working("act") + ", " + time + " AS " + working("t") + ", " + absentAt + " AS " + working("ta");
    }

    /** The greater of two expressions of one type, either NULL (GREATEST treats NULL differently per database). */
    private static String greatest(String left, String right) {
        return "CASE WHEN " + right + " IS NULL OR " + left + " >= " + right + " THEN " + left + " ELSE " + right
                + " END";
    }

    /**
     * The data columns of {@link #derive}'s rows. Under {@code untracked_columns: overwrite} the row that opens a
     * version (or the key's live version before the run) carries, in each overwritten column, the value of the last
     * row of that version: itself or a later row that changed no tracked column (a noop) before the next event that
     * changes the key's state. So a version is inserted, closed or copied into a deletion record with the values it
     * has at its end.
     */
    private String versionData(String y) {
        List<String> over = overwrittenColumns();
        if (over.isEmpty()) {
            return p.list(m.historyDataColumns(), y);
        }
        String opener = workingOf(y, "act") + " IN ('open', 'change', 'ilive')";
        String inVersion = "CASE WHEN " + workingOf(y, "act") + " IN ('open', 'change', 'ilive', 'noop') THEN 1 ELSE 0 END";
        return m.historyDataColumns().stream().map(col -> !over.contains(col) ? col(y, col)
                : "CASE WHEN " + opener + " THEN FIRST_VALUE(" + col(y, col) + ") OVER (PARTITION BY " + keys(y) + ", "
                        + workingOf(y, "oidx") + ", " + inVersion + " ORDER BY " + internalOf(y, IDX) + " DESC) ELSE " + col(y, col)
                        + " END AS " + quoted(col)).collect(Collectors.joining(", "));
    }

    // ---------------------------------------------------------------- counts

    private String counts() {
        String s = "s";
        String w = "w";
        String seqJoin = " JOIN " + table(m.batches()) + " b ON " + col("b", m.sequenceBy()) + " = " + col(s, m.sequenceBy());
        String dt = nullUpd();
        return "SELECT " + internalOf("b", IDX) + ", " + text(ApplyStatements.SOURCE_ROWS) + ", COUNT(*), " + dt + " FROM "
                + table(m.stage()) + " s" + seqJoin + " GROUP BY " + internalOf("b", IDX)
                + " UNION ALL SELECT " + internalOf("b", IDX) + ", " + internalOf(s, REJECT) + ", COUNT(*), " + dt + " FROM "
                + table(m.stage()) + " s" + seqJoin + " WHERE " + internalOf(s, REJECT) + " IS NOT NULL GROUP BY " + internalOf("b", IDX)
                + ", " + internalOf(s, REJECT)
                + " UNION ALL SELECT " + internalOf(w, IDX) + ", " + internalOf(w, ACTION) + ", COUNT(*), " + dt + " FROM "
                + table(m.work()) + " w WHERE " + internalOf(w, ACTION) + " IN ('insert', 'return', 'change', 'delete', 'absent', "
                + "'noop', 'delnoop') GROUP BY " + internalOf(w, IDX) + ", " + internalOf(w, ACTION)
                + " UNION ALL SELECT 0, " + text(ApplyStatements.REGRESSIONS) + ", COUNT(*), " + dt + " FROM "
                + table(m.work()) + " w WHERE " + internalOf(w, REG)
                + " UNION ALL SELECT " + internalOf("b", IDX) + ", " + text(ApplyStatements.DELETION_TIME) + ", 0, "
                + internalOf("b", DELTIME) + " FROM " + table(m.batches()) + " b";
    }

    /** Sets aside, in the stage, each key's earliest regression (everything before it was derived exactly). */
    private String markRegressions() {
        String w = "w";
        String first = "(SELECT " + keys(w) + ", MIN(" + internalOf(w, IDX) + ") AS " + working("ix") + " FROM " + table(m.work())
                + " w WHERE "
                + internalOf(w, REG) + " GROUP BY " + keys(w) + ")";
        return "MERGE INTO " + table(m.stage()) + " s USING (SELECT " + keys("r") + ", " + col("b", m.sequenceBy()) + " FROM "
                + first + " r JOIN " + table(m.batches()) + " b ON " + internalOf("b", IDX) + " = " + workingOf("r", "ix") + ") g ON "
                + p.keyJoin(m, "s", "g")
                + " AND " + col("s", m.sequenceBy()) + " = " + col("g", m.sequenceBy()) + " AND " + internalOf("s", REJECT)
                + " IS NULL WHEN MATCHED THEN UPDATE SET " + internal(REJECT) + " = "
                + RejectReason.UPDATED_AT_REGRESSION.literal();
    }

    // ---------------------------------------------------------------- writes

    /**
     * Closes the versions current before the run that the run closes (at most one per key). Under
     * {@code untracked_columns: overwrite} it also writes, in place, the overwritten columns of the live version
     * current before the run, closed or not, where the run's rows changed them.
     */
    private String closeCurrent() {
        if (!overwrittenColumns().isEmpty()) {
            return closeAndOverwriteCurrent();
        }
        String source = "SELECT " + closing("w", "nx") + closedVersions("w", "nx");
        return "MERGE INTO " + table(m.target()) + " t USING (" + source + ") c ON " + p.keyJoin(m, "t", "c") + " AND "
                + steps.isOpen(m, col("t", n.validTo())) + " WHEN MATCHED THEN UPDATE SET " + quoted(n.validTo()) + " = "
                + workingOf("c", "vt") + ", "
                + quoted(n.changeType()) + " = " + workingOf("c", "ct") + ", " + quoted(n.changedAttributes()) + " = " + workingOf("c", "ca")
                + ", " + quoted(n.closedSeq()) + " = " + workingOf("c", "cs");
    }

    /** {@link #closeCurrent} under {@code untracked_columns: overwrite}: a version may be overwritten, not closed. */
    private String closeAndOverwriteCurrent() {
        List<String> over = overwrittenColumns();
        String w = "w";
        String nx = "nx";
        String source = "SELECT " + closing(w, nx) + ", " + p.list(over, w) + " FROM " + table(m.work()) + " w LEFT JOIN "
                + table(m.work()) + " nx ON "
                + p.keyJoin(m, nx, w) + " AND " + nextChange(w, nx) + " LEFT JOIN " + table(m.batches())
                + " b ON " + internalOf("b", IDX) + " = " + internalOf(nx, IDX) + " WHERE " + internalOf(w, ACTION) + " = 'ilive' OR ("
                + internalOf(w, ACTION) + " = 'idrec' AND " + internalOf(nx, IDX) + " IS NOT NULL)";
        String closes = workingOf("c", "cs") + " IS NOT NULL";
        List<String> changed = new ArrayList<>(List.of(closes));
        over.forEach(col -> changed.add(p.isDistinct(col("t", col), col("c", col))));
        List<String> set = new ArrayList<>();
        set.add(quoted(n.validTo()) + " = CASE WHEN " + closes + " THEN " + workingOf("c", "vt") + " ELSE " + col("t", n.validTo())
                + " END");
        set.add(quoted(n.changeType()) + " = CASE WHEN " + closes + " THEN " + workingOf("c", "ct") + " ELSE "
                + col("t", n.changeType()) + " END");
        set.add(quoted(n.changedAttributes()) + " = CASE WHEN " + closes + " THEN " + workingOf("c", "ca") + " ELSE "
                + col("t", n.changedAttributes()) + " END");
        set.add(quoted(n.closedSeq()) + " = CASE WHEN " + closes + " THEN " + workingOf("c", "cs") + " ELSE "
                + col("t", n.closedSeq()) + " END");
        over.forEach(col -> set.add(quoted(col) + " = " + col("c", col)));
        return "MERGE INTO " + table(m.target()) + " t USING (" + source + ") c ON " + p.keyJoin(m, "t", "c") + " AND "
                + steps.isOpen(m, col("t", n.validTo())) + " AND (" + String.join(" OR ", changed)
                + ") WHEN MATCHED THEN "
                + "UPDATE SET " + String.join(", ", set);
    }

    /**
     * The columns of {@link #closeCurrent}'s source: the key of the version current before the run ({@code w}), and
     * what the event that closes it ({@code nx}, in batch {@code b}) sets: valid_to, change type, changed_attributes,
     * closing sequence.
     */
    private String closing(String w, String nx) {
        return keys(w) + ", " + internalOf(nx, TT) + " AS " + working("vt") + ", " + closingType(nx) + " AS "
                + working("ct") + ", " + closingAttributes(w, nx) + " AS " + working("ca") + ", "
                + col("b", m.sequenceBy()) + " AS " + working("cs");
    }

    /** The change type a closing by event {@code nx} sets on its version. */
    private String closingType(String nx) {
        return "CASE WHEN " + internalOf(nx, ACTION) + " IN ('change', 'return') THEN 'update' ELSE 'delete' END";
    }

    /** The changed_attributes a closing of version {@code w} by event {@code nx} sets. */
    private String closingAttributes(String w, String nx) {
        return "CASE WHEN " + internalOf(nx, ACTION) + " IN ('change', 'return') THEN " + changedAttributes(w, nx,
                internalOf(nx, IDX)) + " END";
    }

    /**
     * {@code FROM} and {@code WHERE} of the versions current before the run that it closes ({@code w}), each with the
     * event that closes it ({@code nx}, in batch {@code b}).
     */
    private String closedVersions(String w, String nx) {
        return " FROM " + table(m.work()) + " " + w + " JOIN " + table(m.work()) + " " + nx + " ON "
                + p.keyJoin(m, nx, w) + " AND " + nextChange(w, nx) + " JOIN " + table(m.batches()) + " b ON "
                + internalOf("b", IDX) + " = " + internalOf(nx, IDX) + " WHERE " + internalOf(w, ACTION)
                + " IN ('ilive', 'idrec')";
    }

    /**
     * Row {@code nx} of the work table is the first after row {@code w} of the same key that changes the key's state:
     * the state change that makes their count one more.
     */
    private String nextChange(String w, String nx) {
        return internalOf(nx, SCC) + " = " + internalOf(w, SCC) + " + 1 AND " + internalOf(nx, ACTION) + " IN " + STATE_CHANGE_ACTIONS;
    }

    /** The history's columns of a version, as {@link #insertVersions} and {@link #writeVersions} write them. */
    private List<String> versionColumns() {
        List<String> cols = new ArrayList<>(m.historyDataColumns());
        cols.add(n.scdId());
        cols.add(n.updatedAt());
        cols.add(n.validFrom());
        cols.add(n.validTo());
        cols.add(n.changeType());
        cols.add(n.changedAttributes());
        if (m.deletionRecords()) {
            cols.add(n.isDeleted());
        }
        cols.add(n.openedSeq());
        cols.add(n.closedSeq());
        return cols;
    }

    /** {@code SELECT} of {@code values}, each named as its column of {@link #versionColumns} when {@code named}. */
    private String selectVersion(List<String> values, boolean named, String kind) {
        List<String> cols = versionColumns();
        List<String> out = new ArrayList<>();
        for (int i = 0; i < values.size(); i++) {
            out.add(named ? values.get(i) + " AS " + quoted(cols.get(i)) : values.get(i));
        }
        if (kind != null) {
            out.add(text(kind) + " AS " + working("kind"));
        }
        return "SELECT " + String.join(", ", out);
    }

    /** Every version the run opens, and every deletion record, each already closed where the run closes it. */
    private String insertVersions() {
        return "INSERT INTO " + table(m.target()) + " (" + p.list(versionColumns(), null) + ") " + openedVersions(null);
    }

    /**
     * The rows of {@link #insertVersions}, one per version it opens, as {@link #versionColumns}; with {@code kind},
     * named so and with {@code kind} as a last column.
     */
    private String openedVersions(String kind) {
        boolean named = kind != null;
        String w = "w";
        String nx = "nx";
        String closing = " LEFT JOIN " + table(m.work()) + " nx ON " + p.keyJoin(m, nx, w) + " AND " + nextChange(w, nx)
                + " JOIN " + table(m.batches()) + " bo ON " + internalOf("bo", IDX) + " = " + internalOf(w, IDX)
                + " LEFT JOIN " + table(m.batches()) + " bc ON " + internalOf("bc", IDX) + " = " + internalOf(nx, IDX);
        List<String> opened = new ArrayList<>(m.historyDataColumns().stream().map(col -> col(w, col)).toList());
        opened.add(steps.scdId(m, w, col(w, m.updatedAt()), internalOf("bo", SEQTEXT), null));
        opened.add(col(w, m.updatedAt()));
        opened.add(internalOf(w, TT));
        opened.add(steps.orOpen(m, internalOf(nx, TT)));
        opened.add("CASE WHEN " + internalOf(nx, ACTION) + " IS NULL THEN 'insert' WHEN " + internalOf(nx, ACTION)
                + " = 'change' THEN 'update' ELSE 'delete' END");
        opened.add("CASE WHEN " + internalOf(nx, ACTION) + " = 'change' THEN " + changedAttributes(w, nx, internalOf(nx, IDX))
                + " END");
        if (m.deletionRecords()) {
            opened.add("FALSE");
        }
        opened.add(col("bo", m.sequenceBy()));
        opened.add(col("bc", m.sequenceBy()));
        String sql = selectVersion(opened, named, kind)
                + " FROM " + table(m.work()) + " w" + closing + " WHERE " + internalOf(w, ACTION) + " IN ('insert', 'return', "
                + "'change')";
        if (m.deletionRecords()) {
            String o = "o";
            List<String> record = new ArrayList<>(m.historyDataColumns().stream().map(col -> col(o, col)).toList());
            record.add(steps.scdId(m, w, internalOf(w, TT), internalOf("bo", SEQTEXT), "deleted"));
            record.add(internalOf(w, TT));
            record.add(internalOf(w, TT));
            record.add(steps.orOpen(m, internalOf(nx, TT)));
            record.add("CASE WHEN " + internalOf(nx, ACTION) + " IS NULL THEN 'insert' ELSE 'update' END");
            record.add("CASE WHEN " + internalOf(nx, ACTION) + " IS NOT NULL THEN " + changedAttributes(o, nx, internalOf(nx, IDX))
                    + " END");
            record.add("TRUE");
            record.add(col("bo", m.sequenceBy()));
            record.add(col("bc", m.sequenceBy()));
            sql += " UNION ALL " + selectVersion(record, named, kind) + " FROM " + table(m.work())
                    + " w JOIN " + table(m.work())
                    + " o ON " + p.keyJoin(m, o, w) + " AND " + internalOf(o, IDX) + " = " + internalOf(w, OIDX) + closing + " WHERE "
                    + internalOf(w, ACTION) + " IN ('delete', 'absent')";
        }
        return sql;
    }

    /**
     * {@link #closeCurrent} and {@link #insertVersions} as one MERGE (one statement, one commit where each statement
     * commits on its own): its source is the versions the run closes, as rows of {@link #versionColumns} of kind
     * {@code c} (only the columns a closing sets are read from them), and the versions it opens, of kind {@code i};
     * only the first kind matches an open version, only the second is inserted. Null under {@code untracked_columns:
     * overwrite}, whose closing may also overwrite a version in place ({@link #closeAndOverwriteCurrent}).
     */
    private String writeVersions() {
        if (!overwrittenColumns().isEmpty()) {
            return null;
        }
        String w = "w";
        String nx = "nx";
        // the version current before the run (w) and the event that closes it (nx, in batch b): the columns a closing
        // sets as closeCurrent sets them, the others of the same types (not written)
        List<String> closed = new ArrayList<>(m.historyDataColumns().stream().map(col -> col(w, col)).toList());
        closed.add(steps.scdId(m, w, col(w, m.updatedAt()), internalOf("b", SEQTEXT), null));
        closed.add(col(w, m.updatedAt()));
        closed.add(internalOf(w, TT));
        closed.add(internalOf(nx, TT));
        closed.add(closingType(nx));
        closed.add(closingAttributes(w, nx));
        if (m.deletionRecords()) {
            closed.add("FALSE");
        }
        closed.add(col("b", m.sequenceBy()));
        closed.add(col("b", m.sequenceBy()));
        String closing = selectVersion(closed, true, "c") + closedVersions(w, nx);
        List<String> cols = versionColumns();
        return "MERGE INTO " + table(m.target()) + " t USING (" + closing + " UNION ALL " + openedVersions("i")
                + ") c ON " + workingOf("c", "kind") + " = 'c' AND " + p.keyJoin(m, "t", "c") + " AND "
                + steps.isOpen(m, col("t", n.validTo())) + " WHEN MATCHED THEN UPDATE SET "
                + Stream.of(n.validTo(), n.changeType(), n.changedAttributes(), n.closedSeq())
                        .map(c -> quoted(c) + " = " + col("c", c)).collect(Collectors.joining(", "))
                + " WHEN NOT MATCHED AND " + workingOf("c", "kind") + " = 'i' THEN INSERT (" + p.list(cols, null)
                + ") VALUES (" + cols.stream().map(c -> col("c", c)).collect(Collectors.joining(", ")) + ")";
    }

    /** Rows the stage or a regression set aside, into the error log (exact copies are applied once, not logged). */
    private String logRejected() {
        MetadataSchema.Errors e = m.metadata().errors();
        String s = "s";
        List<String> exprs = m.recordNames().stream().map(col -> col(s, col)).toList();
        return "INSERT INTO " + table(e.spec().name()) + " (" + p.list(List.of(e.model(), e.runId(), e.sequence(),
                e.reason(), e.record(), e.loggedAt()), null) + ") SELECT " + slot(SqlSteps.MODEL)
                + ", " + slot(SqlSteps.RUN_ID) + ", " + internalOf("b", SEQTEXT) + ", "
                + internalOf(s, REJECT) + ", " + p.jsonObject(m.recordNames(), exprs) + ", "
                + slot(SqlSteps.LOGGED_AT) + " FROM " + table(m.stage()) + " s JOIN "
                + table(m.batches()) + " b ON " + col("b", m.sequenceBy()) + " = " + col(s, m.sequenceBy()) + " WHERE "
                + internalOf(s, REJECT) + " IS NOT NULL AND " + internalOf(s, REJECT) + " <> " + RejectReason.DUPLICATE_COPY.literal();
    }

    /**
     * Rows the history alone cannot reproduce, into the archive: rows set aside (a regression without its reason,
     * so that a replay judges it again), explicit deletes, and rows that changed nothing (under full batches only
     * those that differ from their version in a column that is not compared; without, also the rows that are no
     * key's event: those of the keys the run leaves alone), and under {@code ignore_null_updates} the changes whose
     * NULLs stood for a value.
     */
    private String archive() {
        String s = "s";
        String sources = p.list(m.sourceNames(), null);
        String into = "INSERT INTO " + table(m.archive()) + " (" + sources + ", " + internal(DEL) + ", " + internal(REJECT) + ") ";
        if (m.overwritesUntracked()) {
            // untracked_columns: overwrite: every row the stage holds but the extra exact copies (a version's values
            // are those of its last row, which a roll back restores from here)
            return into + stagedRows(internalOf(s, REJECT) + " IS NULL OR " + internalOf(s, REJECT) + " <> "
                    + RejectReason.DUPLICATE_COPY.literal());
        }
        String w = "w";
        String setAside = stagedRows(internalOf(s, REJECT) + " IS NOT NULL AND " + internalOf(s, REJECT) + " <> "
                + RejectReason.DUPLICATE_COPY.literal());
        String deletes = " UNION ALL SELECT " + p.list(m.sourceNames(), w) + ", TRUE, " + nullText(32) + " FROM "
                + table(m.work()) + " w WHERE " + internalOf(w, ACTION) + " IN ('delete', 'delnoop')";
        if (full) {
            // the noops the derivation kept, those that differ from the row that opened their version, each with the
            // rows that repeat it in the batches up to its upto (left out of the derivation), as the stage holds them
            return into + setAside + deletes + " UNION ALL SELECT " + p.list(m.sourceNames(), s) + ", FALSE, "
                    + nullText(32) + " FROM " + table(m.work()) + " w JOIN " + table(m.stage()) + " s ON "
                    + p.keyJoin(m, s, w) + " AND " + internalOf(s, REJECT) + " IS NULL JOIN " + table(m.batches()) + " b ON "
                    + col("b", m.sequenceBy()) + " = " + col(s, m.sequenceBy()) + " AND " + internalOf("b", IDX) + " >= "
                    + internalOf(w, IDX) + " AND " + internalOf("b", IDX) + " < " + internalOf(w, UPTO) + " WHERE " + internalOf(w, ACTION)
                    + " = 'noop'";
        }
        // every accepted row that opened or changed no version, as it came: the noops, and the rows of the keys the
        // run leaves alone; under ignore_null_updates also a change whose NULLs were filled (the values they stood
        // for may change with a late batch before it, so a reproduction needs the row as it came)
        String so = SqlSteps.outer("s");
        String bo = SqlSteps.outer("b");
        List<String> filledNulls = filledColumns().stream().map(col -> col(so, col.name()) + " IS NULL AND "
                + col(w, col.name()) + " IS NOT NULL").toList();
        String versioned = internalOf(w, ACTION) + " IN ('insert', 'return', 'change')" + (filledNulls.isEmpty() ? ""
                : " AND NOT (" + internalOf(w, ACTION) + " = 'change' AND (" + String.join(" OR ", filledNulls) + "))");
        return into + setAside + deletes + " UNION ALL SELECT " + p.list(m.sourceNames(), so) + ", FALSE, "
                + nullText(32) + " FROM " + table(m.stage()) + " " + so + " JOIN " + table(m.batches()) + " " + bo
                + " ON " + col(bo, m.sequenceBy()) + " = " + col(so, m.sequenceBy()) + " WHERE " + internalOf(so, REJECT)
                + " IS NULL AND NOT " + internalOf(so, DEL) + " AND NOT EXISTS (SELECT 1 FROM " + table(m.work()) + " w WHERE "
                + p.keyJoin(m, w, so) + " AND " + internalOf(w, IDX) + " = " + internalOf(bo, IDX) + " AND " + versioned + ")";
    }

    /**
     * The run's staged rows ({@code s}) that satisfy {@code where}, as archive rows: their source columns, delete flag
     * and reason (a regression's dropped, so that a replay judges it again).
     */
    private String stagedRows(String where) {
        String s = "s";
        return "SELECT " + p.list(m.sourceNames(), s) + ", " + internalOf(s, DEL) + ", CASE WHEN " + internalOf(s, REJECT)
                + " = " + RejectReason.UPDATED_AT_REGRESSION.literal() + " THEN NULL ELSE " + internalOf(s, REJECT)
                + " END FROM " + table(m.stage())
                + " s JOIN " + table(m.batches()) + " b ON " + col("b", m.sequenceBy()) + " = " + col(s, m.sequenceBy())
                + " WHERE " + where;
    }
}
