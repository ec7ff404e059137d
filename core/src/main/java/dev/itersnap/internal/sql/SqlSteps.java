package dev.itersnap.internal.sql;

import dev.itersnap.core.AsOf;
import dev.itersnap.core.ColumnNames;
import dev.itersnap.core.TableName;
import dev.itersnap.spi.AbstractSqlDialect;
import dev.itersnap.spi.Capabilities;
import dev.itersnap.spi.Dialect;
import dev.itersnap.spi.MetadataSchema;
import dev.itersnap.internal.sql.ModelTables;
import dev.itersnap.spi.PlanHints;
import dev.itersnap.spi.Relation;
import dev.itersnap.internal.ResolvedModel;
import dev.itersnap.spi.SourceColumn;
import dev.itersnap.spi.StageScope;
import dev.itersnap.spi.Statement;
import dev.itersnap.spi.TableSpec;
import dev.itersnap.spi.ValueType;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import static dev.itersnap.spi.AbstractSqlDialect.slot;
import static dev.itersnap.spi.AbstractSqlDialect.statement;
import static dev.itersnap.internal.sql.ModelTables.DEL;
import static dev.itersnap.internal.sql.ModelTables.DELTIME;
import static dev.itersnap.internal.sql.ModelTables.REJECT;
import static dev.itersnap.internal.sql.ModelTables.REPRO;

/**
 * The SQL of every step of a run, written once for every database: the engine's statements, built from the
 * dialect's primitives ({@link AbstractSqlDialect}: names, types, functions without a standard spelling, DDL) and from
 * its {@link Capabilities}, shaped where its {@link PlanHints} say so. Where the batch rules are decided: the stage
 * ({@link #stageSource}: {@code null_sequence}, {@code null_key}, {@code duplicate_key}, {@code duplicate_copy},
 * {@code null_updated_at}), the derivation of versions ({@link SetBasedApply}: {@code updated_at_regression}, change
 * types, deletions), the rollback and the checks.
 *
 * <p>Names: {@code t} is the history table, {@code s} the stage, {@code w} the work table. Internal columns of the
 * working tables are {@link ModelTables}'. Values: the text is composed with named slots
 * ({@link AbstractSqlDialect#slot}) where values go; {@link AbstractSqlDialect#statement} binds each slot's value
 * wherever it occurs, so a statement may use a value several times and in any order.
 *
 * <p>A table that a correlated subquery refers to has an alias made by {@link #outer}.
 */
public final class SqlSteps {
    /**
     * The prefix of the aliases {@link #outer} makes: no source column may start with {@code itersnap_}
     * ({@code ModelResolver} refuses it) and no column of the engine's own tables starts with this.
     */
    private static final String OUTER = "itersnap_outer_";
    /** {@code SELECT * FROM name} with a plain, optionally qualified and quoted, table name and nothing else. */
    private static final Pattern PLAIN_TABLE_SOURCE = Pattern.compile(
            "\\s*select\\s+\\*\\s+from\\s+((?:\"(?:[^\"]|\"\")+\"|[A-Za-z_][A-Za-z0-9_$]*)"
                    + "(?:\\s*\\.\\s*(?:\"(?:[^\"]|\"\")+\"|[A-Za-z_][A-Za-z0-9_$]*)){0,2})\\s*",
            Pattern.CASE_INSENSITIVE);

    private final AbstractSqlDialect d;
    private final PlanHints hints;

    private SqlSteps(AbstractSqlDialect d) {
        this.d = d;
        this.hints = d.planHints() == null ? PlanHints.NONE : d.planHints();
    }

    /** The steps' SQL on {@code dialect}, written in its primitives ({@link Dialect#primitives}). */
    public static SqlSteps of(Dialect dialect) {
        return new SqlSteps(dialect.primitives());
    }

    /**
     * The alias of a table that a correlated subquery refers to ({@code h} gives {@code itersnap_outer_h}). Spark resolves
     * {@code h.id} inside a subquery against the subquery's own columns first: where the inner table has a column
     * {@code h} (a source column may have any name) the outer reference becomes a field of that column, and the
     * statement fails or, worse, compares the wrong value. No source column starts with {@code itersnap_}, and no
     * column of the engine's tables with {@code itersnap_outer_}.
     */
    public static String outer(String alias) {
        return OUTER + alias;
    }

    /** The dialect's primitives (DDL, names, functions). */
    public AbstractSqlDialect primitives() {
        return d;
    }

    // ---------------------------------------------------------------- the steps

    /**
     * Stage: copies the source rows from sequence {@code from} on (and those without a sequence when
     * {@code includeNullSequence}) into the stage, marking NULL sequences, NULL keys, duplicates, exact copies and
     * NULL updated_at.
     */
    public Statement stageSource(ResolvedModel m, Object from, boolean includeNullSequence) {
        return stageSource(m, from, includeNullSequence, StageScope.ALL);
    }

    /** Slot: the batch's sequence value. */
    static final String SEQ = "seq";

    /** Slot: the first sequence of a range (replay point, first batch). */
    static final String FROM = "from";
    /** Slot: the point a history was adopted through. */
    static final String ADOPTED = "adopted";

    /** Slot: the model name. */
    static final String MODEL = "model";

    /** Slot: the run id. */
    static final String RUN_ID = "runid";

    /** Slot: the time set-aside rows are logged at. */
    static final String LOGGED_AT = "loggedat";

    /** NOT a deletion record (always true without deletion records). */
    String notDeletionRecord(ResolvedModel m, String alias) {
        return m.deletionRecords() ? d.col(alias, m.meta().isDeleted()) + " = FALSE" : "1 = 1";
    }

    /**
     * dbt_scd_id from key, updated_at and the batch's sequence text ({@code seqTextExpr}), plus a marker. The parts
     * are joined with {@code |}; the parts of a composite key escape {@code \} and {@code |} first, so that {@code ('a|b', 'c')} and
     * {@code ('a', 'b|c')} get different ids (a single key cannot collide that way: the parts after it are times
     * and sequences, which hold no {@code |}; its ids stay those of earlier versions).
     */
    String scdId(ResolvedModel m, String alias, String updatedAtExpr, String seqTextExpr, String marker) {
        List<String> parts = new ArrayList<>();
        for (String k : m.keys()) {
            String text = "COALESCE(" + d.toText(d.col(alias, k)) + ", '')";
            if (m.keys().size() > 1) {
                text = "REPLACE(REPLACE(" + text + ", " + d.stringLiteral("\\") + ", " + d.stringLiteral("\\\\") + "), "
                        + d.stringLiteral("|") + ", " + d.stringLiteral("\\|") + ")";
            }
            parts.add(text);
            parts.add("'|'");
        }
        parts.add("COALESCE(" + d.toText(updatedAtExpr) + ", '')");
        parts.add("'|'");
        parts.add(seqTextExpr);
        if (marker != null) {
            parts.add(d.stringLiteral("|" + marker));
        }
        return d.md5Hex(d.concat(parts));
    }

    /**
     * {@code INSERT INTO target (columns) SELECT values <rest>} reporting its row count: as written where the
     * database reports INSERT counts, otherwise as {@code MERGE ... ON FALSE WHEN NOT MATCHED THEN INSERT}, where a
     * bare value or NULL is cast to its column's type (a MERGE source needs typed columns).
     */
    String insertCounted(ResolvedModel m, TableSpec target, List<String> columns, List<String> values,
                                   String rest) {
        if (d.capabilities().insertRowCounts()) {
            return "INSERT INTO " + d.table(target.name()) + " (" + d.list(columns, null) + ") SELECT "
                    + String.join(", ", values) + rest;
        }
        List<String> aliased = new ArrayList<>();
        List<String> refs = new ArrayList<>();
        for (int i = 0; i < values.size(); i++) {
            String v = values.get(i);
            TableSpec.Column c = target.column(columns.get(i));
            if (c != null && (v.equals("NULL") || AbstractSqlDialect.isSlot(v))) {
                v = "CAST(" + v + " AS " + d.typeName(c.type()) + ")";
            }
            aliased.add(v + " AS " + d.quote(m.id("itersnap_c" + i)));
            refs.add(d.col("d", m.id("itersnap_c" + i)));
        }
        return "MERGE INTO " + d.table(target.name()) + " t USING (SELECT " + String.join(", ", aliased) + rest
                + ") d ON FALSE WHEN NOT MATCHED THEN INSERT (" + d.list(columns, null) + ") VALUES ("
                + String.join(", ", refs) + ")";
    }

