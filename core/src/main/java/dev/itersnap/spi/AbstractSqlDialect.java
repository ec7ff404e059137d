package dev.itersnap.spi;

import dev.itersnap.core.AsOf;
import dev.itersnap.core.ColumnNames;
import dev.itersnap.core.TableName;

import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import static dev.itersnap.spi.ModelTables.DEL;
import static dev.itersnap.spi.ModelTables.REJECT;
import static dev.itersnap.spi.ModelTables.REPRO;

/**
 * The shared SQL of every engine step, built from a few primitives and from the database's {@link #capabilities()}.
 * Five primitives have no standard spelling and every dialect writes them ({@link #md5Hex}, {@link #jsonObject},
 * {@link #epochDays}, {@link #epochMicros}, {@link #chr}); the others default to standard SQL and a dialect overrides
 * them where its database differs ({@link #quote}, {@link #toText}, {@link #isDistinct}, {@link #concat},
 * {@link #typeName}, {@link #stringLiteral}; {@link #hash64} for restatements). The capabilities pick a statement's
 * form (for example a {@code MERGE} where the database refuses a subquery in {@code UPDATE}). Works as is on databases
 * with {@code MERGE}, window functions and {@code IS DISTINCT FROM}; a dialect overrides a step only where its SQL
 * truly differs.
 *
 * <p>Names: {@code t} is the history table, {@code s} the stage, {@code w} the work table. Internal columns of the
 * working tables are {@link ModelTables}'.
 *
 * <p>Values: the text is composed with named slots ({@link #slot}) where values go; {@link #statement} binds each
 * slot's value wherever it occurs, so a statement may use a value several times and in any order.
 */
public abstract class AbstractSqlDialect implements Dialect {
    /** Slot: the batch's sequence value. */
    protected static final String SEQ = "seq";
    /** Slot: the first sequence of a range (replay point, first batch). */
    protected static final String FROM = "from";
    /** Slot: the model name. */
    protected static final String MODEL = "model";
    /** Slot: the run id. */
    protected static final String RUN_ID = "runid";
    /** Slot: the time set-aside rows are logged at. */
    protected static final String LOGGED_AT = "loggedat";

    /**
     * Delimits a slot in composed text. The random part differs in every JVM, so no source query or predicate from
     * settings can spell a slot.
     */
    private static final String SLOT_MARK = "\u0001" + HexFormat.of().formatHex(new SecureRandom().generateSeed(12));
    private static final Pattern SLOT = Pattern.compile(Pattern.quote(SLOT_MARK) + ":([a-z0-9]+)\u0001");

    @Override
    public Capabilities capabilities() {
        return Capabilities.STANDARD;
    }

    // ---------------------------------------------------------------- values

    /** Where the value named {@code name} goes in composed text. */
    protected static String slot(String name) {
        return SLOT_MARK + ":" + name + "\u0001";
    }

    /** A statement from composed text: each slot's value bound where the slot occurs. */
    protected static Statement statement(String step, String sql, Map<String, ?> values) {
        Statement.Builder b = Statement.builder(step);
        Matcher mt = SLOT.matcher(sql);
        int at = 0;
        while (mt.find()) {
            if (!values.containsKey(mt.group(1))) {
                throw new IllegalStateException("no value for slot '" + mt.group(1) + "' of step " + step);
            }
            b.sql(sql.substring(at, mt.start())).bind(values.get(mt.group(1)));
            at = mt.end();
        }
        return b.sql(sql.substring(at)).build();
    }

    /** {@link #statement(String, String, Map)} with one value. */
    protected static Statement statement(String step, String sql, String slot, Object value) {
        Map<String, Object> values = new LinkedHashMap<>();
        values.put(slot, value);
        return statement(step, sql, values);
    }

    /** A slot cast to the given column's type. */
    protected String param(SourceColumn type, String slot) {
        return "CAST(" + slot(slot) + " AS " + columnType(type) + ")";
    }

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

    /** The DDL type of a logical column type; {@link TableSpec.ColumnType.Kind#LIKE} goes to {@link #columnType}. */
    protected String typeName(TableSpec.ColumnType type) {
        return switch (type.kind()) {
            case TEXT -> "VARCHAR(" + type.length() + ")";
            case LONG_TEXT -> "VARCHAR"; // no length: unbounded where the database allows it (PostgreSQL, DuckDB)
            case JSON -> typeName(TableSpec.ColumnType.longText());
            case BIGINT -> "BIGINT";
            case INT -> "INT";
            case BOOLEAN -> "BOOLEAN";
            case TIMESTAMP -> "TIMESTAMP";
            case LIKE -> columnType(type.like());
        };
    }

    /** Converts the text expression of changed attributes into the type of {@link TableSpec.ColumnType#json()}. */
    protected String changedAttributesValue(String textExpression) {
        return textExpression;
    }

    /**
     * How a sequence expression is wrapped on both sides of {@code <, <=, >, >=}: string sequences compare by code
     * point, so a dialect whose strings compare otherwise (a linguistic collation, UTF-16 code units) returns the
     * text before and after the expression that makes the comparison binary. Default: nothing.
     */
    protected String[] orderedAround(ResolvedModel m) {
        return new String[] {"", ""};
    }

