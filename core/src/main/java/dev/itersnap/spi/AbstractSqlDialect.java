package dev.itersnap.spi;

import dev.itersnap.core.ColumnNames;
import dev.itersnap.core.TableName;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * ANSI SQL for every engine step, built from a few primitives that dialects override ({@link #quote},
 * {@link #md5Hex}, {@link #toText}, {@link #jsonObject}, {@link #isDistinct}, {@link #longTextType},
 * {@link #columnType}). Works as is on databases with {@code MERGE}, window functions and
 * {@code IS DISTINCT FROM}; a dialect overrides a step only where its SQL differs.
 *
 * <p>Names: {@code t} is the history table, {@code s} the stage, {@code w} the work table. Internal columns of the
 * scratch tables start with {@code itersnap_} (source columns may not).
 */
public abstract class AbstractSqlDialect implements Dialect {
    /** Internal column: the row is an explicit delete. */
    public static final String DEL = "itersnap_del";
    /** Internal column: why the row is set aside, or NULL. */
    public static final String REJECT = "itersnap_reject";
    /** Internal column: the row was reproduced from the history. */
    public static final String REPRO = "itersnap_repro";
    /** The row of {@link #countBatch} that counts the batch's rows in the stage (the work table may leave some out). */
    public static final String SOURCE_ROWS = "itersnap_source_rows";
    /** Internal column of the pending table: the deletion time the ledger recorded for the batch. */
    public static final String DELTIME = "itersnap_deltime";
    /** Internal column: what the batch does with the row (insert, change, return, delete, noop). */
    public static final String ACTION = "itersnap_action";
    /** Internal column: valid_from of the version the row opens. */
    public static final String VFROM = "itersnap_vfrom";
    /** Internal column: the row goes to the archive. */
    public static final String KEEP = "itersnap_keep";
    /** Internal column: changed_attributes of the version the row closes. */
    public static final String CHANGED = "itersnap_changed";
    /** Prefix of the merge-key columns. */
    public static final String MERGE_KEY = "itersnap_mk";

    // ---------------------------------------------------------------- primitives

    @Override
    public String quote(String identifier) {
        return '"' + identifier.replace("\"", "\"\"") + '"';
    }

    /** A qualified, quoted table name. */
    protected String table(TableName name) {
        return name.parts().stream().map(this::quote).collect(Collectors.joining("."));
    }

    /** {@code alias.column}, quoted. */
    protected String col(String alias, String column) {
        return alias + "." + quote(column);
    }

    /** An expression: lower-case hex MD5 of a text expression. */
    protected abstract String md5Hex(String textExpression);

    /** An expression converting any value to text. */
    protected String toText(String expression) {
        return "CAST(" + expression + " AS VARCHAR)";
    }

    /** An expression building a JSON object text from names and value expressions. */
    protected abstract String jsonObject(List<String> names, List<String> expressions);

    /** A boolean expression true when {@code a} and {@code b} differ, NULLs compared as values. */
    protected String isDistinct(String a, String b) {
        return "(" + a + " IS DISTINCT FROM " + b + ")";
    }

    /** Type of long text columns (error records, changed_attributes). */
    protected String longTextType() {
        return "VARCHAR(1000000)";
    }

    /** Type of changed_attributes. */
    protected String changedAttributesType() {
        return longTextType();
    }

    /** Converts the text literal expression of changed attributes into {@link #changedAttributesType()}. */
    protected String changedAttributesValue(String textExpression) {
        return textExpression;
    }

    /** A bound parameter of the given column's type. */
    protected String param(SourceColumn type) {
        return "CAST(? AS " + columnType(type) + ")";
    }

    /**
     * A sequence expression as it must appear on both sides of {@code <, <=, >, >=}: string sequences compare by code
     * point, so a dialect whose strings compare otherwise (a linguistic collation, UTF-16 code units) makes the
     * comparison binary here.
     */
    protected String ordered(ResolvedModel m, String sequenceExpression) {
        return sequenceExpression;
    }

    /** String concatenation. */
    protected String concat(List<String> parts) {
        return "(" + String.join(" || ", parts) + ")";
    }

    protected String keyJoin(ResolvedModel m, String a, String b) {
        return m.keys().stream().map(k -> col(a, k) + " = " + col(b, k)).collect(Collectors.joining(" AND "));
    }

    protected String list(List<String> columns, String alias) {
        return columns.stream().map(c -> alias == null ? quote(c) : col(alias, c)).collect(Collectors.joining(", "));
    }

    /** A string literal; a dialect whose literals treat more characters specially escapes them too. */
    protected String stringLiteral(String s) {
        return "'" + s.replace("'", "''") + "'";
    }

    /** NOT a deletion record (always true without deletion records). */
    protected String notDeletionRecord(ResolvedModel m, String alias) {
        return m.deletionRecords() ? col(alias, m.meta().isDeleted()) + " = FALSE" : "1 = 1";
    }

    /** A bound parameter holding the sequence's canonical text (the ledger's sequence_value). */
    protected String sequenceTextParam() {
        return "CAST(? AS VARCHAR(256))";
    }

    /** dbt_scd_id from key, updated_at and the bound sequence text, plus a marker. */
    protected String scdId(ResolvedModel m, String alias, String updatedAtExpr, String marker) {
        List<String> parts = new ArrayList<>();
        for (String k : m.keys()) {
            parts.add("COALESCE(" + toText(col(alias, k)) + ", '')");
            parts.add("'|'");
        }
        parts.add("COALESCE(" + toText(updatedAtExpr) + ", '')");
        parts.add("'|'");
        parts.add(sequenceTextParam());
        if (marker != null) {
            parts.add(stringLiteral("|" + marker));
        }
        return md5Hex(concat(parts));
    }

    // ---------------------------------------------------------------- DDL

    @Override
    public List<String> createMetadata(ResolvedModel m) {
        String text = longTextType();
        List<String> ddl = new ArrayList<>();
        ddl.add("CREATE SCHEMA IF NOT EXISTS " + quote(m.metadataSchema()));
        ddl.add("CREATE TABLE IF NOT EXISTS " + table(m.metaTable("itersnap_ledger")) + " (" + cols(m,
                "model VARCHAR(128) NOT NULL", "sequence_value VARCHAR(256) NOT NULL", "run_id VARCHAR(36) NOT NULL",
                "applied_at TIMESTAMP NOT NULL", "source_rows BIGINT NOT NULL", "duplicate_rows BIGINT NOT NULL",
                "inserted_rows BIGINT NOT NULL",
                "updated_rows BIGINT NOT NULL", "deleted_rows BIGINT NOT NULL", "rejected_rows BIGINT NOT NULL",
                "deletion_time VARCHAR(64)", "reproduced BOOLEAN NOT NULL")
                + ", PRIMARY KEY (" + quote(m.id("model")) + ", " + quote(m.id("sequence_value")) + "))");
        ddl.add("CREATE TABLE IF NOT EXISTS " + table(m.metaTable("itersnap_runs")) + " (" + cols(m,
                "run_id VARCHAR(36) NOT NULL PRIMARY KEY", "model VARCHAR(128) NOT NULL", "operation VARCHAR(16) NOT NULL",
                "holder VARCHAR(256)", "started_at TIMESTAMP NOT NULL", "finished_at TIMESTAMP",
                "status VARCHAR(16) NOT NULL", "batches_applied INT", "late_batch BOOLEAN",
                "replay_point VARCHAR(256)", "error_message VARCHAR(4000)", "logic " + text) + ")");
        ddl.add("CREATE TABLE IF NOT EXISTS " + table(m.metaTable("itersnap_errors")) + " (" + cols(m,
                "model VARCHAR(128) NOT NULL", "run_id VARCHAR(36) NOT NULL", "sequence_value VARCHAR(256)",
                "reason VARCHAR(32) NOT NULL", "record " + text, "logged_at TIMESTAMP NOT NULL") + ")");
        ddl.add("CREATE TABLE IF NOT EXISTS " + table(m.metaTable("itersnap_columns")) + " (" + cols(m,
                "model VARCHAR(128) NOT NULL", "column_name VARCHAR(256) NOT NULL", "introduced_seq VARCHAR(256)",
                "in_source BOOLEAN NOT NULL") + ", PRIMARY KEY (" + quote(m.id("model")) + ", "
                + quote(m.id("column_name")) + "))");
        ddl.add("CREATE TABLE IF NOT EXISTS " + table(m.metaTable("itersnap_lock")) + " (" + cols(m,
                "model VARCHAR(128) NOT NULL PRIMARY KEY", "holder VARCHAR(256)", "acquired_at TIMESTAMP") + ")");
        return ddl;
    }

    /** Column definitions "name TYPE ..." with the name folded and quoted. */
    private String cols(ResolvedModel m, String... defs) {
        List<String> out = new ArrayList<>();
        for (String d : defs) {
            int sp = d.indexOf(' ');
            out.add(quote(m.id(d.substring(0, sp))) + d.substring(sp));
        }
        return String.join(", ", out);
    }

    @Override
    public List<String> createHistory(ResolvedModel m) {
        ColumnNames n = m.meta();
        String upd = columnType(m.updatedAtColumn());
        String seq = columnType(m.sequenceColumn());
        List<String> defs = new ArrayList<>();
        for (SourceColumn c : m.sourceColumns()) {
            defs.add(quote(c.name()) + " " + columnType(c));
        }
        defs.add(quote(n.scdId()) + " VARCHAR(64)");
        defs.add(quote(n.updatedAt()) + " " + upd);
        defs.add(quote(n.validFrom()) + " " + upd);
        defs.add(quote(n.validTo()) + " " + upd);
        defs.add(quote(n.changeType()) + " VARCHAR(16)");
        defs.add(quote(n.changedAttributes()) + " " + changedAttributesType());
        if (m.deletionRecords()) {
            defs.add(quote(n.isDeleted()) + " BOOLEAN");
        }
        defs.add(quote(n.openedSeq()) + " " + seq);
        defs.add(quote(n.closedSeq()) + " " + seq);
        String t = table(m.target());
        String base = m.target().table();
        List<String> ddl = new ArrayList<>();
        if (m.target().schema() != null) {
            ddl.add("CREATE SCHEMA IF NOT EXISTS " + quote(m.target().schema()));
        }
        ddl.add("CREATE TABLE " + t + " (" + String.join(", ", defs) + ")");
        List<String> keyCols = new ArrayList<>(m.keys());
        keyCols.add(n.validTo());
        ddl.add("CREATE INDEX " + indexName(m, base, "key") + " ON " + t + " (" + list(keyCols, null) + ")");
        ddl.add("CREATE INDEX " + indexName(m, base, "opened") + " ON " + t + " (" + quote(n.openedSeq()) + ")");
        ddl.add("CREATE INDEX " + indexName(m, base, "closed") + " ON " + t + " (" + quote(n.closedSeq()) + ")");
        return ddl;
    }

    /** A quoted index name (qualified with the table's schema where the database needs it). */
    protected String indexName(ResolvedModel m, String table, String suffix) {
        String name = m.id(table + "_itersnap_" + suffix);
        return m.target().schema() != null ? quote(m.target().schema()) + "." + quote(name) : quote(name);
    }

    @Override
    public String addColumn(ResolvedModel m, TableName table, SourceColumn column) {
        return "ALTER TABLE " + table(table) + " ADD COLUMN " + quote(column.name()) + " " + columnType(column);
    }

    @Override
    public List<String> createArchive(ResolvedModel m) {
        List<String> cols = new ArrayList<>();
        for (SourceColumn c : m.sourceColumns()) {
            cols.add(quote(c.name()) + " " + columnType(c));
        }
        cols.add(quote(m.id(DEL)) + " BOOLEAN");
        cols.add(quote(m.id(REJECT)) + " VARCHAR(32)");
        List<String> keyCols = new ArrayList<>();
        keyCols.add(m.sequenceBy());
        keyCols.addAll(m.keys());
        List<String> ddl = new ArrayList<>(List.of(
                "CREATE TABLE IF NOT EXISTS " + table(m.archive()) + " (" + String.join(", ", cols) + ")",
                "CREATE INDEX IF NOT EXISTS " + quote(m.id(m.archive().table() + "_ix")) + " ON " + table(m.archive())
                        + " (" + list(keyCols, null) + ")"));
        if (!transactionalDml()) {
            // the pending table (see ResolvedModel#pending): stage rows of aged-out batches plus their deletion time
            List<String> pending = new ArrayList<>(cols);
            pending.add(quote(m.id(REPRO)) + " BOOLEAN");
            pending.add(quote(m.id(DELTIME)) + " VARCHAR(64)");
            ddl.add("CREATE TABLE IF NOT EXISTS " + table(m.pending()) + " (" + String.join(", ", pending) + ")");
        }
        return ddl;
    }

    /**
     * How a scratch table (stage, work) is created, up to its name: {@code CREATE TABLE }. Scratch tables are
     * rebuilt by every run and never read by a later one, so a dialect may create them without crash safety.
     */
    protected String createScratchTable() {
        return "CREATE TABLE ";
    }

    @Override
    public List<String> createScratch(ResolvedModel m) {
        List<String> src = new ArrayList<>();
        for (SourceColumn c : m.sourceColumns()) {
            src.add(quote(c.name()) + " " + columnType(c));
        }
        String upd = columnType(m.updatedAtColumn());
        List<String> stage = new ArrayList<>(src);
        stage.add(quote(m.id(DEL)) + " BOOLEAN");
        stage.add(quote(m.id(REJECT)) + " VARCHAR(32)");
        stage.add(quote(m.id(REPRO)) + " BOOLEAN");
        List<String> work = new ArrayList<>(src);
        work.add(quote(m.id(DEL)) + " BOOLEAN");
        work.add(quote(m.id(REJECT)) + " VARCHAR(32)");
        work.add(quote(m.id(ACTION)) + " VARCHAR(8)");
        work.add(quote(m.id(KEEP)) + " BOOLEAN");
        work.add(quote(m.id(VFROM)) + " " + upd);
        work.add(quote(m.id(CHANGED)) + " " + changedAttributesType());
        List<String> keyCols = new ArrayList<>();
        keyCols.add(m.sequenceBy());
        keyCols.addAll(m.keys());
        return List.of(
                "DROP TABLE IF EXISTS " + table(m.stage()),
                "DROP TABLE IF EXISTS " + table(m.work()),
                createScratchTable() + table(m.stage()) + " (" + String.join(", ", stage) + ")",
                createScratchTable() + table(m.work()) + " (" + String.join(", ", work) + ")",
                "CREATE INDEX " + quote(m.id(m.stage().table() + "_ix")) + " ON " + table(m.stage()) + " ("
                        + list(keyCols, null) + ")",
                "CREATE INDEX " + quote(m.id(m.work().table() + "_ix")) + " ON " + table(m.work()) + " ("
                        + list(m.keys(), null) + ")");
    }

    // ---------------------------------------------------------------- reading the source

    /** {@code SELECT * FROM name} with a plain, optionally qualified and quoted, table name and nothing else. */
    private static final java.util.regex.Pattern PLAIN_TABLE_SOURCE = java.util.regex.Pattern.compile(
            "\\s*select\\s+\\*\\s+from\\s+((?:\"(?:[^\"]|\"\")+\"|[A-Za-z_][A-Za-z0-9_$]*)"
                    + "(?:\\s*\\.\\s*(?:\"(?:[^\"]|\"\")+\"|[A-Za-z_][A-Za-z0-9_$]*)){0,2})\\s*",
            java.util.regex.Pattern.CASE_INSENSITIVE);

    /**
     * The source as a relation to select from: the table name itself when the source query is exactly
     * {@code SELECT * FROM <table>} (so that the database sees the table and its indexes: H2 does not use an index
     * through a derived table), otherwise the query as a derived table {@code (<source>)}. Both give the same rows and
     * columns; the caller adds the alias.
     */
    protected String sourceRelation(ResolvedModel m) {
        java.util.regex.Matcher plain = PLAIN_TABLE_SOURCE.matcher(m.settings().source());
        return plain.matches() ? plain.group(1) : "(" + m.settings().source() + ")";
    }

    @Override
    public String discoverSequences(ResolvedModel m) {
        return "SELECT DISTINCT " + col("s", m.sequenceBy()) + " FROM " + sourceRelation(m) + " s";
    }

    /** An expression usable in PARTITION BY for a column of this type (e.g. text for types without equality). */
    protected String partitionable(SourceColumn column, String expression) {
        return expression;
    }

    /**
     * {@inheritDoc} Binds: the lowest sequence to read.
     * <p>Rows that repeat another row of the batch in every column are exact copies (a file loaded twice): all but
     * one are marked {@code duplicate_copy} and applied once. Rows of one key that differ are {@code duplicate_key}.
     */
    @Override
    public String stageSource(ResolvedModel m, boolean includeNullSequence) {
        String deleteWhen = m.settings().deleteWhen();
        String del = deleteWhen == null ? "FALSE" : "CASE WHEN (" + deleteWhen + ") THEN TRUE ELSE FALSE END";
        String nullKey = m.keys().stream().map(k -> col("s", k) + " IS NULL").collect(Collectors.joining(" OR "));
        List<String> partition = new ArrayList<>();
        partition.add(col("s", m.sequenceBy()));
        m.keys().forEach(k -> partition.add(col("s", k)));
        // sequence and key first: the two windows then share one sort, and an index on (sequence, key) of the
        // source can deliver the rows presorted
        List<String> everyColumn = new ArrayList<>();
        everyColumn.add(partitionable(m.sequenceColumn(), col("s0", m.sequenceBy())));
        for (String k : m.keys()) {
            everyColumn.add(partitionable(m.sourceColumn(k), col("s0", k)));
        }
        for (SourceColumn c : m.sourceColumns()) {
            if (!c.name().equals(m.sequenceBy()) && !m.keys().contains(c.name())) {
                everyColumn.add(partitionable(c, col("s0", c.name())));
            }
        }
        String copyNo = quote(m.id("itersnap_copy_no"));
        String reject = "CASE WHEN " + col("s", m.sequenceBy()) + " IS NULL THEN 'null_sequence'"
                + " WHEN " + nullKey + " THEN 'null_key'"
                + " WHEN SUM(CASE WHEN s." + copyNo + " = 1 THEN 1 ELSE 0 END) OVER (PARTITION BY "
                + String.join(", ", partition) + ") > 1 THEN 'duplicate_key'"
                + " WHEN s." + copyNo + " > 1 THEN 'duplicate_copy'"
                + " WHEN " + col("s", m.updatedAt()) + " IS NULL THEN 'null_updated_at' END";
        String rel = sourceRelation(m);
        String from = rel + " s0 WHERE " + ordered(m, col("s0", m.sequenceBy())) + " >= "
                + ordered(m, param(m.sequenceColumn()));
        if (includeNullSequence) {
            // a separate branch: "seq >= ? OR seq IS NULL" keeps a database from using an index on the sequence
            from = "(SELECT " + list(m.sourceNames(), "s0") + " FROM " + from + " UNION ALL SELECT "
                    + list(m.sourceNames(), "s0") + " FROM " + rel + " s0 WHERE " + col("s0", m.sequenceBy())
                    + " IS NULL) s0";
        }
        String numbered = "SELECT " + list(m.sourceNames(), "s0") + ", ROW_NUMBER() OVER (PARTITION BY "
                + String.join(", ", everyColumn) + " ORDER BY " + col("s0", m.sequenceBy()) + ") AS " + copyNo
                + " FROM " + from;
        return "INSERT INTO " + table(m.stage()) + " (" + list(m.sourceNames(), null) + ", " + quote(m.id(DEL)) + ", "
                + quote(m.id(REJECT)) + ", " + quote(m.id(REPRO)) + ") SELECT " + list(m.sourceNames(), "s") + ", "
                + del + ", " + reject + ", FALSE FROM (" + numbered + ") s";
    }

    /**
     * {@inheritDoc}
     * <p>Two parts: the versions the batch left live (full picture) or opened, minus the keys the archive holds for
     * it, and the archive's rows of the batch (set-aside rows, explicit deletes, rows that changed nothing but differ
     * from the live version). Deletions by absence need no row: the key is absent again.
     */
    @Override
    public String stageReproduced(ResolvedModel m, List<String> notYetIntroduced, boolean fullPicture) {
        ColumnNames n = m.meta();
        String seqParam = param(m.sequenceColumn());
        List<String> fromHistory = new ArrayList<>();
        List<String> fromArchive = new ArrayList<>();
        for (String c : m.sourceNames()) {
            if (c.equals(m.sequenceBy())) {
                fromHistory.add(seqParam);
                fromArchive.add(col("a", c));
            } else if (notYetIntroduced.contains(c)) {
                fromHistory.add("NULL");
                fromArchive.add("NULL");
            } else {
                fromHistory.add(col("h", c));
                fromArchive.add(col("a", c));
            }
        }
        String live = fullPicture
                ? ordered(m, col("h", n.openedSeq())) + " <= " + ordered(m, seqParam) + " AND ("
                        + col("h", n.closedSeq()) + " IS NULL OR " + ordered(m, col("h", n.closedSeq())) + " > "
                        + ordered(m, seqParam) + ")"
                : col("h", n.openedSeq()) + " = " + seqParam;
        String archived = "SELECT 1 FROM " + table(m.archive()) + " a WHERE " + col("a", m.sequenceBy()) + " = "
                + seqParam + " AND " + keyJoin(m, "a", "h");
        return "INSERT INTO " + table(m.stage()) + " (" + list(m.sourceNames(), null) + ", " + quote(m.id(DEL))
                + ", " + quote(m.id(REJECT)) + ", " + quote(m.id(REPRO)) + ") SELECT " + String.join(", ", fromHistory)
                + ", FALSE, NULL, TRUE FROM " + table(m.target()) + " h WHERE " + live + " AND "
                + notDeletionRecord(m, "h") + " AND NOT EXISTS (" + archived + ") UNION ALL SELECT "
                + String.join(", ", fromArchive) + ", " + col("a", m.id(DEL)) + ", " + col("a", m.id(REJECT))
                + ", TRUE FROM " + table(m.archive()) + " a WHERE " + col("a", m.sequenceBy()) + " = " + seqParam;
    }

    @Override
    public String archiveBatch(ResolvedModel m) {
        return "INSERT INTO " + table(m.archive()) + " (" + list(m.sourceNames(), null) + ", " + quote(m.id(DEL))
                + ", " + quote(m.id(REJECT)) + ") SELECT " + list(m.sourceNames(), "w") + ", " + col("w", m.id(DEL))
                + ", CASE WHEN " + col("w", m.id(REJECT)) + " = 'updated_at_regression' THEN NULL ELSE "
                + col("w", m.id(REJECT)) + " END FROM " + table(m.work()) + " w WHERE " + col("w", m.id(KEEP));
    }

    // ---------------------------------------------------------------- rollback

    /** {@inheritDoc} Binds of each statement: the replay point (none for the column resets). */
    @Override
    public List<String> rollback(ResolvedModel m, List<String> introducedColumns) {
        ColumnNames n = m.meta();
        String t = table(m.target());
        String p = ordered(m, param(m.sequenceColumn()));
        List<String> sql = new ArrayList<>();
        sql.add("DELETE FROM " + t + " WHERE " + ordered(m, quote(n.openedSeq())) + " >= " + p);
        sql.add("UPDATE " + t + " SET " + quote(n.validTo()) + " = NULL, " + quote(n.changeType()) + " = 'insert', "
                + quote(n.changedAttributes()) + " = NULL, " + quote(n.closedSeq()) + " = NULL WHERE "
                + ordered(m, quote(n.closedSeq())) + " >= " + p);
        for (String c : introducedColumns) {
            sql.add("UPDATE " + t + " SET " + quote(c) + " = NULL");
        }
        sql.add("DELETE FROM " + table(m.archive()) + " WHERE " + ordered(m, quote(m.sequenceBy())) + " >= " + p);
        return sql;
    }

    // ---------------------------------------------------------------- applying one batch

    /**
     * {@inheritDoc} Binds: the batch's sequence.
     * <p>Rows that change nothing are left out of the work table where nothing reads them
     * ({@link #unchangedRowsLeftOut}).
     */
    @Override
    public String classifyBatch(ResolvedModel m, List<String> untracked) {
        ColumnNames n = m.meta();
        List<String> tracked = m.tracked().stream().filter(c -> !untracked.contains(c)).toList();
        String firstKey = m.keys().get(0);
        String hasCur = "(" + col("c", firstKey) + " IS NOT NULL)";
        String curDel = m.deletionRecords() ? "COALESCE(" + col("c", n.isDeleted()) + ", FALSE)" : "FALSE";
        String change;
        List<String> diffParts = new ArrayList<>();
        for (String c : tracked) {
            diffParts.add("CASE WHEN " + isDistinct(col("c", c), col("s", c)) + " THEN "
                    + stringLiteral(",\"" + c + "\"") + " ELSE '' END");
        }
        if (m.settings().strategy() == dev.itersnap.core.Strategy.TIMESTAMP) {
            change = "(" + col("s", m.updatedAt()) + " > " + col("c", n.updatedAt()) + ")";
        } else {
            change = tracked.isEmpty() ? "FALSE"
                    : "(" + tracked.stream().map(c -> isDistinct(col("c", c), col("s", c)))
                    .collect(Collectors.joining(" OR ")) + ")";
        }
        String changed = diffParts.isEmpty() ? "'[]'"
                : concat(List.of("'['", "SUBSTRING(" + concat(diffParts) + " FROM 2)", "']'"));
        List<String> sameParts = new ArrayList<>();
        for (String c : m.sourceNames()) {
            if (!c.equals(m.sequenceBy()) && !m.keys().contains(c) && !untracked.contains(c)) {
                sameParts.add("NOT " + isDistinct(col("c", c), col("s", c)));
            }
        }
        String same = sameParts.isEmpty() ? "TRUE" : "(" + String.join(" AND ", sameParts) + ")";
        String lastEnd = "CASE WHEN " + col("c", firstKey) + " IS NULL THEN (SELECT MAX(" + col("h", n.validTo())
                + ") FROM " + table(m.target()) + " h WHERE " + keyJoin(m, "h", "s") + ") END";
        String inner = "SELECT " + list(m.sourceNames(), "s") + ", " + col("s", m.id(DEL)) + " AS "
                + quote(m.id("x_del")) + ", " + col("s", m.id(REJECT)) + " AS " + quote(m.id("x_rej")) + ", "
                + hasCur + " AS " + quote(m.id("x_has")) + ", " + curDel + " AS " + quote(m.id("x_cdel")) + ", "
                + col("c", n.validFrom()) + " AS " + quote(m.id("x_cvf")) + ", " + change + " AS "
                + quote(m.id("x_chg")) + ", " + same + " AS " + quote(m.id("x_same")) + ", " + changed + " AS "
                + quote(m.id("x_changed")) + ", " + lastEnd + " AS "
                + quote(m.id("x_end")) + " FROM " + table(m.stage()) + " s LEFT JOIN " + table(m.target()) + " c ON "
                + keyJoin(m, "c", "s") + " AND " + col("c", n.validTo()) + " IS NULL WHERE "
                + col("s", m.sequenceBy()) + " = " + param(m.sequenceColumn());
        String x = "x";
        String u = col(x, m.updatedAt());
        String regression = col(x, m.id("x_has")) + " AND NOT " + col(x, m.id("x_cdel")) + " AND ("
                + col(x, m.id("x_chg")) + " OR " + col(x, m.id("x_del")) + ") AND " + u + " < " + col(x, m.id("x_cvf"));
        String reject = "CASE WHEN " + col(x, m.id("x_rej")) + " IS NOT NULL THEN " + col(x, m.id("x_rej"))
                + " WHEN " + regression + " THEN 'updated_at_regression' END";
        String action = "CASE WHEN " + col(x, m.id("x_rej")) + " IS NOT NULL THEN NULL WHEN " + regression
                + " THEN NULL WHEN " + col(x, m.id("x_del")) + " THEN (CASE WHEN " + col(x, m.id("x_has"))
                + " AND NOT " + col(x, m.id("x_cdel")) + " THEN 'delete' ELSE 'noop' END)"
                + " WHEN NOT " + col(x, m.id("x_has")) + " THEN 'insert'"
                + " WHEN " + col(x, m.id("x_cdel")) + " THEN 'return'"
                + " WHEN " + col(x, m.id("x_chg")) + " THEN 'change' ELSE 'noop' END";
        String keep = "CASE WHEN " + col(x, m.id("x_rej")) + " = 'duplicate_copy' THEN FALSE"
                + " WHEN " + col(x, m.id("x_rej")) + " IS NOT NULL OR " + col(x, m.id("x_del")) + " THEN TRUE"
                + " WHEN " + regression + " THEN TRUE WHEN NOT " + col(x, m.id("x_has")) + " OR "
                + col(x, m.id("x_cdel")) + " OR " + col(x, m.id("x_chg")) + " THEN FALSE ELSE "
                + (m.settings().hardDeletes().fullBatches() ? "NOT " + col(x, m.id("x_same")) : "TRUE") + " END";
        String vfrom = "CASE WHEN NOT " + col(x, m.id("x_has")) + " THEN (CASE WHEN " + col(x, m.id("x_end"))
                + " IS NOT NULL AND " + col(x, m.id("x_end")) + " > " + u + " THEN " + col(x, m.id("x_end"))
                + " ELSE " + u + " END) WHEN " + col(x, m.id("x_cdel")) + " THEN (CASE WHEN " + col(x, m.id("x_cvf"))
                + " > " + u + " THEN " + col(x, m.id("x_cvf")) + " ELSE " + u + " END) ELSE " + u + " END";
        return "INSERT INTO " + table(m.work()) + " (" + list(m.sourceNames(), null) + ", " + quote(m.id(DEL)) + ", "
                + quote(m.id(REJECT)) + ", " + quote(m.id(ACTION)) + ", " + quote(m.id(KEEP)) + ", "
                + quote(m.id(VFROM)) + ", " + quote(m.id(CHANGED)) + ") SELECT " + list(m.sourceNames(), x) + ", "
                + col(x, m.id("x_del")) + ", " + reject + ", " + action + ", " + keep + ", " + vfrom + ", " + changedAttributesValue(col(x, m.id("x_changed")))
                + " FROM (" + inner + ") x" + unchangedRowsLeftOut(m, untracked);
    }

    /**
     * The classification's filter leaving out the rows of a full batch that change nothing and match their live
     * version in every compared column: rows whose action would be {@code noop}, not set aside and not archived, so
     * no later statement of the batch reads them (the batch's row count comes from the stage). Without full batches
     * such rows are archived, and while a column is being introduced they fill it: then every row is kept. A
     * condition that is NULL keeps the row.
     */
    protected String unchangedRowsLeftOut(ResolvedModel m, List<String> untracked) {
        if (!m.settings().hardDeletes().fullBatches() || !untracked.isEmpty()) {
            return "";
        }
        String x = "x";
        return " WHERE NOT COALESCE(" + col(x, m.id("x_rej")) + " IS NULL AND NOT " + col(x, m.id("x_del"))
                + " AND " + col(x, m.id("x_has")) + " AND NOT " + col(x, m.id("x_cdel")) + " AND NOT "
                + col(x, m.id("x_chg")) + " AND " + col(x, m.id("x_same")) + ", FALSE)";
    }

    /** {@inheritDoc} Binds: model, run id, sequence text, logged-at time. */
    @Override
    public String logRejected(ResolvedModel m) {
        List<String> exprs = m.sourceNames().stream().map(c -> col("w", c)).toList();
        return "INSERT INTO " + table(m.metaTable("itersnap_errors")) + " (" + quote(m.id("model")) + ", "
                + quote(m.id("run_id")) + ", " + quote(m.id("sequence_value")) + ", " + quote(m.id("reason")) + ", "
                + quote(m.id("record")) + ", " + quote(m.id("logged_at")) + ") SELECT ?, ?, ?, "
                + col("w", m.id(REJECT)) + ", " + jsonObject(m.sourceNames(), exprs) + ", ? FROM " + table(m.work())
                + " w WHERE " + col("w", m.id(REJECT)) + " IS NOT NULL AND " + col("w", m.id(REJECT))
                + " <> 'duplicate_copy'";
    }

    /**
     * {@inheritDoc}
     * <p>A record is logged as often as it occurs in the source, minus the times it is already in the error log, so
     * reruns add nothing and two identical rows are two entries.
     */
    @Override
    public String logNullSequences(ResolvedModel m) {
        List<String> exprs = m.sourceNames().stream().map(c -> col("s", c)).toList();
        String json = jsonObject(m.sourceNames(), exprs);
        String errors = table(m.metaTable("itersnap_errors"));
        return "INSERT INTO " + errors + " (" + quote(m.id("model")) + ", " + quote(m.id("run_id")) + ", "
                + quote(m.id("sequence_value")) + ", " + quote(m.id("reason")) + ", " + quote(m.id("record")) + ", "
                + quote(m.id("logged_at")) + ") SELECT ?, ?, NULL, 'null_sequence', x.rec, ? FROM (SELECT " + json
                + " AS rec, ROW_NUMBER() OVER (PARTITION BY " + json + " ORDER BY " + json + ") AS rn FROM "
                + table(m.stage()) + " s WHERE " + col("s", m.sequenceBy()) + " IS NULL) x WHERE x.rn > (SELECT "
                + "COUNT(*) FROM " + errors + " e WHERE " + col("e", m.id("model")) + " = ? AND "
                + col("e", m.id("reason")) + " = 'null_sequence' AND " + col("e", m.id("record")) + " = x.rec)";
    }

    @Override
    public String fillIntroduced(ResolvedModel m, String column) {
        String from = " FROM " + table(m.work()) + " w WHERE " + keyJoin(m, "w", "t") + " AND "
                + col("w", m.id(REJECT)) + " IS NULL";
        return "UPDATE " + table(m.target()) + " t SET " + quote(column) + " = (SELECT " + col("w", column) + from
                + ") WHERE " + col("t", m.meta().validTo()) + " IS NULL AND EXISTS (SELECT 1" + from + ")";
    }

    /** {@inheritDoc} Binds: deletion time, deletion time, sequence (closing), sequence (the batch in the stage). */
    @Override
    public String closeAbsent(ResolvedModel m) {
        ColumnNames n = m.meta();
        String dt = param(m.updatedAtColumn());
        return "UPDATE " + table(m.target()) + " t SET " + quote(n.validTo()) + " = CASE WHEN "
                + col("t", n.validFrom()) + " > " + dt + " THEN " + col("t", n.validFrom()) + " ELSE " + dt + " END, "
                + quote(n.changeType()) + " = 'delete', " + quote(n.changedAttributes()) + " = NULL, "
                + quote(n.closedSeq()) + " = " + param(m.sequenceColumn()) + " WHERE " + col("t", n.validTo())
                + " IS NULL AND " + notDeletionRecord(m, "t") + " AND NOT EXISTS (SELECT 1 FROM " + table(m.stage())
                + " s WHERE " + col("s", m.sequenceBy()) + " = " + param(m.sequenceColumn()) + " AND "
                + keyJoin(m, "s", "t") + ")";
    }

    /** {@inheritDoc} Binds: sequence (closing), sequence text (scd id), sequence (opening). */
    @Override
    public String mergeBatch(ResolvedModel m) {
        ColumnNames n = m.meta();
        List<String> mk = new ArrayList<>();
        List<String> nullMk = new ArrayList<>();
        List<String> on = new ArrayList<>();
        for (int i = 0; i < m.keys().size(); i++) {
            String name = m.id(MERGE_KEY + i);
            mk.add(col("w", m.keys().get(i)) + " AS " + quote(name));
            nullMk.add("NULL AS " + quote(name));
            on.add(col("t", m.keys().get(i)) + " = " + col("m", name));
        }
        String w = "w." + "*";
        String using = "SELECT " + String.join(", ", mk) + ", " + w + " FROM " + table(m.work()) + " w WHERE "
                + col("w", m.id(ACTION)) + " IN ('change', 'delete', 'return') UNION ALL SELECT "
                + String.join(", ", nullMk) + ", " + w + " FROM " + table(m.work()) + " w WHERE "
                + col("w", m.id(ACTION)) + " IN ('insert', 'change', 'return')";
        String isDelete = col("m", m.id(ACTION)) + " = 'delete'";
        List<String> insertCols = new ArrayList<>(m.sourceNames());
        List<String> values = new ArrayList<>(m.sourceNames().stream().map(c -> col("m", c)).toList());
        insertCols.add(n.scdId());
        values.add(scdId(m, "m", col("m", m.updatedAt()), null));
        insertCols.add(n.updatedAt());
        values.add(col("m", m.updatedAt()));
        insertCols.add(n.validFrom());
        values.add(col("m", m.id(VFROM)));
        insertCols.add(n.changeType());
        values.add("'insert'");
        if (m.deletionRecords()) {
            insertCols.add(n.isDeleted());
            values.add("FALSE");
        }
        insertCols.add(n.openedSeq());
        values.add(param(m.sequenceColumn()));
        return "MERGE INTO " + table(m.target()) + " t USING (" + using + ") m ON (" + String.join(" AND ", on)
                + " AND " + col("t", n.validTo()) + " IS NULL) WHEN MATCHED THEN UPDATE SET " + quote(n.validTo())
                + " = CASE WHEN " + isDelete + " THEN " + col("m", m.updatedAt()) + " ELSE " + col("m", m.id(VFROM))
                + " END, " + quote(n.changeType()) + " = CASE WHEN " + isDelete + " THEN 'delete' ELSE 'update' END, "
                + quote(n.changedAttributes()) + " = CASE WHEN " + isDelete + " THEN NULL ELSE "
                + col("m", m.id(CHANGED)) + " END, " + quote(n.closedSeq()) + " = " + param(m.sequenceColumn())
                + " WHEN NOT MATCHED THEN INSERT (" + list(insertCols, null) + ") VALUES ("
                + String.join(", ", values) + ")";
    }

    /** {@inheritDoc} Binds: sequence text (scd id), sequence (opening), sequence (closed by this batch). */
    @Override
    public String insertDeletionRecords(ResolvedModel m) {
        ColumnNames n = m.meta();
        List<String> data = m.historyDataColumns();
        List<String> cols = new ArrayList<>(data);
        List<String> values = new ArrayList<>(data.stream().map(c -> col("h", c)).toList());
        cols.add(n.scdId());
        values.add(scdId(m, "h", col("h", n.validTo()), "deleted"));
        cols.add(n.updatedAt());
        values.add(col("h", n.validTo()));
        cols.add(n.validFrom());
        values.add(col("h", n.validTo()));
        cols.add(n.changeType());
        values.add("'insert'");
        cols.add(n.isDeleted());
        values.add("TRUE");
        cols.add(n.openedSeq());
        values.add(param(m.sequenceColumn()));
        return "INSERT INTO " + table(m.target()) + " (" + list(cols, null) + ") SELECT " + String.join(", ", values)
                + " FROM " + table(m.target()) + " h WHERE " + col("h", n.closedSeq()) + " = "
                + param(m.sequenceColumn()) + " AND " + col("h", n.changeType()) + " = 'delete' AND "
                + col("h", n.isDeleted()) + " = FALSE";
    }

    @Override
    public String asOf(ResolvedModel m, boolean bySequence, String literal) {
        ColumnNames n = m.meta();
        String from = bySequence ? n.openedSeq() : n.validFrom();
        String to = bySequence ? n.closedSeq() : n.validTo();
        String lit = bySequence ? ordered(m, literal) : literal;
        String in = bySequence ? ordered(m, col("h", from)) : col("h", from);
        String out = bySequence ? ordered(m, col("h", to)) : col("h", to);
        return "SELECT h.* FROM " + table(m.target()) + " h WHERE " + in + " <= " + lit + " AND (" + col("h", to)
                + " IS NULL OR " + out + " > " + lit + ")"
                + (m.deletionRecords() ? " AND " + col("h", n.isDeleted()) + " = FALSE" : "");
    }

    @Override
    public String literal(SourceColumn type, Object value) {
        ValueType t = type.valueType();
        String text = t.format(t.coerce(value));
        if (t == ValueType.INTEGER || t == ValueType.DECIMAL) {
            return text;
        }
        if (t.temporal()) {
            text = text.replace('T', ' ');
        }
        return "CAST(" + stringLiteral(text) + " AS " + columnType(type) + ")";
    }

    @Override
    public String countBatch(ResolvedModel m) {
        return "SELECT " + quote(m.id(REJECT)) + ", " + quote(m.id(ACTION)) + ", COUNT(*), SUM(CASE WHEN "
                + quote(m.id(KEEP)) + " THEN 1 ELSE 0 END) FROM " + table(m.work()) + " GROUP BY " + quote(m.id(REJECT))
                + ", " + quote(m.id(ACTION)) + " UNION ALL SELECT " + stringLiteral(SOURCE_ROWS) + ", NULL, COUNT(*), 0 FROM "
                + table(m.stage()) + " WHERE " + quote(m.sequenceBy()) + " = " + param(m.sequenceColumn());
    }

    /**
     * {@inheritDoc} Binds: sequence, sequence (keys with versions opened or closed from there on).
     */
    /**
     * What the timeline check reads, after {@code FROM}: the history rows {@code h} of the keys with a version opened
     * or closed from the bound sequence {@code p} on (binds: p, p). The touched keys are collected first (each side
     * can use the index on its sequence column) and joined to their versions on the key: H2 evaluated a correlated
     * {@code EXISTS} once per history row (~10x slower) and an {@code IN (subquery)} over many keys in quadratic time.
     */
    protected String touchedVersions(ResolvedModel m, String p) {
        ColumnNames n = m.meta();
        return "(SELECT " + list(m.keys(), "x") + " FROM " + table(m.target()) + " x WHERE "
                + ordered(m, col("x", n.openedSeq())) + " >= " + p + " UNION SELECT " + list(m.keys(), "x") + " FROM "
                + table(m.target()) + " x WHERE " + ordered(m, col("x", n.closedSeq())) + " >= " + p + ") k JOIN "
                + table(m.target()) + " h ON " + keyJoin(m, "k", "h");
    }

    @Override
    public String timelineCheck(ResolvedModel m) {
        ColumnNames n = m.meta();
        String keys = list(m.keys(), "h");
        String p = ordered(m, param(m.sequenceColumn()));
        String v = "SELECT " + keys + ", " + col("h", n.validFrom()) + " AS vf, " + col("h", n.validTo())
                + " AS vt, " + col("h", n.changeType()) + " AS ct, LEAD(" + col("h", n.validFrom())
                + ") OVER (PARTITION BY " + keys + " ORDER BY " + col("h", n.validFrom()) + ", "
                + col("h", n.openedSeq()) + ") AS next_vf, SUM(CASE WHEN " + col("h", n.validTo())
                + " IS NULL THEN 1 ELSE 0 END) OVER (PARTITION BY " + keys + ") AS open_count FROM "
                + touchedVersions(m, p);
        return "SELECT DISTINCT " + list(m.keys(), "v") + " FROM (" + v + ") v WHERE v.open_count > 1"
                + " OR (v.vt IS NOT NULL AND v.vt < v.vf)"
                + " OR (v.vt IS NOT NULL AND v.next_vf IS NOT NULL AND v.next_vf < v.vt)"
                + " OR (v.vt IS NOT NULL AND v.next_vf IS NOT NULL AND v.ct = 'update' AND v.next_vf <> v.vt)"
                + " OR (v.vt IS NULL AND v.next_vf IS NOT NULL)";
    }
}