    /**
     * One statement describing the tables {@code tables} at once: their columns in order, the columns of each table after
     * the first preceded by a marker column {@code itersnap_table_<i>} ({@code i} from 1), so that a reader splits the
     * result where the markers stand. It returns the first table's first row, if it has one (the other tables' columns
     * NULL), so that it also says whether that table is empty.
     */
    public Statement describeTogether(List<TableName> tables) {
        // the first table's first row (LIMIT: every dialect's databases take it), the others' columns without rows
        StringBuilder select = new StringBuilder("SELECT t0.*");
        StringBuilder from = new StringBuilder("(SELECT * FROM " + d.table(tables.get(0)) + " LIMIT 1) t0");
        for (int i = 1; i < tables.size(); i++) {
            select.append(", 0 AS ").append(d.quote(describeMarker(i))).append(", t").append(i).append(".*");
            from.append(" LEFT JOIN (SELECT * FROM ").append(d.table(tables.get(i))).append(" WHERE 1 = 0) t")
                    .append(i).append(" ON 1 = 0");
        }
        return Statement.of("resolve", select + " FROM " + from);
    }

    /** The marker column before the columns of the {@code i}-th table of {@link #describeTogether} (from 1). */
    public static String describeMarker(int i) {
        return "itersnap_table_" + i;
    }

    /**
     * A query returning no row whose result describes the relation's columns ({@code ... WHERE 1 = 0}).
     */
    public Statement describe(Relation r) {
        String from = r.table() != null ? d.table(r.table()) : Relation.parenthesized(r.query());
        return Statement.of("resolve", "SELECT * FROM " + from + " s WHERE "
                + (r.predicate() != null ? "(" + r.predicate() + ") AND " : "") + "1 = 0");
    }

    /**
     * The source as a relation to select from: the table name itself when the source query is exactly
     * {@code SELECT * FROM <table>} (so that the database sees the table and its indexes: H2 does not use an index
     * through a derived table), otherwise the query as a derived table {@code (<source>)}. Both give the same rows and
     * columns; the caller adds the alias.
     */
    String sourceRelation(ResolvedModel m) {
        if (!m.carried().isEmpty()) {
            // columns the source no longer has, which a replay stages again: NULL here, filled from the history
            StringBuilder nulls = new StringBuilder();
            for (String c : m.carried()) {
                nulls.append(", CAST(NULL AS ").append(d.columnType(m.sourceColumn(c))).append(") AS ")
                        .append(d.quote(c));
            }
            return "(SELECT s.*" + nulls + " FROM " + sourceRelation(m.withoutCarried()) + " s)";
        }
        if (m.sequenceKey() != null) {
            // a sequence_by list: every row also carries its sequence key, the engine's one sequence column
            List<SourceColumn> parts = m.sequenceParts().stream().map(m::sourceColumn).toList();
            return "(SELECT s.*, " + sequenceKey(parts, "s") + " AS " + d.quote(m.sequenceBy()) + " FROM "
                    + Relation.parenthesized(m.settings().source()) + " s)";
        }
        Matcher plain = PLAIN_TABLE_SOURCE.matcher(m.settings().source());
        return plain.matches() ? plain.group(1) : Relation.parenthesized(m.settings().source());
    }

    /**
     * The {@link dev.itersnap.internal.SequenceKey} of a {@code sequence_by} list over the columns {@code parts} of the row aliased
     * {@code alias}: the same text {@link dev.itersnap.internal.SequenceKey#encode} gives for the row's values, NULL when one is NULL.
     */
    public String sequenceKey(List<SourceColumn> parts, String alias) {
        List<String> keys = new ArrayList<>();
        for (SourceColumn c : parts) {
            String e = d.col(alias, c.name());
            keys.add(switch (c.valueType()) {
                case INTEGER -> integerKey(e);
                case DECIMAL -> integerKey("CAST(" + e + (c.scale() > 0 ? " * 1" + "0".repeat(c.scale()) : "")
                        + " AS BIGINT)");
                case DATE -> integerKey(d.epochDays(e));
                case TIMESTAMP, TIMESTAMP_TZ -> integerKey(d.epochMicros(c, e));
                case STRING -> stringKey(e);
                default -> throw new IllegalArgumentException("column '" + c.name() + "' cannot order batches");
            });
        }
        return d.concat(keys);
    }

    /** An integer as {@link SequenceKey} writes it: p and 19 digits, or n and 19 digits of the value plus 10^19. */
    private String integerKey(String e) {
        return "CASE WHEN " + e + " < 0 THEN " + d.concat(List.of("'n'", "LPAD(" + d.toText("CAST(" + e
                + " AS DECIMAL(20, 0)) + CAST(10000000000000000000 AS DECIMAL(20, 0))") + ", 19, '0')")) + " ELSE "
                + d.concat(List.of("'p'", "LPAD(" + d.toText(e) + ", 19, '0')")) + " END";
    }

    /** A string as {@link SequenceKey} writes it: U+0001 and U+0000 escaped, ended by U+0001 U+0001. */
    private String stringKey(String e) {
        String x = "REPLACE(" + e + ", " + d.chr(1) + ", " + d.concat(List.of(d.chr(1), d.chr(3))) + ")";
        if (d.stringsHoldNul()) {
            x = "REPLACE(" + x + ", " + d.chr(0) + ", " + d.concat(List.of(d.chr(1), d.chr(2))) + ")";
        }
        return d.concat(List.of(x, d.chr(1), d.chr(1)));
    }

    /**
     * Discover: the distinct sequences in the source, NULL included when some rows have none, one column. Nothing
     * else: a run counts and hashes only the batches it applies or checks ({@link #fingerprintSequences},
     * {@link #fingerprintStaged}), so discovery should cost what the distinct sequences cost (an index walk where the
     * database has one).
     */
    /**
     * {@link #discoverSequences} and the pending table's batches ({@link ModelTables#pendingBatches}) in one statement,
     * where the discovery is the plain {@code SELECT DISTINCT}: rows of the source's sequences (second column NULL, third
     * 0) and of the pending table's (sequence, deletion time, 1). Null where the dialect discovers otherwise.
     */
    public Statement discoverSequencesAndPending(ResolvedModel m) {
        if (hints.discoverSequences(m, sourceRelation(m)) != null) {
            return null;
        }
        String seq = d.quote(m.sequenceBy());
        return Statement.of("discover", "SELECT DISTINCT " + d.col("s", m.sequenceBy()) + ", CAST(NULL AS "
                + d.typeName(TableSpec.ColumnType.text(64)) + "), 0 FROM " + sourceRelation(m) + " s UNION ALL "
                + "SELECT DISTINCT p." + seq + ", p." + d.quote(m.id(DELTIME)) + ", 1 FROM " + d.table(m.pending()) + " p");
    }

    public Statement discoverSequences(ResolvedModel m) {
        Statement hinted = hints.discoverSequences(m, sourceRelation(m));
        if (hinted != null) {
            return hinted;
        }
        return Statement.of("discover", "SELECT DISTINCT " + d.col("s", m.sequenceBy()) + " FROM " + sourceRelation(m)
                + " s");
    }

    /**
     * The fingerprints of the source's batches {@code sequences} (sequence values, bound; null: every batch), one
     * row per batch found: its sequence, its number of rows and, in a third column, the content hash of its rows,
     * computed by the database in the same statement (no row leaves it): the sum, as an exact integer
     * ({@code DECIMAL}, no overflow), of the distinct 64-bit hashes of the rows' canonical texts over {@code columns}
     * in the order given (each value as text, prefixed with its length; NULL distinct from an empty string). The sum
     * depends neither on the order of the rows nor on exact copies of a row. With {@code columns} null, or on a
     * database without a 64-bit hash, the statement has no third column (rows counted only).
     * <p>One pass over the rows of the batches named, grouped by sequence: every such row is read for its hash. A
     * dialect without {@link AbstractSqlDialect#hash64} counts rows only.
     */
    public Statement fingerprintSequences(ResolvedModel m, List<SourceColumn> columns, List<?> sequences) {
        if (sequences != null && sequences.isEmpty()) {
            throw new IllegalArgumentException("no batch to fingerprint");
        }
        Map<String, Object> values = new LinkedHashMap<>();
        StringBuilder where = new StringBuilder(d.col("s", m.sequenceBy()));
        if (sequences != null) {
            where.append(" IN (");
            for (int i = 0; i < sequences.size(); i++) {
                String slot = "seq" + i;
                values.put(slot, sequences.get(i));
                where.append(i == 0 ? "" : ", ").append(d.param(m.sequenceColumn(), slot));
            }
            where.append(")");
        } else {
            where.append(" IS NOT NULL");
        }
        return statement("fingerprint", fingerprints(m, columns, sourceRelation(m), where.toString()), values);
    }