    /** A sequence expression as it must appear in an ordering comparison ({@link #orderedAround}). */
    protected final String ordered(ResolvedModel m, String sequenceExpression) {
        String[] around = orderedAround(m);
        return around[0] + sequenceExpression + around[1];
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

    /**
     * dbt_scd_id from key, updated_at and the batch's sequence text ({@code seqTextExpr}), plus a marker. The parts
     * are joined with {@code |}; the parts of a composite key escape {@code \} and {@code |} first, so that {@code ('a|b', 'c')} and
     * {@code ('a', 'b|c')} get different ids (a single key cannot collide that way: the parts after it are times
     * and sequences, which hold no {@code |}; its ids stay those of earlier versions).
     */
    protected String scdId(ResolvedModel m, String alias, String updatedAtExpr, String seqTextExpr, String marker) {
        List<String> parts = new ArrayList<>();
        for (String k : m.keys()) {
            String text = "COALESCE(" + toText(col(alias, k)) + ", '')";
            if (m.keys().size() > 1) {
                text = "REPLACE(REPLACE(" + text + ", " + stringLiteral("\\") + ", " + stringLiteral("\\\\") + "), "
                        + stringLiteral("|") + ", " + stringLiteral("\\|") + ")";
            }
            parts.add(text);
            parts.add("'|'");
        }
        parts.add("COALESCE(" + toText(updatedAtExpr) + ", '')");
        parts.add("'|'");
        parts.add(seqTextExpr);
        if (marker != null) {
            parts.add(stringLiteral("|" + marker));
        }
        return md5Hex(concat(parts));
    }

    /**
     * {@code INSERT INTO target (columns) SELECT values <rest>} reporting its row count: as written where the
     * database reports INSERT counts, otherwise as {@code MERGE ... ON FALSE WHEN NOT MATCHED THEN INSERT}, where a
     * bare value or NULL is cast to its column's type (a MERGE source needs typed columns).
     */
    protected String insertCounted(ResolvedModel m, TableSpec target, List<String> columns, List<String> values,
                                   String rest) {
        if (capabilities().insertRowCounts()) {
            return "INSERT INTO " + table(target.name()) + " (" + list(columns, null) + ") SELECT "
                    + String.join(", ", values) + rest;
        }
        List<String> aliased = new ArrayList<>();
        List<String> refs = new ArrayList<>();
        for (int i = 0; i < values.size(); i++) {
            String v = values.get(i);
            TableSpec.Column c = target.column(columns.get(i));
            if (c != null && (v.equals("NULL") || SLOT.matcher(v).matches())) {
                v = "CAST(" + v + " AS " + typeName(c.type()) + ")";
            }
            aliased.add(v + " AS " + quote(m.id("itersnap_c" + i)));
            refs.add(col("d", m.id("itersnap_c" + i)));
        }
        return "MERGE INTO " + table(target.name()) + " t USING (SELECT " + String.join(", ", aliased) + rest
                + ") d ON FALSE WHEN NOT MATCHED THEN INSERT (" + list(columns, null) + ") VALUES ("
                + String.join(", ", refs) + ")";
    }

    // ---------------------------------------------------------------- tables

    @Override
    public List<Statement> createTable(TableSpec spec) {
        Capabilities can = capabilities();
        String t = table(spec.name());
        List<String> ddl = new ArrayList<>();
        if (spec.createSchema() && spec.name().schema() != null) {
            // catalog.schema for a three-part name: the schema is created in the table's catalog
            List<String> parts = spec.name().parts();
            ddl.add("CREATE SCHEMA IF NOT EXISTS " + parts.subList(0, parts.size() - 1).stream().map(this::quote)
                    .collect(Collectors.joining(".")));
        }
        List<String> defs = new ArrayList<>();
        for (TableSpec.Column c : spec.columns()) {
            defs.add(quote(c.name()) + " " + typeName(c.type()) + (c.notNull() ? " NOT NULL" : ""));
        }
        if (can.primaryKeys() && !spec.primaryKey().isEmpty()) {
            defs.add("PRIMARY KEY (" + list(spec.primaryKey(), null) + ")");
        }
        String body = " (" + String.join(", ", defs) + ")" + tableOptions(spec);
        String indexIfNotExists = "";
        switch (spec.creation()) {
            case NEW -> ddl.add("CREATE TABLE " + t + body);
            case IF_NOT_EXISTS -> {
                ddl.add("CREATE TABLE IF NOT EXISTS " + t + body);
                indexIfNotExists = "IF NOT EXISTS ";
            }
            case SCRATCH -> {
                if (can.createOrReplaceTable()) {
                    ddl.add("CREATE OR REPLACE TABLE " + t + body);
                } else {
                    ddl.add("DROP TABLE IF EXISTS " + t);
                    ddl.add(createScratchTable() + t + body);
                }
            }
        }
        if (can.indexes()) {
            for (TableSpec.Index ix : spec.indexes()) {
                ddl.add("CREATE INDEX " + indexIfNotExists + indexName(spec.name(), ix.name()) + " ON " + t + " ("
                        + list(ix.columns(), null) + ")");
            }
        }
        return ddl.stream().map(s -> Statement.of("create " + spec.name().table(), s)).toList();
    }

    /** What follows a CREATE TABLE's column list (a storage format, table properties). Default: nothing. */
    protected String tableOptions(TableSpec spec) {
        return "";
    }

    /**
     * How a scratch table (stage, work) is created, up to its name: {@code CREATE TABLE }. Scratch tables are
     * rebuilt by every run and never read by a later one, so a dialect may create them without crash safety.
     */
    protected String createScratchTable() {
        return "CREATE TABLE ";
    }

    /** A quoted index name, qualified with its table's schema where the table has one. */
    protected String indexName(TableName table, String index) {
        return table.schema() != null ? quote(table.schema()) + "." + quote(index) : quote(index);
    }

    @Override
    public Statement addColumn(TableName table, SourceColumn column) {
        return Statement.of("add column", "ALTER TABLE " + table(table) + " ADD COLUMN " + quote(column.name()) + " "
                + columnType(column));
    }

    @Override
    public Statement addColumn(TableName table, String column, TableSpec.ColumnType type) {
        return Statement.of("add column", "ALTER TABLE " + table(table) + " ADD COLUMN " + quote(column) + " "
                + typeName(type));
    }

    @Override
    public Statement describe(Relation r) {
        String from = r.table() != null ? table(r.table()) : "(" + r.query() + ")";
        return Statement.of("resolve", "SELECT * FROM " + from + " s WHERE "
                + (r.predicate() != null ? "(" + r.predicate() + ") AND " : "") + "1 = 0");
    }

    // ---------------------------------------------------------------- reading the source

    /** {@code SELECT * FROM name} with a plain, optionally qualified and quoted, table name and nothing else. */
    private static final Pattern PLAIN_TABLE_SOURCE = Pattern.compile(
            "\\s*select\\s+\\*\\s+from\\s+((?:\"(?:[^\"]|\"\")+\"|[A-Za-z_][A-Za-z0-9_$]*)"
                    + "(?:\\s*\\.\\s*(?:\"(?:[^\"]|\"\")+\"|[A-Za-z_][A-Za-z0-9_$]*)){0,2})\\s*",
            Pattern.CASE_INSENSITIVE);

    /**
     * The source as a relation to select from: the table name itself when the source query is exactly
     * {@code SELECT * FROM <table>} (so that the database sees the table and its indexes: H2 does not use an index
     * through a derived table), otherwise the query as a derived table {@code (<source>)}. Both give the same rows and
     * columns; the caller adds the alias.
     */
    protected String sourceRelation(ResolvedModel m) {
        if (m.sequenceKey() != null) {
            // a sequence_by list: every row also carries its sequence key, the engine's one sequence column
            List<SourceColumn> parts = m.sequenceParts().stream().map(m::sourceColumn).toList();
            return "(SELECT s.*, " + sequenceKey(parts, "s") + " AS " + quote(m.sequenceBy()) + " FROM ("
                    + m.settings().source() + ") s)";
        }
        Matcher plain = PLAIN_TABLE_SOURCE.matcher(m.settings().source());
        return plain.matches() ? plain.group(1) : "(" + m.settings().source() + ")";
    }

    // ---------------------------------------------------------------- the key of a sequence_by list

    @Override
    public String sequenceKey(List<SourceColumn> parts, String alias) {
        List<String> keys = new ArrayList<>();
        for (SourceColumn c : parts) {
            String e = col(alias, c.name());
            keys.add(switch (c.valueType()) {
                case INTEGER -> integerKey(e);
                case DECIMAL -> integerKey("CAST(" + e + (c.scale() > 0 ? " * 1" + "0".repeat(c.scale()) : "")
                        + " AS BIGINT)");
                case DATE -> integerKey(epochDays(e));
                case TIMESTAMP, TIMESTAMP_TZ -> integerKey(epochMicros(c, e));
                case STRING -> stringKey(e);
                default -> throw new IllegalArgumentException("column '" + c.name() + "' cannot order batches");
            });
        }
        return concat(keys);
    }

    /** An integer as {@link SequenceKey} writes it: p and 19 digits, or n and 19 digits of the value plus 10^19. */
    private String integerKey(String e) {
        return "CASE WHEN " + e + " < 0 THEN " + concat(List.of("'n'", "LPAD(" + toText("CAST(" + e
                + " AS DECIMAL(20, 0)) + CAST(10000000000000000000 AS DECIMAL(20, 0))") + ", 19, '0')")) + " ELSE "
                + concat(List.of("'p'", "LPAD(" + toText(e) + ", 19, '0')")) + " END";
    }

    /**
     * The days from 1970-01-01 to a DATE, an integer expression. No standard spelling: H2 {@code DATEDIFF(DAY, DATE
     * '1970-01-01', e)}, PostgreSQL and DuckDB {@code (e - DATE '1970-01-01')}, Spark {@code unix_date(e)}.
     */
    protected abstract String epochDays(String e);

    /**
     * The microseconds from 1970-01-01 00:00 to a timestamp, an integer expression: of the UTC instant for a timestamp
     * with time zone ({@link ValueType#TIMESTAMP_TZ}), of the wall-clock time for one without. No standard spelling:
     * DuckDB {@code epoch_us(e)}, PostgreSQL {@code EXTRACT(EPOCH FROM e) * 1000000}, Spark {@code unix_micros(e)}.
     */
    protected abstract String epochMicros(SourceColumn c, String e);

    /** The one-character string of this code point (1 to 3, and 0 where {@link #stringsHoldNul}): {@code chr(n)}. */
    protected abstract String chr(int code);

    /** Whether strings can hold U+0000 (PostgreSQL's cannot, so it is not escaped there). */
    protected boolean stringsHoldNul() {
        return true;
    }

    /** A string as {@link SequenceKey} writes it: U+0001 and U+0000 escaped, ended by U+0001 U+0001. */
    private String stringKey(String e) {
        String x = "REPLACE(" + e + ", " + chr(1) + ", " + concat(List.of(chr(1), chr(3))) + ")";
        if (stringsHoldNul()) {
            x = "REPLACE(" + x + ", " + chr(0) + ", " + concat(List.of(chr(1), chr(2))) + ")";
        }
        return concat(List.of(x, chr(1), chr(1)));
    }

    @Override
    public Statement discoverSequences(ResolvedModel m) {
        return Statement.of("discover", "SELECT DISTINCT " + col("s", m.sequenceBy()) + " FROM " + sourceRelation(m)
                + " s");
    }

    /**
     * {@inheritDoc}
     * <p>One pass over the rows of the batches named, grouped by sequence: every such row is read for its hash. A
     * dialect without {@link #hash64} counts rows only.
     */
    @Override
    public Statement fingerprintSequences(ResolvedModel m, List<SourceColumn> columns, List<?> sequences) {
        if (sequences != null && sequences.isEmpty()) {
            throw new IllegalArgumentException("no batch to fingerprint");
        }
        Map<String, Object> values = new LinkedHashMap<>();
        StringBuilder where = new StringBuilder(col("s", m.sequenceBy()));
        if (sequences != null) {
            where.append(" IN (");
            for (int i = 0; i < sequences.size(); i++) {
                String slot = "seq" + i;
                values.put(slot, sequences.get(i));
                where.append(i == 0 ? "" : ", ").append(param(m.sequenceColumn(), slot));
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
        String seq = col("s", m.sequenceBy());
        if (columns == null || hash64("x") == null) {
            return "SELECT " + seq + ", COUNT(*) FROM " + relation + " s WHERE " + where + " GROUP BY " + seq;
        }
        String sq = quote(m.id("itersnap_s"));
        String h = quote(m.id("itersnap_h"));
        String n = quote(m.id("itersnap_n"));
        return "SELECT x." + sq + ", SUM(x." + n + "), SUM(CAST(x." + h + " AS DECIMAL(20, 0))) FROM (SELECT y." + sq
                + ", y." + h + ", COUNT(*) AS " + n + " FROM (SELECT " + seq + " AS " + sq + ", "
                + rowHash(columns, "s") + " AS " + h + " FROM " + relation + " s WHERE " + where + ") y GROUP BY y."
                + sq + ", y." + h + ") x GROUP BY x." + sq;
    }

    /**
     * {@inheritDoc}
     * <p>{@code TRUNCATE TABLE} of each; nothing where the database creates or replaces its scratch tables.
     */
    @Override
    public List<Statement> clearScratchTables(List<TableName> tables) {
        if (capabilities().createOrReplaceTable()) {
            return List.of();
        }
        return tables.stream().map(t -> Statement.of("clear scratch tables", "TRUNCATE TABLE " + table(t))).toList();
    }

    @Override
    public Statement historySequences(ResolvedModel m, List<?> sequences, Object from) {
        Map<String, Object> values = new LinkedHashMap<>();
        List<String> in = new ArrayList<>();
        for (int i = 0; i < sequences.size(); i++) {
            values.put("seq" + i, sequences.get(i));
            in.add(param(m.sequenceColumn(), "seq" + i));
        }
        if (from != null) {
            values.put(FROM, from);
        }
        List<String> branches = new ArrayList<>();
        for (String column : List.of(m.meta().openedSeq(), m.meta().closedSeq())) {
            String c = col("h", column);
            List<String> where = new ArrayList<>();
            if (!in.isEmpty()) {
                where.add(c + " IN (" + String.join(", ", in) + ")");
            }
            if (from != null) {
                where.add(ordered(m, c) + " >= " + ordered(m, param(m.sequenceColumn(), FROM)));
            }
            if (where.isEmpty()) {
                throw new IllegalArgumentException("no sequence to probe");
            }
            // one branch per condition: an OR would keep a database from probing the index by each
            for (String w : where) {
                branches.add("SELECT " + c + " FROM " + table(m.target()) + " h WHERE " + w);
            }
        }
        return statement("check ledger", String.join(" UNION ", branches), values);
    }

    /**
     * {@inheritDoc}
     * <p>The staged rows of the batches read from the source (not those reproduced from the history), grouped by
     * sequence, as {@link #fingerprintSequences} hashes them.
     */
    @Override
    public Statement fingerprintStaged(ResolvedModel m, List<SourceColumn> columns) {
        return Statement.of("fingerprint staged", fingerprints(m, columns, table(m.stage()), col("s", m.sequenceBy())
                + " IS NOT NULL AND NOT " + col("s", m.id(REPRO))));
    }

    /**
     * {@inheritDoc}
     * <p>The source's branch reads the replayed batches in full (filtered by their bound sequences, as
     * {@link #fingerprintSequences}), joined to the keys table for the second hash; the stage's branch reads the rows
     * staged of them.
     */
    @Override
    public Statement fingerprintReplayedKeys(ResolvedModel m, List<SourceColumn> columns, List<?> sequences) {
        if (columns == null || hash64("x") == null) {
            return null;
        }
        Map<String, Object> values = new LinkedHashMap<>();
        String seq = col("s", m.sequenceBy());
        String in;
        if (sequences == null) {
            in = seq + " IN (SELECT " + col("sb", m.sequenceBy()) + " FROM " + table(m.batches()) + " sb WHERE "
                    + col("sb", m.id(ModelTables.REPLAYED)) + ")";
        } else {
            if (sequences.isEmpty()) {
                throw new IllegalArgumentException("no batch to check");
            }
            List<String> slots = new ArrayList<>();
            for (int i = 0; i < sequences.size(); i++) {
                values.put("seq" + i, sequences.get(i));
                slots.add(param(m.sequenceColumn(), "seq" + i));
            }
            in = seq + " IN (" + String.join(", ", slots) + ")";
        }
        String row = "CAST(" + rowHash(columns, "s") + " AS DECIMAL(20, 0))";
        String firstKey = col("sk", m.keys().get(0));
        String sql = "SELECT " + seq + ", SUM(DISTINCT " + row + "), SUM(DISTINCT CASE WHEN " + firstKey
                + " IS NOT NULL THEN " + row + " END), 'source' FROM " + sourceRelation(m) + " s LEFT JOIN "
                + table(m.keysTable()) + " sk ON " + keyJoin(m, "sk", "s") + " AND "
                + col("sk", m.id(ModelTables.FROM_IDX)) + " = 1 WHERE " + in + " GROUP BY " + seq
                + " UNION ALL SELECT " + seq + ", CAST(NULL AS DECIMAL(20, 0)), SUM(DISTINCT " + row + "), 'stage' FROM "
                + table(m.stage()) + " s WHERE " + in + " AND NOT " + col("s", m.id(REPRO)) + " GROUP BY " + seq;
        return statement("check replayed keys", sql, values);
    }

    /**
     * A row's 64-bit hash (alias {@code alias}) over {@code columns} in the order given: {@link #hash64} of the
     * row's canonical text, which joins, for each column, {@code 'V' <length> ':' <text>} for a value
     * ({@link #fingerprintText}) and {@code 'N'} for NULL: unambiguous, whatever the values hold. A dialect may hash
     * another unambiguous text of the row (and says so in {@link #fingerprintFormat}).
     */
    protected String rowHash(List<SourceColumn> columns, String alias) {
        List<String> parts = new ArrayList<>();
        for (SourceColumn c : columns) {
            String text = fingerprintText(c, col(alias, c.name()));
            parts.add("COALESCE(" + concat(List.of("'V'", toText("LENGTH(" + text + ")"), "':'", text)) + ", 'N')");
        }
        return hash64(concat(parts));
    }

    /**
     * A column's value as text for its row's fingerprint: the same value always gives the same text, different values
     * different texts. Default: {@link #toText}.
     */
    protected String fingerprintText(SourceColumn column, String expression) {
        return toText(expression);
    }

    /**
     * A 64-bit integer hash of a text expression ({@code BIGINT}), the same for the same text on every run; null when
     * the database has none (restatements are then not detected). Default: null.
     */
    protected String hash64(String textExpression) {
        return null;
    }

    /**
     * An expression of a column's value that compares by identity, used in PARTITION BY (exact copies, duplicate
     * keys) and in the change comparison of tracked columns: the expression itself for types whose equality is
     * identity; the value's text for types without an equality operator, or whose {@code =} holds for values that
     * differ (PostgreSQL's json, xml, point; boxes and circles that compare by area; intervals where '1 day' equals
     * '24 hours').
     */
    protected String partitionable(SourceColumn column, String expression) {
        return expression;
    }

    /** {@link #partitionable} of a source column by name (itself for a column the source lacks). */
    String comparable(ResolvedModel m, String column, String expression) {
        SourceColumn c = m.sourceColumn(column);
        return c == null ? expression : partitionable(c, expression);
    }

    /**
     * {@inheritDoc}
     * <p>Rows that repeat another row of the batch in every column are exact copies (a file loaded twice): all but
     * one are marked {@code duplicate_copy} and applied once. Rows of one key that differ are {@code duplicate_key}.
     */
    @Override
    public Statement stageSource(ResolvedModel m, Object from, boolean includeNullSequence, StageScope scope) {
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
        String fromRows = scope == StageScope.ALL ? rel + " s0 WHERE " + ordered(m, col("s0", m.sequenceBy())) + " >= "
                + ordered(m, param(m.sequenceColumn(), FROM)) : scopedRows(m, rel, scope, FROM);
        if (includeNullSequence && scope != StageScope.REPLAYED_KEYS) {
            // a separate branch: "seq >= ? OR seq IS NULL" keeps a database from using an index on the sequence
            fromRows = "(SELECT " + list(m.sourceNames(), "s0") + " FROM " + fromRows + " UNION ALL SELECT "
                    + list(m.sourceNames(), "s0") + " FROM " + rel + " s0 WHERE " + col("s0", m.sequenceBy())
                    + " IS NULL) s0";
        }
        String numbered = "SELECT " + list(m.sourceNames(), "s0") + ", ROW_NUMBER() OVER (PARTITION BY "
                + String.join(", ", everyColumn) + " ORDER BY " + col("s0", m.sequenceBy()) + ") AS " + copyNo
                + " FROM " + fromRows;
        return statement("stage source", "INSERT INTO " + table(m.stage()) + " (" + list(m.sourceNames(), null)
                + ", " + quote(m.id(DEL)) + ", " + quote(m.id(REJECT)) + ", " + quote(m.id(REPRO)) + ") SELECT "
                + list(m.sourceNames(), "s") + ", " + del + ", " + reject + ", FALSE FROM (" + numbered + ") s",
                FROM, from);
    }

    /**
     * The source rows (alias {@code s0}, every source column) a key-scoped replay stages, from the sequence in slot
     * {@code from} on: those of the batches it applies in full ({@link StageScope#FRESH}: not replayed in the batches
     * table), or the replayed batches' rows of the keys it recomputes ({@link StageScope#REPLAYED_KEYS}:
     * {@code itersnap_from = 1} in the keys table). Joins of the source with those tables, which a dialect may shape
     * so that its planner probes the source per batch, or per batch and key, where it can.
     */
    protected String scopedRows(ResolvedModel m, String relation, StageScope scope, String from) {
        String batches = relation + " s0 JOIN " + table(m.batches()) + " sb ON " + col("sb", m.sequenceBy()) + " = "
                + col("s0", m.sequenceBy()) + " AND ";
        String range = " WHERE " + ordered(m, col("s0", m.sequenceBy())) + " >= "
                + ordered(m, param(m.sequenceColumn(), from));
        return switch (scope) {
            case ALL -> throw new IllegalArgumentException("the whole source is not scoped");
            case FRESH -> batches + "NOT " + col("sb", m.id(ModelTables.REPLAYED)) + range;
            case REPLAYED_KEYS -> batches + col("sb", m.id(ModelTables.REPLAYED)) + " JOIN " + table(m.keysTable())
                    + " sk ON " + keyJoin(m, "sk", "s0") + " AND " + col("sk", m.id(ModelTables.FROM_IDX)) + " = 1"
                    + range;
        };
    }

    /**
     * {@inheritDoc}
     * <p>A record is logged as often as it occurs in the source, minus the times it is already in the error log, so
     * reruns add nothing and two identical rows are two entries. Where INSERT reports no count, the times a record
     * is already logged come from a join (a MERGE cannot read its own target in a subquery expression).
     */
    @Override
    public Statement logNullSequences(ResolvedModel m, String runId, java.time.LocalDateTime loggedAt) {
        MetadataSchema.Errors e = m.metadata().errors();
        List<String> exprs = m.recordNames().stream().map(c -> col("s", c)).toList();
        String json = jsonObject(m.recordNames(), exprs);
        String errors = table(e.spec().name());
        String numbered = " FROM (SELECT " + json + " AS rec, ROW_NUMBER() OVER (PARTITION BY " + json + " ORDER BY "
                + json + ") AS rn FROM " + table(m.stage()) + " s WHERE " + col("s", m.sequenceBy()) + " IS NULL) x";
        String logged = capabilities().insertRowCounts()
                ? numbered + " WHERE x.rn > (SELECT COUNT(*) FROM " + errors + " e WHERE " + col("e", e.model())
                        + " = " + slot(MODEL) + " AND " + col("e", e.reason()) + " = 'null_sequence' AND "
                        + col("e", e.record()) + " = x.rec)"
                : numbered + " LEFT JOIN (SELECT " + col("e", e.record()) + " AS rec, COUNT(*) AS n FROM " + errors
                        + " e WHERE " + col("e", e.model()) + " = " + slot(MODEL) + " AND " + col("e", e.reason())
                        + " = 'null_sequence' GROUP BY " + col("e", e.record()) + ") p ON p.rec = x.rec WHERE x.rn > "
                        + "COALESCE(p.n, 0)";
        String sql = insertCounted(m, e.spec(), List.of(e.model(), e.runId(), e.sequence(), e.reason(), e.record(),
                e.loggedAt()), List.of(slot(MODEL), slot(RUN_ID), "NULL", "'null_sequence'", "x.rec", slot(LOGGED_AT)),
                logged);
        return statement("set rows aside", sql, Map.of(MODEL, m.name(), RUN_ID, runId, LOGGED_AT, loggedAt));
    }

    /**
     * {@inheritDoc}
     * <p>Two parts: the versions the batch left live (full picture) or opened, minus the keys the archive holds for
     * it, and the archive's rows of the batch (set-aside rows, explicit deletes, rows that changed nothing but differ
     * from the live version). Deletions by absence need no row: the key is absent again.
     */
    @Override
    public Statement stageReproduced(ResolvedModel m, Object sequence, List<String> notYetIntroduced,
                                     boolean fullPicture) {
        ColumnNames n = m.meta();
        String seqParam = param(m.sequenceColumn(), SEQ);
        Map<String, Object> values = new LinkedHashMap<>();
        values.put(SEQ, sequence);
        List<Object> parts = m.sequenceKey() == null ? List.of() : m.sequenceKey().decode((String) sequence);
        List<String> fromHistory = new ArrayList<>();
        List<String> fromArchive = new ArrayList<>();
        for (String c : m.sourceNames()) {
            int part = m.sequenceKey() == null ? -1 : m.sequenceParts().indexOf(c);
            if (c.equals(m.sequenceBy())) {
                fromHistory.add(seqParam);
                fromArchive.add(col("a", c));
            } else if (part >= 0) {
                // the batch's own value of a column of the sequence_by list (the version has its opening batch's)
                values.put(SEQ + (char) ('a' + part), parts.get(part));
                fromHistory.add(param(m.sourceColumn(c), SEQ + (char) ('a' + part)));
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
        return statement("reproduce aged-out batch", "INSERT INTO " + table(m.stage()) + " ("
                + list(m.sourceNames(), null) + ", " + quote(m.id(DEL)) + ", " + quote(m.id(REJECT)) + ", "
                + quote(m.id(REPRO)) + ") SELECT " + String.join(", ", fromHistory) + ", FALSE, NULL, TRUE FROM "
                + table(m.target()) + " h WHERE " + live + " AND " + notDeletionRecord(m, "h") + " AND NOT EXISTS ("
                + archived + ") UNION ALL SELECT " + String.join(", ", fromArchive) + ", " + col("a", m.id(DEL)) + ", "
                + col("a", m.id(REJECT)) + ", TRUE FROM " + table(m.archive()) + " a WHERE " + col("a", m.sequenceBy())
                + " = " + seqParam, values);
    }

    // ---------------------------------------------------------------- rollback

    @Override
    public List<Statement> rollback(ResolvedModel m, Rollback r) {
        if (r.keyScoped()) {
            return rollbackKeys(m, r);
        }
        if (r.sequence() == null) {
            return m.overwritten().isEmpty() ? List.of()
                    : List.of(Statement.of("roll back", restoreOverwritten(m, false)));
        }
        ColumnNames n = m.meta();
        String t = table(m.target());
        String op = r.onlyThisBatch() ? " = " : " >= ";
        String p = r.onlyThisBatch() ? slot(FROM) : ordered(m, param(m.sequenceColumn(), FROM));
        java.util.function.UnaryOperator<String> seq = c -> r.onlyThisBatch() ? quote(c) : ordered(m, quote(c));
        List<String> sql = new ArrayList<>();
        if (r.history()) {
            sql.add("DELETE FROM " + t + " WHERE " + seq.apply(n.openedSeq()) + op + p);
            sql.add("UPDATE " + t + " SET " + quote(n.validTo()) + " = " + openValidTo(m) + ", " + quote(n.changeType())
                    + " = 'insert', " + quote(n.changedAttributes()) + " = NULL, " + quote(n.closedSeq())
                    + " = NULL WHERE " + seq.apply(n.closedSeq()) + op + p);
        }
        for (String c : r.resetColumns()) {
            sql.add("UPDATE " + t + " SET " + quote(c) + " = NULL");
        }
        sql.add("DELETE FROM " + table(m.archive()) + " WHERE " + seq.apply(m.sequenceBy()) + op + p);
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
    protected String restoreOverwritten(ResolvedModel m, boolean keyScoped) {
        ColumnNames n = m.meta();
        List<String> over = m.overwritten();
        String rn = quote(m.id("itersnap_w_rn"));
        List<String> same = new ArrayList<>();
        same.add("NOT " + col("a", m.id(DEL)));
        for (String c : m.tracked()) {
            same.add("NOT " + isDistinct(comparable(m, c, col("a", c)), comparable(m, c, col("v", c))));
        }
        String scope = keyScoped ? " JOIN " + table(m.keysTable()) + " k ON " + keyJoin(m, "k", "a") + " AND "
                + col("k", m.id(ModelTables.FROM_IDX)) + " = 1" : "";
        String last = "SELECT " + list(m.keys(), "a") + ", " + list(over, "a") + ", ROW_NUMBER() OVER (PARTITION BY "
                + list(m.keys(), "a") + " ORDER BY " + ordered(m, col("a", m.sequenceBy())) + " DESC) AS " + rn
                + " FROM " + table(m.archive()) + " a JOIN " + table(m.target()) + " v ON " + keyJoin(m, "v", "a")
                + " AND " + isOpen(m, col("v", n.validTo())) + " AND " + notDeletionRecord(m, "v") + " AND "
                + ordered(m, col("a", m.sequenceBy())) + " >= " + ordered(m, col("v", n.openedSeq())) + scope
                + " WHERE " + col("a", m.id(REJECT)) + " IS NULL AND " + String.join(" AND ", same);
        return "MERGE INTO " + table(m.target()) + " t USING (SELECT * FROM (" + last + ") x WHERE x." + rn
                + " = 1) r ON " + keyJoin(m, "t", "r") + " AND " + isOpen(m, col("t", n.validTo())) + " AND "
                + notDeletionRecord(m, "t") + " WHEN MATCHED THEN UPDATE SET " + over.stream()
                .map(c -> quote(c) + " = " + col("r", c)).collect(java.util.stream.Collectors.joining(", "));
    }

    /**
     * A key-scoped rollback: MERGE statements over the keys table (one row per key), so that every database runs the
     * same form (Delta Lake refuses subqueries in an UPDATE's or DELETE's condition). The error log's rows of the
     * replayed batches are matched by the staged rows of those keys, in the form they are logged in.
     */
    private List<Statement> rollbackKeys(ResolvedModel m, Rollback r) {
        ColumnNames n = m.meta();
        String p = ordered(m, param(m.sequenceColumn(), FROM));
        String keys = " USING (SELECT " + list(m.keys(), "k") + " FROM " + table(m.keysTable()) + " k WHERE "
                + col("k", m.id(ModelTables.FROM_IDX)) + " = 1) k ON " + keyJoin(m, "t", "k") + " AND ";
        List<String> sql = new ArrayList<>();
        sql.add("MERGE INTO " + table(m.target()) + " t" + keys + ordered(m, col("t", n.openedSeq())) + " >= " + p
                + " WHEN MATCHED THEN DELETE");
        sql.add("MERGE INTO " + table(m.target()) + " t" + keys + ordered(m, col("t", n.closedSeq())) + " >= " + p
                + " WHEN MATCHED THEN UPDATE SET " + quote(n.validTo()) + " = " + openValidTo(m) + ", "
                + quote(n.changeType())
                + " = 'insert', " + quote(n.changedAttributes()) + " = NULL, " + quote(n.closedSeq()) + " = NULL");
        sql.add("MERGE INTO " + table(m.archive()) + " t" + keys + ordered(m, col("t", m.sequenceBy())) + " >= " + p
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
        List<String> exprs = m.recordNames().stream().map(c -> col("s", c)).toList();
        String staged = "SELECT DISTINCT " + col("b", m.id(ModelTables.SEQTEXT)) + " AS sq, " + jsonObject(
                m.recordNames(), exprs) + " AS rec FROM " + table(m.stage()) + " s JOIN " + table(m.batches())
                + " b ON " + col("b", m.sequenceBy()) + " = " + col("s", m.sequenceBy()) + " WHERE "
                + col("b", m.id(ModelTables.REPLAYED));
        out.add(statement("roll back", "MERGE INTO " + table(e.spec().name()) + " t USING (" + staged + ") x ON "
                + col("t", e.model()) + " = " + slot(MODEL) + " AND " + col("t", e.sequence()) + " = x.sq AND "
                + col("t", e.record()) + " = x.rec WHEN MATCHED THEN DELETE", MODEL, m.name()));
        return out;
    }

    // ---------------------------------------------------------------- applying the run's batches

    /** {@inheritDoc} The shared SQL of {@link SetBasedApply}: window functions over all batches at once. */
    @Override
    public ApplyStatements applyBatches(ResolvedModel m, BatchRun run) {
        return new SetBasedApply(this, m, run).statements();
    }

    // ---------------------------------------------------------------- check

    /**
     * What the timeline check reads, after {@code FROM}: the history rows {@code h} of the keys with a version opened
     * or closed from sequence {@code p} on. The touched keys are collected first (each side can use the index on its
     * sequence column) and joined to their versions on the key: H2 evaluated a correlated {@code EXISTS} once per
     * history row (~10x slower) and an {@code IN (subquery)} over many keys in quadratic time.
     */
    protected String touchedVersions(ResolvedModel m, String p) {
        ColumnNames n = m.meta();
        return "(SELECT " + list(m.keys(), "x") + " FROM " + table(m.target()) + " x WHERE "
                + ordered(m, col("x", n.openedSeq())) + " >= " + p + " UNION SELECT " + list(m.keys(), "x") + " FROM "
                + table(m.target()) + " x WHERE " + ordered(m, col("x", n.closedSeq())) + " >= " + p + ") k JOIN "
                + table(m.target()) + " h ON " + keyJoin(m, "k", "h");
    }

    @Override
    public Statement timelineCheck(ResolvedModel m, Object from) {
        ColumnNames n = m.meta();
        String keys = list(m.keys(), "h");
        String p = ordered(m, param(m.sequenceColumn(), FROM));
        Object current = m.validToCurrent();
        String closed = "v.vt IS NOT NULL" + (current == null ? "" : " AND v.vt <> " + openValidTo(m));
        String v = "SELECT " + keys + ", " + col("h", n.validFrom()) + " AS vf, " + col("h", n.validTo())
                + " AS vt, " + col("h", n.changeType()) + " AS ct, LEAD(" + col("h", n.validFrom())
                + ") OVER (PARTITION BY " + keys + " ORDER BY " + col("h", n.validFrom()) + ", "
                + col("h", n.openedSeq()) + ") AS next_vf, SUM(CASE WHEN " + isOpen(m, col("h", n.validTo()))
                + " THEN 1 ELSE 0 END) OVER (PARTITION BY " + keys + ") AS open_count FROM "
                + touchedVersions(m, p);
        return statement("check timeline", "SELECT DISTINCT " + list(m.keys(), "v") + " FROM (" + v + ") v WHERE "
                + "v.open_count > 1"
                + " OR (" + closed + " AND v.vt < v.vf)"
                + " OR (" + closed + " AND v.next_vf IS NOT NULL AND v.next_vf < v.vt)"
                + " OR (" + closed + " AND v.next_vf IS NOT NULL AND v.ct = 'update' AND v.next_vf <> v.vt)"
                + " OR (" + isOpen(m, "v.vt") + " AND v.next_vf IS NOT NULL)", FROM, from);
    }

    // ---------------------------------------------------------------- reading the history

    @Override
    public Statement asOf(ResolvedModel m, AsOf point) {
        ColumnNames n = m.meta();
        boolean bySequence = point instanceof AsOf.Sequence;
        Object value = bySequence && m.sequenceKey() != null
                ? m.sequenceKey().keyOf(point.value()) : point.value();
        String literal = literal(bySequence ? m.sequenceColumn() : m.updatedAtColumn(), value);
        String from = bySequence ? n.openedSeq() : n.validFrom();
        String to = bySequence ? n.closedSeq() : n.validTo();
        String lit = bySequence ? ordered(m, literal) : literal;
        String in = bySequence ? ordered(m, col("h", from)) : col("h", from);
        String out = bySequence ? ordered(m, col("h", to)) : col("h", to);
        return Statement.of("point in time", "SELECT h.* FROM " + table(m.target()) + " h WHERE " + in + " <= " + lit
                + " AND (" + (bySequence ? col("h", to) + " IS NULL" : isOpen(m, col("h", to))) + " OR " + out + " > "
                + lit + ")"
                + (m.deletionRecords() ? " AND " + col("h", n.isDeleted()) + " = FALSE" : ""));
    }

    // ---------------------------------------------------------------- open versions (valid_to_current)

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
    @Override
    public Statement markOpenVersions(ResolvedModel m) {
        ColumnNames n = m.meta();
        String vt = quote(n.validTo());
        String other = m.validToCurrent() == null ? vt + " IS NOT NULL"
                : "(" + vt + " IS NULL OR " + vt + " <> " + openValidTo(m) + ")";
        return Statement.of("mark open versions", "UPDATE " + table(m.target()) + " SET " + vt + " = "
                + openValidTo(m) + " WHERE " + quote(n.closedSeq()) + " IS NULL AND " + other);
    }

    /** A typed SQL literal of a value read by {@link ValueType#coerce} (numbers, dates, times, strings escaped). */
    protected String literal(SourceColumn type, Object value) {
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
    public Statement createView(TableName view, Statement query) {
        return Statement.builder("create view").sql("CREATE VIEW " + table(view) + " AS ").sql(query).build();
    }
}