    /**
     * Rows and content hash per sequence of the rows of {@code relation} (alias {@code s}) that {@code where} keeps.
     * The hash is the sum of the distinct row hashes: the rows are grouped by sequence and hash first (a hash
     * aggregate over 64-bit integers, where {@code SUM(DISTINCT)} over decimals would sort them), the copies counted,
     * then summed per sequence. Without {@code columns} (or {@link #hash64}): the rows counted only.
     */
    private String fingerprints(ResolvedModel m, List<SourceColumn> columns, String relation, String where) {
        String seq = d.col("s", m.sequenceBy());
        if (columns == null || d.hash64("x") == null) {
            return "SELECT " + seq + ", COUNT(*) FROM " + relation + " s WHERE " + where + " GROUP BY " + seq;
        }
        String sq = d.quote(m.id("itersnap_s"));
        String h = d.quote(m.id("itersnap_h"));
        String n = d.quote(m.id("itersnap_n"));
        return "SELECT x." + sq + ", SUM(x." + n + "), SUM(CAST(x." + h + " AS DECIMAL(20, 0))) FROM (SELECT y." + sq
                + ", y." + h + ", COUNT(*) AS " + n + " FROM (SELECT " + seq + " AS " + sq + ", "
                + d.rowHash(columns, "s") + " AS " + h + " FROM " + relation + " s WHERE " + where + ") y GROUP BY y."
                + sq + ", y." + h + ") x GROUP BY x." + sq;
    }

    /**
     * The distinct sequences that opened or closed a version of the history, among {@code sequences} (bound values,
     * possibly none) or at or after {@code from} (null: none): a probe of the history's indexes on the opened and
     * closed sequences that grows with the batches asked for, not with the history.
     */
    public Statement historySequences(ResolvedModel m, List<?> sequences, Object from) {
        return historySequences(m, sequences, from, List.of());
    }

    /**
     * {@link #historySequences(ResolvedModel, List, Object)} and, in the same statement, {@link #openedVersions} of
     * {@code counted} (bound values; none: no count): rows of a sequence and {@code NULL} are the probe's (distinct),
     * rows of a sequence and a count are the versions it opened. One read where a run would make two of the history's
     * indexes before it writes.
     */
    public Statement historySequences(ResolvedModel m, List<?> sequences, Object from, List<?> counted) {
        Map<String, Object> values = new LinkedHashMap<>();
        List<String> in = new ArrayList<>();
        for (int i = 0; i < sequences.size(); i++) {
            values.put("seq" + i, sequences.get(i));
            in.add(d.param(m.sequenceColumn(), "seq" + i));
        }
        if (from != null) {
            values.put(FROM, from);
        }
        List<String> branches = new ArrayList<>();
        for (String column : List.of(m.meta().openedSeq(), m.meta().closedSeq())) {
            String c = d.col("h", column);
            List<String> where = new ArrayList<>();
            if (!in.isEmpty()) {
                where.add(c + " IN (" + String.join(", ", in) + ")");
            }
            if (from != null) {
                where.add(d.ordered(m, c) + " >= " + d.ordered(m, d.param(m.sequenceColumn(), FROM)));
            }
            if (where.isEmpty()) {
                throw new IllegalArgumentException("no sequence to probe");
            }
            // one branch per condition: an OR would keep a database from probing the index by each
            for (String w : where) {
                branches.add("SELECT " + c + (counted.isEmpty() ? "" : ", CAST(NULL AS BIGINT)") + " FROM "
                        + d.table(m.target()) + " h WHERE " + w);
            }
        }
        String sql = String.join(" UNION ", branches);
        if (!counted.isEmpty()) {
            List<String> cin = new ArrayList<>();
            for (int i = 0; i < counted.size(); i++) {
                values.put("cnt" + i, counted.get(i));
                cin.add(d.param(m.sequenceColumn(), "cnt" + i));
            }
            String os = d.col("h", m.meta().openedSeq());
            sql += " UNION ALL SELECT " + os + ", COUNT(*) FROM " + d.table(m.target()) + " h WHERE " + os + " IN ("
                    + String.join(", ", cin) + ") GROUP BY " + os;
        }
        return statement("check ledger", sql, values);
    }

    /**
     * As {@link #fingerprintSequences}, over the run's stage: the rows the run applies, read from the source once
     * (those reproduced from the history aside), so that the fingerprint a ledger entry records is that of exactly
     * the rows applied.
     * <p>The staged rows of the batches read from the source (not those reproduced from the history), grouped by
     * sequence, as {@link #fingerprintSequences} hashes them.
     */
    public Statement fingerprintStaged(ResolvedModel m, List<SourceColumn> columns) {
        return Statement.of("fingerprint staged", fingerprints(m, columns, d.table(m.stage()), d.col("s",
                m.sequenceBy())
                + " IS NOT NULL AND NOT " + d.col("s", m.id(REPRO))));
    }

    /**
     * The check of a key-scoped replay, once it has staged the replayed batches' rows of the keys it recomputes
     * ({@code itersnap_from = 1} in the keys table): for each replayed batch {@code sequences} (bound values; null:
     * every replayed batch of the batches table), in one statement, rows {@code (sequence, content hash of the batch in
     * the source, content hash of its rows of those keys in the source, 'source')} and
     * {@code (sequence, NULL, content hash of its rows staged, 'stage')}; hashes as {@link #fingerprintSequences}
     * computes them over {@code columns}, NULL for none. The source's two hashes come from one snapshot, so the run can
     * tell whether the rows it staged are the batch's rows of those keys as the ledger recorded the batch. Default:
     * null, no check (a source that changes between the comparison and the staging can then leave those keys without
     * the batch's rows).
     * <p>The source's branch reads the replayed batches in full (filtered by their bound sequences, as
     * {@link #fingerprintSequences}), joined to the keys table for the second hash; the stage's branch reads the rows
     * staged of them.
     */
    public Statement fingerprintReplayedKeys(ResolvedModel m, List<SourceColumn> columns, List<?> sequences) {
        if (columns == null || d.hash64("x") == null) {
            return null;
        }
        Map<String, Object> values = new LinkedHashMap<>();
        String seq = d.col("s", m.sequenceBy());
        String in;
        if (sequences == null) {
            in = seq + " IN (SELECT " + d.col("sb", m.sequenceBy()) + " FROM " + d.table(m.batches()) + " sb WHERE "
                    + d.col("sb", m.id(ModelTables.REPLAYED)) + ")";
        } else {
            if (sequences.isEmpty()) {
                throw new IllegalArgumentException("no batch to check");
            }
            List<String> slots = new ArrayList<>();
            for (int i = 0; i < sequences.size(); i++) {
                values.put("seq" + i, sequences.get(i));
                slots.add(d.param(m.sequenceColumn(), "seq" + i));
            }
            in = seq + " IN (" + String.join(", ", slots) + ")";
        }
        String row = "CAST(" + d.rowHash(columns, "s") + " AS DECIMAL(20, 0))";
        String firstKey = d.col("sk", m.keys().get(0));
        String sql = "SELECT " + seq + ", SUM(DISTINCT " + row + "), SUM(DISTINCT CASE WHEN " + firstKey
                + " IS NOT NULL THEN " + row + " END), 'source' FROM " + sourceRelation(m) + " s LEFT JOIN "
                + d.table(m.keysTable()) + " sk ON " + d.keyJoin(m, "sk", "s") + " AND "
                + d.col("sk", m.id(ModelTables.FROM_IDX)) + " = 1 WHERE " + in + " GROUP BY " + seq
                + " UNION ALL SELECT " + seq + ", CAST(NULL AS DECIMAL(20, 0)), SUM(DISTINCT " + row
                + "), 'stage' FROM "
                + d.table(m.stage()) + " s WHERE " + in + " AND NOT " + d.col("s", m.id(REPRO)) + " GROUP BY " + seq;
        return statement("check replayed keys", sql, values);
    }

    /** {@link #partitionable} of a source column by name (itself for a column the source lacks). */
    String comparable(ResolvedModel m, String column, String expression) {
        SourceColumn c = m.sourceColumn(column);
        return c == null ? expression : d.partitionable(c, expression);
    }

    /**
     * Stage, as {@link #stageSource(ResolvedModel, Object, boolean)}, of the rows {@code scope} selects (NULL
     * sequences only with {@link StageScope#ALL} or {@link StageScope#FRESH}).
     * <p>Rows that repeat another row of the batch in every column are exact copies (a file loaded twice): all but
     * one are marked {@code duplicate_copy} and applied once. Rows of one key that differ are {@code duplicate_key}.
     */
    public Statement stageSource(ResolvedModel m, Object from, boolean includeNullSequence, StageScope scope) {
        String deleteWhen = m.settings().deleteWhen();
        String del = deleteWhen == null ? "FALSE" : "CASE WHEN (" + deleteWhen + ") THEN TRUE ELSE FALSE END";
        String nullKey = m.keys().stream().map(k -> d.col("s", k) + " IS NULL").collect(Collectors.joining(" OR "));
        List<String> partition = new ArrayList<>();
        partition.add(d.col("s", m.sequenceBy()));
        m.keys().forEach(k -> partition.add(d.col("s", k)));
        // sequence and key first: the two windows then share one sort, and an index on (sequence, key) of the
        // source can deliver the rows presorted
        List<String> everyColumn = new ArrayList<>();
        everyColumn.add(d.partitionable(m.sequenceColumn(), d.col("s0", m.sequenceBy())));
        for (String k : m.keys()) {
            everyColumn.add(d.partitionable(m.sourceColumn(k), d.col("s0", k)));
        }
        for (SourceColumn c : m.sourceColumns()) {
            if (!c.name().equals(m.sequenceBy()) && !m.keys().contains(c.name())) {
                everyColumn.add(d.partitionable(c, d.col("s0", c.name())));
            }
        }
        String copyNo = d.quote(m.id("itersnap_copy_no"));
        String reject = "CASE WHEN " + d.col("s", m.sequenceBy()) + " IS NULL THEN "
                + RejectReason.NULL_SEQUENCE.literal()
                + " WHEN " + nullKey + " THEN " + RejectReason.NULL_KEY.literal()
                + " WHEN SUM(CASE WHEN s." + copyNo + " = 1 THEN 1 ELSE 0 END) OVER (PARTITION BY "
                + String.join(", ", partition) + ") > 1 THEN " + RejectReason.DUPLICATE_KEY.literal()
                + " WHEN s." + copyNo + " > 1 THEN " + RejectReason.DUPLICATE_COPY.literal()
                + " WHEN " + d.col("s", m.updatedAt()) + " IS NULL THEN " + RejectReason.NULL_UPDATED_AT.literal()
                + " END";
        String rel = sourceRelation(m);
        String fromRows = scope == StageScope.ALL ? rel + " s0 WHERE " + d.ordered(m, d.col("s0", m.sequenceBy()))
                + " >= "
                + d.ordered(m, d.param(m.sequenceColumn(), FROM)) : scopedRows(m, rel, scope, FROM);
        if (includeNullSequence && scope != StageScope.REPLAYED_KEYS) {
            // a separate branch: "seq >= ? OR seq IS NULL" keeps a database from using an index on the sequence
            fromRows = "(SELECT " + d.list(m.sourceNames(), "s0") + " FROM " + fromRows + " UNION ALL SELECT "
                    + d.list(m.sourceNames(), "s0") + " FROM " + rel + " s0 WHERE " + d.col("s0", m.sequenceBy())
                    + " IS NULL) s0";
        }
        String numbered = "SELECT " + d.list(m.sourceNames(), "s0") + ", ROW_NUMBER() OVER (PARTITION BY "
                + String.join(", ", everyColumn) + " ORDER BY " + d.col("s0", m.sequenceBy()) + ") AS " + copyNo
                + " FROM " + fromRows;
        return statement("stage source", "INSERT INTO " + d.table(m.stage()) + " (" + d.list(m.sourceNames(), null)
                + ", " + d.quote(m.id(DEL)) + ", " + d.quote(m.id(REJECT)) + ", " + d.quote(m.id(REPRO)) + ") SELECT "
                + d.list(m.sourceNames(), "s") + ", " + del + ", " + reject + ", FALSE FROM (" + numbered + ") s",
                FROM, from);
    }

    /**
     * The source rows (alias {@code s0}, every source column) a key-scoped replay stages, from the sequence in slot
     * {@code from} on: those of the batches it applies in full ({@link StageScope#FRESH}: not replayed in the batches
     * table), or the replayed batches' rows of the keys it recomputes ({@link StageScope#REPLAYED_KEYS}:
     * {@code itersnap_from = 1} in the keys table). Joins of the source with those tables, which a dialect may shape
     * so that its planner probes the source per batch, or per batch and key, where it can.
     */
    String scopedRows(ResolvedModel m, String relation, StageScope scope, String from) {
        String joined = joinedRows(m, relation, scope, from);
        String hinted = hints.scopedRows(m, relation, scope, from, joined);
        return hinted != null ? hinted : joined;
    }

    /** {@link #scopedRows} as joins of the source with the batches and keys tables. */
    private String joinedRows(ResolvedModel m, String relation, StageScope scope, String from) {
        String batches = relation + " s0 JOIN " + d.table(m.batches()) + " sb ON " + d.col("sb", m.sequenceBy()) + " = "
                + d.col("s0", m.sequenceBy()) + " AND ";
        String range = " WHERE " + d.ordered(m, d.col("s0", m.sequenceBy())) + " >= "
                + d.ordered(m, d.param(m.sequenceColumn(), from));
        return switch (scope) {
            case ALL -> throw new IllegalArgumentException("the whole source is not scoped");
            case FRESH -> batches + "NOT " + d.col("sb", m.id(ModelTables.REPLAYED)) + range;
            case REPLAYED_KEYS -> batches + d.col("sb", m.id(ModelTables.REPLAYED)) + " JOIN " + d.table(m.keysTable())
                    + " sk ON " + d.keyJoin(m, "sk", "s0") + " AND " + d.col("sk", m.id(ModelTables.FROM_IDX)) + " = 1"
                    + range;
        };
    }

    /**
     * Stage: copies the source rows without a sequence from the stage into the error log, once per record (a record
     * already logged is not logged again); its update count is the number logged.
     * <p>A record is logged as often as it occurs in the source, minus the times it is already in the error log, so
     * reruns add nothing and two identical rows are two entries. Where INSERT reports no count, the times a record
     * is already logged come from a join (a MERGE cannot read its own target in a subquery expression).
     */
    public Statement logNullSequences(ResolvedModel m, String runId, java.time.LocalDateTime loggedAt) {
        MetadataSchema.Errors e = m.metadata().errors();
        List<String> exprs = m.recordNames().stream().map(c -> d.col("s", c)).toList();
        String json = d.jsonObject(m.recordNames(), exprs);
        String errors = d.table(e.spec().name());
        String numbered = " FROM (SELECT " + json + " AS rec, ROW_NUMBER() OVER (PARTITION BY " + json + " ORDER BY "
                + json + ") AS rn FROM " + d.table(m.stage()) + " s WHERE " + d.col("s", m.sequenceBy())
                + " IS NULL) x";
        String logged = d.capabilities().insertRowCounts()
                ? numbered + " WHERE x.rn > (SELECT COUNT(*) FROM " + errors + " e WHERE " + d.col("e", e.model())
                        + " = " + slot(MODEL) + " AND " + d.col("e", e.reason()) + " = "
                        + RejectReason.NULL_SEQUENCE.literal() + " AND "
                        + d.col("e", e.record()) + " = x.rec)"
                : numbered + " LEFT JOIN (SELECT " + d.col("e", e.record()) + " AS rec, COUNT(*) AS n FROM " + errors
                        + " e WHERE " + d.col("e", e.model()) + " = " + slot(MODEL) + " AND " + d.col("e", e.reason())
                        + " = " + RejectReason.NULL_SEQUENCE.literal() + " GROUP BY " + d.col("e", e.record())
                        + ") p ON p.rec = x.rec WHERE x.rn > "
                        + "COALESCE(p.n, 0)";
        String sql = insertCounted(m, e.spec(), List.of(e.model(), e.runId(), e.sequence(), e.reason(), e.record(),
                e.loggedAt()), List.of(slot(MODEL), slot(RUN_ID), "NULL", RejectReason.NULL_SEQUENCE.literal(),
                        "x.rec", slot(LOGGED_AT)),
                logged);
        return statement("set rows aside", sql, Map.of(MODEL, m.name(), RUN_ID, runId, LOGGED_AT, loggedAt));
    }

    /**
     * Stage: reproduces one batch that aged out of the source into the stage, from the history and the archive.
     *
     * @param notYetIntroduced columns introduced after this batch (reproduced as NULL)
     * @param fullPicture      true when the batch was a full picture with a deletion time: every version live
     *                         right after it was in it; otherwise only the versions it opened
     * <p>Two parts: the versions the batch left live (full picture) or opened, minus the keys the archive holds for
     * it, and the archive's rows of the batch (set-aside rows, explicit deletes, rows that changed nothing but differ
     * from the live version). Deletions by absence need no row: the key is absent again.
     */
    public Statement stageReproduced(ResolvedModel m, Object sequence, List<String> notYetIntroduced,
                                     boolean fullPicture) {
        ColumnNames n = m.meta();
        String h = outer("h");
        String seqParam = d.param(m.sequenceColumn(), SEQ);
        Map<String, Object> values = new LinkedHashMap<>();
        values.put(SEQ, sequence);
        List<Object> parts = m.sequenceKey() == null ? List.of() : m.sequenceKey().decode((String) sequence);
        List<String> fromHistory = new ArrayList<>();
        List<String> fromArchive = new ArrayList<>();
        for (String c : m.sourceNames()) {
            int part = m.sequenceKey() == null ? -1 : m.sequenceParts().indexOf(c);
            if (c.equals(m.sequenceBy())) {
                fromHistory.add(seqParam);
                fromArchive.add(d.col("a", c));
            } else if (part >= 0) {
                // the batch's own value of a column of the sequence_by list (the version has its opening batch's)
                values.put(SEQ + (char) ('a' + part), parts.get(part));
                fromHistory.add(d.param(m.sourceColumn(c), SEQ + (char) ('a' + part)));
                fromArchive.add(d.col("a", c));
            } else if (notYetIntroduced.contains(c)) {
                fromHistory.add("NULL");
                fromArchive.add("NULL");
            } else {
                fromHistory.add(d.col(h, c));
                fromArchive.add(d.col("a", c));
            }
        }
        String live = fullPicture
                ? d.ordered(m, d.col(h, n.openedSeq())) + " <= " + d.ordered(m, seqParam) + " AND ("
                        + d.col(h, n.closedSeq()) + " IS NULL OR " + d.ordered(m, d.col(h, n.closedSeq())) + " > "
                        + d.ordered(m, seqParam) + ")"
                : d.col(h, n.openedSeq()) + " = " + seqParam;
        String archived = "SELECT 1 FROM " + d.table(m.archive()) + " a WHERE " + d.col("a", m.sequenceBy()) + " = "
                + seqParam + " AND " + d.keyJoin(m, "a", h);
        return statement("reproduce aged-out batch", "INSERT INTO " + d.table(m.stage()) + " ("
                + d.list(m.sourceNames(), null) + ", " + d.quote(m.id(DEL)) + ", " + d.quote(m.id(REJECT)) + ", "
                + d.quote(m.id(REPRO)) + ") SELECT " + String.join(", ", fromHistory) + ", FALSE, NULL, TRUE FROM "
                + d.table(m.target()) + " " + h + " WHERE " + live + " AND " + notDeletionRecord(m, h) + " AND NOT EXISTS ("
                + archived + ") UNION ALL SELECT " + String.join(", ", fromArchive) + ", " + d.col("a", m.id(DEL))
                + ", "
                + d.col("a", m.id(REJECT)) + ", TRUE FROM " + d.table(m.archive()) + " a WHERE " + d.col("a",
                m.sequenceBy())
                + " = " + seqParam, values);
    }

    /**
     * Stage: the values of the columns the source no longer has that a replay stages again ({@code ranges}), for the
     * staged rows (not reproduced) of the batches in each column's range: the value of the key's latest version opened
     * at or before the row's batch, that is the version the key had right after that batch, read before the roll back.
     * A batch applied while the source had the column gets back the values it had (a version it opened holds its
     * row's); a batch arriving late in the range has none of its own and keeps the key's value, so the column changes
     * nothing there. One statement for every carried column.
     */
    public Statement carryFromHistory(ResolvedModel m, List<CarriedRange> ranges) {
        ColumnNames n = m.meta();
        String seq = m.sequenceBy();
        String keysSeq = d.list(m.keys(), "k") + ", " + d.col("k", seq);
        String values = ranges.stream().map(r -> d.col("h", r.column())).collect(Collectors.joining(", "));
        String rn = d.quote(m.id("itersnap_rn"));
        String latest = "SELECT " + keysSeq + ", " + values + ", ROW_NUMBER() OVER (PARTITION BY " + keysSeq
                + " ORDER BY " + d.ordered(m, d.col("h", n.openedSeq())) + " DESC, " + d.col("h", n.validFrom())
                + " DESC) AS " + rn + " FROM (SELECT DISTINCT " + d.list(m.keys(), "s") + ", " + d.col("s", seq)
                + " FROM " + d.table(m.stage()) + " s WHERE NOT " + d.col("s", m.id(REPRO)) + " AND ("
                + anyRange(m, d.col("s", seq), ranges) + ")) k JOIN " + d.table(m.target()) + " h ON "
                + d.keyJoin(m, "k", "h") + " AND " + d.ordered(m, d.col("h", n.openedSeq())) + " <= "
                + d.ordered(m, d.col("k", seq));
        return carry(m, ranges, "SELECT * FROM (" + latest + ") x WHERE x." + rn + " = 1", "carry dropped columns");
    }

    /**
     * Stage, on a database without transactions: the carried values a replay saved ({@link #saveCarried}) before a
     * roll back that did not finish replace those read from the history, which that roll back changed.
     */
    public Statement carryFromSaved(ResolvedModel m, List<CarriedRange> ranges, TableName saved) {
        return carry(m, ranges, "SELECT * FROM " + d.table(saved), "carry dropped columns");
    }

    /**
     * Before a roll back on a database without transactions: the staged rows' carried values into {@code saved}, one
     * row per key and batch, so that a run that fails after the roll back loses none of them (the next run reads them
     * with {@link #carryFromSaved}). Empties the table first.
     */
    public List<Statement> saveCarried(ResolvedModel m, List<CarriedRange> ranges, TableName saved) {
        String seq = m.sequenceBy();
        List<String> names = new ArrayList<>(m.keys());
        names.add(seq);
        ranges.forEach(r -> names.add(r.column()));
        String keysSeq = d.list(m.keys(), "s") + ", " + d.col("s", seq);
        String rn = d.quote(m.id("itersnap_rn"));
        String present = m.keys().stream().map(k -> d.col("s", k) + " IS NOT NULL").collect(Collectors.joining(" AND "));
        String rows = "SELECT " + d.list(names, "s") + ", ROW_NUMBER() OVER (PARTITION BY " + keysSeq + " ORDER BY "
                + keysSeq + ") AS " + rn + " FROM " + d.table(m.stage()) + " s WHERE NOT " + d.col("s", m.id(REPRO))
                + " AND " + present + " AND (" + anyRange(m, d.col("s", seq), ranges) + ")";
        return List.of(Statement.of("save carried columns", "DELETE FROM " + d.table(saved)),
                statement("save carried columns", "INSERT INTO " + d.table(saved) + " (" + d.list(names, null)
                        + ") SELECT " + d.list(names, "x") + " FROM (" + rows + ") x WHERE x." + rn + " = 1",
                        rangeValues(ranges)));
    }

    /** {@code MERGE INTO} the stage of the carried columns' values from {@code using} (keys, sequence, columns). */
    private Statement carry(ResolvedModel m, List<CarriedRange> ranges, String using, String step) {
        String seq = m.sequenceBy();
        List<String> set = new ArrayList<>();
        for (int i = 0; i < ranges.size(); i++) {
            set.add(d.quote(ranges.get(i).column()) + " = CASE WHEN " + inRange(m, d.col("t", seq), i, ranges.get(i))
                    + " THEN " + d.col("u", ranges.get(i).column()) + " ELSE NULL END");
        }
        return statement(step, "MERGE INTO " + d.table(m.stage()) + " t USING (" + using + ") u ON "
                + d.keyJoin(m, "t", "u") + " AND " + d.col("t", seq) + " = " + d.col("u", seq) + " AND NOT "
                + d.col("t", m.id(REPRO)) + " WHEN MATCHED THEN UPDATE SET " + String.join(", ", set),
                rangeValues(ranges));
    }

    /** {@code expr} (a sequence) within the range of any of {@code ranges}. */
    private String anyRange(ResolvedModel m, String expr, List<CarriedRange> ranges) {
        List<String> parts = new ArrayList<>();
        for (int i = 0; i < ranges.size(); i++) {
            parts.add(inRange(m, expr, i, ranges.get(i)));
        }
        return String.join(" OR ", parts);
    }

    /** {@code expr} (a sequence) within range {@code i}, whose bounds are slots {@code cf<i>} and {@code ct<i>}. */
    private String inRange(ResolvedModel m, String expr, int i, CarriedRange r) {
        String e = d.ordered(m, expr);
        String upTo = e + " <= " + d.ordered(m, d.param(m.sequenceColumn(), "ct" + i));
        return r.from() == null ? "(" + upTo + ")"
                : "(" + e + " >= " + d.ordered(m, d.param(m.sequenceColumn(), "cf" + i)) + " AND " + upTo + ")";
    }

    private static Map<String, Object> rangeValues(List<CarriedRange> ranges) {
        Map<String, Object> values = new LinkedHashMap<>();
        for (int i = 0; i < ranges.size(); i++) {
            values.put("ct" + i, ranges.get(i).through());
            if (ranges.get(i).from() != null) {
                values.put("cf" + i, ranges.get(i).from());
            }
        }
        return values;
    }

    /**
     * Roll back: the statements undoing what {@code rollback} names, in order.
     */
    public List<Statement> rollback(ResolvedModel m, Rollback r) {
        if (r.keyScoped()) {
            return rollbackKeys(m, r);
        }
        if (r.sequence() == null) {
            return m.overwritten().isEmpty() ? List.of()
                    : List.of(Statement.of("roll back", restoreOverwritten(m, false)));
        }
        ColumnNames n = m.meta();
        String t = d.table(m.target());
        String op = r.onlyThisBatch() ? " = " : " >= ";
        String p = r.onlyThisBatch() ? slot(FROM) : d.ordered(m, d.param(m.sequenceColumn(), FROM));
        java.util.function.UnaryOperator<String> seq = c -> r.onlyThisBatch() ? d.quote(c) : d.ordered(m, d.quote(c));
        List<String> sql = new ArrayList<>();
        if (r.history()) {
            sql.add("DELETE FROM " + t + " WHERE " + seq.apply(n.openedSeq()) + op + p);
            sql.add("UPDATE " + t + " SET " + d.quote(n.validTo()) + " = " + openValidTo(m) + ", "
                    + d.quote(n.changeType())
                    + " = 'insert', " + d.quote(n.changedAttributes()) + " = NULL, " + d.quote(n.closedSeq())
                    + " = NULL WHERE " + seq.apply(n.closedSeq()) + op + p);
        }
        for (String c : r.resetColumns()) {
            sql.add("UPDATE " + t + " SET " + d.quote(c) + " = NULL");
        }
        sql.add("DELETE FROM " + d.table(m.archive()) + " WHERE " + seq.apply(m.sequenceBy()) + op + p);
        List<Statement> out = new ArrayList<>(sql.stream().map(s -> statement("roll back", s, FROM, r.sequence()))
                .toList());
        // a single batch is undone only by a recovery, which restores once at its end (Rollback.restoreOnly)
        if (!m.overwritten().isEmpty() && !r.onlyThisBatch()) {
            out.add(Statement.of("roll back", restoreOverwritten(m, false)));
        }
        return out;
    }

    /**
     * {@code untracked_columns: overwrite}: after a roll back, each live open version's overwritten columns take the
     * values of its last archived row (the archive keeps every row of every applied batch, and the undone batches'
     * rows are gone): the row that opened it or a later one that changed no tracked column. Rows set aside, deletes
     * and regressions (a change, so some tracked column differs) are not the version's. A version without such a row
     * (opened before the setting, or adopted) keeps its values.
     *
     * @param keyScoped only the keys a key-scoped replay computes again
     */
    String restoreOverwritten(ResolvedModel m, boolean keyScoped) {
        ColumnNames n = m.meta();
        List<String> over = m.overwritten();
        String rn = d.quote(m.id("itersnap_w_rn"));
        List<String> same = new ArrayList<>();
        same.add("NOT " + d.col("a", m.id(DEL)));
        for (String c : m.tracked()) {
            same.add("NOT " + d.isDistinct(comparable(m, c, d.col("a", c)), comparable(m, c, d.col("v", c))));
        }
        String scope = keyScoped ? " JOIN " + d.table(m.keysTable()) + " k ON " + d.keyJoin(m, "k", "a") + " AND "
                + d.col("k", m.id(ModelTables.FROM_IDX)) + " = 1" : "";
        String last = "SELECT " + d.list(m.keys(), "a") + ", " + d.list(over, "a")
                + ", ROW_NUMBER() OVER (PARTITION BY "
                + d.list(m.keys(), "a") + " ORDER BY " + d.ordered(m, d.col("a", m.sequenceBy())) + " DESC) AS " + rn
                + " FROM " + d.table(m.archive()) + " a JOIN " + d.table(m.target()) + " v ON " + d.keyJoin(m, "v", "a")
                + " AND " + isOpen(m, d.col("v", n.validTo())) + " AND " + notDeletionRecord(m, "v") + " AND "
                + d.ordered(m, d.col("a", m.sequenceBy())) + " >= " + d.ordered(m, d.col("v", n.openedSeq())) + scope
                + " WHERE " + d.col("a", m.id(REJECT)) + " IS NULL AND " + String.join(" AND ", same);
        return "MERGE INTO " + d.table(m.target()) + " t USING (SELECT * FROM (" + last + ") x WHERE x." + rn
                + " = 1) r ON " + d.keyJoin(m, "t", "r") + " AND " + isOpen(m, d.col("t", n.validTo())) + " AND "
                + notDeletionRecord(m, "t") + " WHEN MATCHED THEN UPDATE SET " + over.stream()
                .map(c -> d.quote(c) + " = " + d.col("r", c)).collect(java.util.stream.Collectors.joining(", "));
    }

    /**
     * A key-scoped rollback: MERGE statements over the keys table (one row per key), so that every database runs the
     * same form (Delta Lake refuses subqueries in an UPDATE's or DELETE's condition). The error log's rows of the
     * replayed batches are matched by the staged rows of those keys, in the form they are logged in.
     */
    private List<Statement> rollbackKeys(ResolvedModel m, Rollback r) {
        ColumnNames n = m.meta();
        String p = d.ordered(m, d.param(m.sequenceColumn(), FROM));
        String keys = " USING (SELECT " + d.list(m.keys(), "k") + " FROM " + d.table(m.keysTable()) + " k WHERE "
                + d.col("k", m.id(ModelTables.FROM_IDX)) + " = 1) k ON " + d.keyJoin(m, "t", "k") + " AND ";
        List<String> sql = new ArrayList<>();
        sql.add("MERGE INTO " + d.table(m.target()) + " t" + keys + d.ordered(m, d.col("t", n.openedSeq())) + " >= " + p
                + " WHEN MATCHED THEN DELETE");
        sql.add("MERGE INTO " + d.table(m.target()) + " t" + keys + d.ordered(m, d.col("t", n.closedSeq())) + " >= " + p
                + " WHEN MATCHED THEN UPDATE SET " + d.quote(n.validTo()) + " = " + openValidTo(m) + ", "
                + d.quote(n.changeType())
                + " = 'insert', " + d.quote(n.changedAttributes()) + " = NULL, " + d.quote(n.closedSeq()) + " = NULL");
        sql.add("MERGE INTO " + d.table(m.archive()) + " t" + keys + d.ordered(m, d.col("t", m.sequenceBy())) + " >= "
                + p
                + " WHEN MATCHED THEN DELETE");
        List<Statement> out = new ArrayList<>(sql.stream().map(s -> statement("roll back", s, FROM, r.sequence()))
                .toList());
        if (!m.overwritten().isEmpty()) {
            out.add(Statement.of("roll back", restoreOverwritten(m, true)));
        }
        if (!r.errorLog()) {
            return out;
        }
        MetadataSchema.Errors e = m.metadata().errors();
        List<String> exprs = m.recordNames().stream().map(c -> d.col("s", c)).toList();
        String staged = "SELECT DISTINCT " + d.col("b", m.id(ModelTables.SEQTEXT)) + " AS sq, " + d.jsonObject(
                m.recordNames(), exprs) + " AS rec FROM " + d.table(m.stage()) + " s JOIN " + d.table(m.batches())
                + " b ON " + d.col("b", m.sequenceBy()) + " = " + d.col("s", m.sequenceBy()) + " WHERE "
                + d.col("b", m.id(ModelTables.REPLAYED));
        out.add(statement("roll back", "MERGE INTO " + d.table(e.spec().name()) + " t USING (" + staged + ") x ON "
                + d.col("t", e.model()) + " = " + slot(MODEL) + " AND " + d.col("t", e.sequence()) + " = x.sq AND "
                + d.col("t", e.record()) + " = x.rec WHEN MATCHED THEN DELETE", MODEL, m.name()));
        return out;
    }

    /**
     * Apply: the statements applying a run's batches from the stage to the history together, in a fixed number
     * whatever the number of batches: the shared SQL of {@link SetBasedApply} (window functions over all batches at
     * once), with the statistics the dialect's {@link PlanHints} ask for on the scratch tables once filled.
     */
    public ApplyStatements applyBatches(ResolvedModel m, BatchRun run) {
        ApplyStatements a = new SetBasedApply(this, m, run).statements();
        List<Statement> stage = hints.statistics(m.stage());
        List<Statement> keys = hints.statistics(m.keysTable());
        List<Statement> work = hints.statistics(m.work());
        if (stage.isEmpty() && keys.isEmpty() && work.isEmpty()) {
            return a;
        }
        List<Statement> prepare = new ArrayList<>(stage);
        prepare.addAll(a.prepare());
        prepare.addAll(keys);
        return new ApplyStatements(a.listBatches(), prepare, withStatistics(a.before(), work), a.resetRegressions(),
                withStatistics(a.derivation(), work), a.closeCurrent(), a.insertVersions(), a.writeVersions(),
                a.logRejected(),
                a.archive());
    }

    /** {@code d} with {@code statistics} run once the work table is derived. */
    private static ApplyStatements.Derivation withStatistics(ApplyStatements.Derivation d, List<Statement> statistics) {
        if (d == null || statistics.isEmpty()) {
            return d;
        }
        List<Statement> derived = new ArrayList<>(d.derived());
        derived.addAll(statistics);
        return new ApplyStatements.Derivation(d.derive(), derived, d.counts(), d.setAsideRegressions(), d.clear());
    }

    /**
     * What the timeline check reads, after {@code FROM}: the history rows {@code h} of the keys with a version opened
     * or closed from sequence {@code p} on. The touched keys are collected first (each side can use the index on its
     * sequence column) and joined to their versions on the key: H2 evaluated a correlated {@code EXISTS} once per
     * history row (~10x slower) and an {@code IN (subquery)} over many keys in quadratic time.
     */
    String touchedVersions(ResolvedModel m, String p) {
        String hinted = hints.touchedVersions(m, p);
        if (hinted != null) {
            return hinted;
        }
        ColumnNames n = m.meta();
        return "(SELECT " + d.list(m.keys(), "x") + " FROM " + d.table(m.target()) + " x WHERE "
                + d.ordered(m, d.col("x", n.openedSeq())) + " >= " + p + " UNION SELECT " + d.list(m.keys(), "x")
                + " FROM "
                + d.table(m.target()) + " x WHERE " + d.ordered(m, d.col("x", n.closedSeq())) + " >= " + p + ") k JOIN "
                + d.table(m.target()) + " h ON " + d.keyJoin(m, "k", "h");
    }

    /**
     * Check after the write: the versions that break a rule of {@link #editedVersions} among the keys with a version
     * opened or closed from sequence {@code from} on, as rows of (key columns in order, rule, opened sequence).
     */
    public Statement timelineCheck(ResolvedModel m, Object from) {
        return timelineCheck(m, from, null);
    }

    /**
     * {@link #timelineCheck(ResolvedModel, Object)} of a history adopted through {@code adoptedThrough} (or null):
     * versions the adoption kept as they were are not held to the rules among themselves.
     */
    public Statement timelineCheck(ResolvedModel m, Object from, Object adoptedThrough) {
        String p = d.ordered(m, d.param(m.sequenceColumn(), FROM));
        return historyRules("check timeline", m, touchedVersions(m, p), from, adoptedThrough);
    }

    /**
     * Check before the write: the versions of the keys the run writes (the keys table, through the history's index on
     * the key) that are in a state no run of the model leaves, one row per version, (key columns in order, rule,
     * opened sequence), the rules in {@link HistoryRule}'s order, the first that applies named. Versions of a key
     * ordered by the batch that opened them (then valid_from, closed before open, valid_to). Versions a history
     * adopted through {@code adoptedThrough} (or null) kept as they were are held only to the first two rules when
     * the adoption also closed them, the next version is adopted too, or they are the open last one.
     */
    public Statement editedVersions(ResolvedModel m, Object adoptedThrough) {
        return historyRules("check history", m, d.table(m.keysTable()) + " k JOIN " + d.table(m.target()) + " h ON "
                + d.keyJoin(m, "k", "h"), null, adoptedThrough);
    }

    /** {@link #editedVersions} over every key of the history (doctor). */
    public Statement editedVersionsOfEveryKey(ResolvedModel m, Object adoptedThrough) {
        return historyRules("check history", m, d.table(m.target()) + " h", null, adoptedThrough);
    }

    /**
     * The rules every version of a history written by the engine keeps, in the order {@link #historyRules} names the
     * first that a version breaks. A version is open when its valid_to is NULL (or {@code valid_to_current}).
     */
    public enum HistoryRule {
        /** Open, but a batch closed it ({@code dbt_closed_seq} set): reopened by hand. */
        REOPENED("reopened"),
        /** Closed (valid_to set), but no batch closed it: closed by hand. */
        CLOSED_WITHOUT_BATCH("closed_without_batch"),
        /** The key has more than one open version. */
        OPEN_TWICE("open_twice"),
        /** Open, and a later version of the key follows it. */
        OPEN_NOT_LAST("open_not_last"),
        /** Closed by a change (change type 'update'), but the batch that closed it opened no next version. */
        SUCCESSOR_MISSING("successor_missing"),
        /** The key's last version is closed, and not by a deletion: the key has no current version. */
        CLOSED_LAST("closed_last"),
        /** The next version was opened by a batch before the one that closed this one. */
        SUCCESSOR_EARLY("successor_early"),
        /** valid_to before valid_from. */
        INVERTED("inverted"),
        /** Still valid when the next version starts. */
        OVERLAP("overlap"),
        /** Closed by a change, and the next version does not start when it ends. */
        GAP("gap");

        private final String code;

        HistoryRule(String code) {
            this.code = code;
        }

        /** The code the check's rows carry. */
        public String code() {
            return code;
        }

        /** The rule of a code, or null. */
        public static HistoryRule of(String code) {
            for (HistoryRule r : values()) {
                if (r.code.equals(code)) {
                    return r;
                }
            }
            return null;
        }
    }

    /**
     * The rules of {@link HistoryRule} over the versions {@code h} that {@code from} (the text after FROM) reads, with
     * the slot FROM bound to {@code from} where it occurs (null: it does not). The columns computed beside the key
     * have the reserved prefix: a key column may have any other name.
     */
    private Statement historyRules(String step, ResolvedModel m, String versions, Object from,
                                   Object adoptedThrough) {
        ColumnNames n = m.meta();
        String keys = d.list(m.keys(), "h");
        String os = d.col("h", n.openedSeq());
        String vf = d.col("h", n.validFrom());
        String vt = d.col("h", n.validTo());
        String op = "CASE WHEN " + isOpen(m, vt) + " THEN 1 ELSE 0 END";
        String window = " OVER (PARTITION BY " + keys + " ORDER BY " + d.ordered(m, os) + ", " + vf + ", " + op
                + ", " + vt + ")";
        String v = "SELECT " + keys + ", " + os + " AS itersnap_os, " + d.col("h", n.closedSeq()) + " AS itersnap_cs, " + vf
                + " AS itersnap_vf, " + vt + " AS itersnap_vt, " + d.col("h", n.changeType()) + " AS itersnap_ct, " + op + " AS itersnap_op, SUM(" + op
                + ") OVER (PARTITION BY " + keys + ") AS itersnap_open_count, LEAD(" + os + ")" + window + " AS itersnap_next_os, LEAD("
                + vf + ")" + window + " AS itersnap_next_vf FROM " + versions;
        String o = "v.itersnap_os";
        String nos = "v.itersnap_next_os";
        String cs = "v.itersnap_cs";
        // the adopted versions were kept as they were (also with an audit's problems, an out-of-order timeline among
        // them): a version the adoption opened is not held to the rules after the first two when the adoption also
        // closed it, when the next version is adopted too, or when it is the open last one
        String kept = "";
        Map<String, Object> values = new LinkedHashMap<>();
        if (from != null) {
            values.put(FROM, from);
        }
        if (adoptedThrough != null) {
            values.put(ADOPTED, adoptedThrough);
            String a = d.ordered(m, d.param(m.sequenceColumn(), ADOPTED));
            kept = " WHEN " + d.ordered(m, o) + " <= " + a + " AND ((" + cs + " IS NOT NULL AND " + d.ordered(m, cs)
                    + " <= " + a + ") OR (" + nos + " IS NOT NULL AND " + d.ordered(m, nos) + " <= " + a + ") OR ("
                    + nos + " IS NULL AND " + cs + " IS NULL)) THEN NULL";
        }
        String rule = "CASE WHEN v.itersnap_op = 1 AND " + cs + " IS NOT NULL THEN '" + HistoryRule.REOPENED.code()
                + "' WHEN v.itersnap_op = 0 AND " + cs + " IS NULL THEN '" + HistoryRule.CLOSED_WITHOUT_BATCH.code()
                + "'" + kept
                + " WHEN v.itersnap_open_count > 1 AND v.itersnap_op = 1 THEN '" + HistoryRule.OPEN_TWICE.code()
                + "' WHEN v.itersnap_op = 1 AND " + nos + " IS NOT NULL THEN '" + HistoryRule.OPEN_NOT_LAST.code()
                + "' WHEN v.itersnap_op = 1 THEN NULL"
                + " WHEN v.itersnap_ct = 'update' AND (" + nos + " IS NULL OR " + nos + " <> " + cs + ") THEN '"
                + HistoryRule.SUCCESSOR_MISSING.code()
                + "' WHEN " + nos + " IS NULL AND (v.itersnap_ct IS NULL OR v.itersnap_ct <> 'delete') THEN '"
                + HistoryRule.CLOSED_LAST.code()
                + "' WHEN " + nos + " IS NOT NULL AND " + d.ordered(m, nos) + " < " + d.ordered(m, cs) + " THEN '"
                + HistoryRule.SUCCESSOR_EARLY.code()
                + "' WHEN v.itersnap_vt < v.itersnap_vf THEN '" + HistoryRule.INVERTED.code()
                + "' WHEN v.itersnap_next_vf IS NOT NULL AND v.itersnap_next_vf < v.itersnap_vt THEN '" + HistoryRule.OVERLAP.code()
                + "' WHEN v.itersnap_ct = 'update' AND v.itersnap_next_vf IS NOT NULL AND v.itersnap_next_vf <> v.itersnap_vt THEN '"
                + HistoryRule.GAP.code() + "' END";
        String sql = "SELECT " + d.list(m.keys(), "r") + ", r.itersnap_broken, r.itersnap_os FROM (SELECT " + d.list(m.keys(), "v")
                + ", " + rule + " AS itersnap_broken, v.itersnap_os FROM (" + v + ") v) r WHERE r.itersnap_broken IS NOT NULL";
        return values.isEmpty() ? Statement.of(step, sql) : statement(step, sql, values);
    }

    /**
     * The versions the history holds opened by each of {@code sequences} (bound values; empty: by every sequence), as
     * rows (opened sequence, count): a grouped count through the history's index on the opened sequence that grows
     * with the batches asked for (every version with none).
     */
    public Statement openedVersions(ResolvedModel m, List<?> sequences) {
        String os = d.col("h", m.meta().openedSeq());
        Map<String, Object> values = new LinkedHashMap<>();
        List<String> in = new ArrayList<>();
        for (int i = 0; i < sequences.size(); i++) {
            values.put("seq" + i, sequences.get(i));
            in.add(d.param(m.sequenceColumn(), "seq" + i));
        }
        String sql = "SELECT " + os + ", COUNT(*) FROM " + d.table(m.target()) + " h WHERE " + os + (in.isEmpty()
                ? " IS NOT NULL" : " IN (" + String.join(", ", in) + ")") + " GROUP BY " + os;
        return values.isEmpty() ? Statement.of("check history", sql) : statement("check history", sql, values);
    }

    /**
     * A query over the history giving the state as of a business time or a batch, with the point written as a typed
     * literal (read through the column's type first), so that the text can define a view.
     *
     * @throws IllegalArgumentException when the point is not a value of the column's type
     */
    public Statement asOf(ResolvedModel m, AsOf point) {
        ColumnNames n = m.meta();
        boolean bySequence = point instanceof AsOf.Sequence;
        Object value = bySequence && m.sequenceKey() != null
                ? m.sequenceKey().keyOf(point.value()) : point.value();
        String literal = literal(bySequence ? m.sequenceColumn() : m.updatedAtColumn(), value);
        String from = bySequence ? n.openedSeq() : n.validFrom();
        String to = bySequence ? n.closedSeq() : n.validTo();
        String lit = bySequence ? d.ordered(m, literal) : literal;
        String in = bySequence ? d.ordered(m, d.col("h", from)) : d.col("h", from);
        String out = bySequence ? d.ordered(m, d.col("h", to)) : d.col("h", to);
        return Statement.of("point in time", "SELECT h.* FROM " + d.table(m.target()) + " h WHERE " + in + " <= " + lit
                + " AND (" + (bySequence ? d.col("h", to) + " IS NULL" : isOpen(m, d.col("h", to))) + " OR " + out
                + " > "
                + lit + ")"
                + (m.deletionRecords() ? " AND " + d.col("h", n.isDeleted()) + " = FALSE" : ""));
    }

    /** What an open version carries in valid_to: NULL, or {@code valid_to_current} as a typed literal. */
    public String openValidTo(ResolvedModel m) {
        Object current = m.validToCurrent();
        return current == null ? "NULL" : literal(m.updatedAtColumn(), current);
    }

    /** {@code validTo}, an expression of a version's valid_to, marks it open (NULL, or valid_to_current). */
    public String isOpen(ResolvedModel m, String validTo) {
        Object current = m.validToCurrent();
        return current == null ? validTo + " IS NULL" : validTo + " = " + literal(m.updatedAtColumn(), current);
    }

    /** A valid_to value that is NULL for an open version, as the history stores it. */
    public String orOpen(ResolvedModel m, String validTo) {
        return m.validToCurrent() == null ? validTo : "COALESCE(" + validTo + ", " + openValidTo(m) + ")";
    }

    /**
     * Makes every open version (no closing sequence) carry what {@link #openValidTo} says: converts a history whose
     * open versions carry NULL or another valid_to_current.
     */
    public Statement markOpenVersions(ResolvedModel m) {
        ColumnNames n = m.meta();
        String vt = d.quote(n.validTo());
        String other = m.validToCurrent() == null ? vt + " IS NOT NULL"
                : "(" + vt + " IS NULL OR " + vt + " <> " + openValidTo(m) + ")";
        return Statement.of("mark open versions", "UPDATE " + d.table(m.target()) + " SET " + vt + " = "
                + openValidTo(m) + " WHERE " + d.quote(n.closedSeq()) + " IS NULL AND " + other);
    }

    /** A typed SQL literal of a value read by {@link ValueType#coerce} (numbers, dates, times, strings escaped). */
    String literal(SourceColumn type, Object value) {
        ValueType t = type.valueType();
        String text = t.format(t.coerce(value));
        if (t == ValueType.INTEGER || t == ValueType.DECIMAL) {
            return text;
        }
        if (t.temporal()) {
            text = text.replace('T', ' ');
        }
        return "CAST(" + d.stringLiteral(text) + " AS " + d.columnType(type) + ")";
    }

    /**
     * A text expression {@code text} holding a value's canonical text (the ledger's form) read as the type of
     * {@code type}, as {@link #literal} reads a constant: numbers and strings cast, times with the ISO {@code T}
     * replaced first.
     */
    String typedFromText(SourceColumn type, String text) {
        String from = type.valueType().temporal() ? "REPLACE(" + text + ", 'T', ' ')" : text;
        return "CAST(" + from + " AS " + d.columnType(type) + ")";
    }

    /**
     * Creates a view {@code view} of {@code query}.
     */
    public Statement createView(TableName view, Statement query) {
        return Statement.builder("create view").sql("CREATE VIEW " + d.table(view) + " AS ").sql(query).build();
    }
}
