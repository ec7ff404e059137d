package dev.itersnap.spi;

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

/**
 * The base of every dialect: the {@link Dialect} interface with standard defaults, and the <b>SQL primitives</b> the
 * engine writes every step of a run in (the steps themselves, and the batch rules, are the engine's; a dialect never
 * writes a step). A dialect author implements {@link Dialect}'s few methods and overrides the primitives where its
 * database differs:
 * <ul>
 *   <li><b>functions without a standard spelling</b> (abstract): {@link #md5Hex}, {@link #jsonObject},
 *       {@link #epochDays}, {@link #epochMicros}, {@link #chr}, and the DDL {@link #widenColumn};</li>
 *   <li><b>expressions with a standard default</b>: {@link #quote}, {@link #toText}, {@link #isDistinct},
 *       {@link #concat}, {@link #stringLiteral}, {@link #changedAttributesValue}, {@link #orderedAround},
 *       {@link #stringsHoldNul};</li>
 *   <li><b>types</b>: {@link #typeName} (logical types of the bookkeeping columns), plus {@link Dialect#columnType}
 *       and {@link Dialect#widens} for source columns;</li>
 *   <li><b>fingerprints</b> (restatement detection): {@link #hash64} (none by default: rows counted only),
 *       {@link #fingerprintText}, {@link #rowHash}, {@link #fingerprintFormat}, and {@link #partitionable} (what
 *       compares a value by identity);</li>
 *   <li><b>DDL</b>: {@link #createTable} (from {@link #tableOptions}, {@link #createScratchTable},
 *       {@link #indexName}), {@link #addColumn}, {@link #widenColumn}, {@link #prepareWidening},
 *       {@link #clearScratchTables}.</li>
 * </ul>
 * The helpers {@link #table}, {@link #col}, {@link #list}, {@link #keyJoin}, {@link #ordered}, {@link #param},
 * {@link #slot} and {@link #statement} compose text from those; a dialect's {@link PlanHints} use them too.
 *
 * <p>Values: the text is composed with named slots ({@link #slot}) where values go; {@link #statement} binds each
 * slot's value wherever it occurs, so a statement may use a value several times and in any order.
 */
public abstract class AbstractSqlDialect implements Dialect {
    /** This dialect: its own primitives. */
    @Override
    public final AbstractSqlDialect primitives() {
        return this;
    }


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
    public static String slot(String name) {
        return SLOT_MARK + ":" + name + "\u0001";
    }

    /** A statement from composed text: each slot's value bound where the slot occurs. */
    public static Statement statement(String step, String sql, Map<String, ?> values) {
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
    public static Statement statement(String step, String sql, String slot, Object value) {
        Map<String, Object> values = new LinkedHashMap<>();
        values.put(slot, value);
        return statement(step, sql, values);
    }

    /** A slot cast to the given column's type. */
    public String param(SourceColumn type, String slot) {
        return "CAST(" + slot(slot) + " AS " + columnType(type) + ")";
    }

    // ---------------------------------------------------------------- primitives

    @Override
    public String quote(String identifier) {
        return '"' + identifier.replace("\"", "\"\"") + '"';
    }

    /** A qualified, quoted table name. */
    public String table(TableName name) {
        return name.parts().stream().map(this::quote).collect(Collectors.joining("."));
    }

    /** {@code alias.column}, quoted. */
    public String col(String alias, String column) {
        return alias + "." + quote(column);
    }

    /** An expression: lower-case hex MD5 of a text expression. */
    public abstract String md5Hex(String textExpression);

    /** An expression converting any value to text. */
    public String toText(String expression) {
        return "CAST(" + expression + " AS VARCHAR)";
    }

    /** An expression building a JSON object text from names and value expressions. */
    public abstract String jsonObject(List<String> names, List<String> expressions);

    /** A boolean expression true when {@code a} and {@code b} differ, NULLs compared as values. */
    public String isDistinct(String a, String b) {
        return "(" + a + " IS DISTINCT FROM " + b + ")";
    }

    /** The DDL type of a logical column type; {@link TableSpec.ColumnType.Kind#LIKE} goes to {@link #columnType}. */
    public String typeName(TableSpec.ColumnType type) {
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
    public String changedAttributesValue(String textExpression) {
        return textExpression;
    }

    /**
     * How a sequence expression is wrapped on both sides of {@code <, <=, >, >=}: string sequences compare by code
     * point, so a dialect whose strings compare otherwise (a linguistic collation, UTF-16 code units) returns the
     * text before and after the expression that makes the comparison binary. Default: nothing.
     */
    public String[] orderedAround(ModelView m) {
        return new String[] {"", ""};
    }

    /** A sequence expression as it must appear in an ordering comparison ({@link #orderedAround}). */
    public final String ordered(ModelView m, String sequenceExpression) {
        String[] around = orderedAround(m);
        return around[0] + sequenceExpression + around[1];
    }

    /** String concatenation. */
    public String concat(List<String> parts) {
        return "(" + String.join(" || ", parts) + ")";
    }

    public String keyJoin(ModelView m, String a, String b) {
        return m.keys().stream().map(k -> col(a, k) + " = " + col(b, k)).collect(Collectors.joining(" AND "));
    }

    public String list(List<String> columns, String alias) {
        return columns.stream().map(c -> alias == null ? quote(c) : col(alias, c)).collect(Collectors.joining(", "));
    }

    /** A string literal; a dialect whose literals treat more characters specially escapes them too. */
    public String stringLiteral(String s) {
        return "'" + s.replace("'", "''") + "'";
    }

    // ---------------------------------------------------------------- tables

    /**
     * The statements creating a table described as data: its schema first when {@link TableSpec#createSchema()},
     * then the table, then its indexes, leaving out what the database lacks ({@link Capabilities}).
     */
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

    /**
     * One statement that creates (or replaces) the scratch table {@code spec} holding the rows of {@code query}, whose
     * columns are {@code columns} (columns of {@code spec}, in the query's order; the table's others are NULL), typed
     * as {@link #createTable} types them: what the run's first {@code INSERT INTO} the table becomes, so that creating
     * and filling it is one statement (and, on Delta Lake, one commit instead of two). Null where the database has no
     * such statement or empties its scratch tables instead ({@link #clearScratchTables}): the default.
     */
    public Statement createTableAs(TableSpec spec, List<String> columns, Statement query) {
        return null;
    }

    /** What follows a CREATE TABLE's column list (a storage format, table properties). Default: nothing. */
    public String tableOptions(TableSpec spec) {
        return "";
    }

    /**
     * How a scratch table (stage, work) is created, up to its name: {@code CREATE TABLE }. Scratch tables are
     * rebuilt by every run and never read by a later one, so a dialect may create them without crash safety.
     */
    public String createScratchTable() {
        return "CREATE TABLE ";
    }

    /** A quoted index name, qualified with its table's schema where the table has one. */
    public String indexName(TableName table, String index) {
        return table.schema() != null ? quote(table.schema()) + "." + quote(index) : quote(index);
    }

    /** Adds a source column to a table of the model (the history, the archive or the pending table). */
    public Statement addColumn(TableName table, SourceColumn column) {
        return Statement.of("add column", "ALTER TABLE " + table(table) + " ADD COLUMN " + quote(column.name()) + " "
                + columnType(column));
    }

    /**
     * Adds a bookkeeping column of a logical type to an existing table (the meta columns a history adopted from
     * another tool lacks).
     */
    public Statement addColumn(TableName table, String column, TableSpec.ColumnType type) {
        return Statement.of("add column", "ALTER TABLE " + table(table) + " ADD COLUMN " + quote(column) + " "
                + typeName(type));
    }

    // ---------------------------------------------------------------- reading the source

    // ---------------------------------------------------------------- the key of a sequence_by list

    /**
     * The days from 1970-01-01 to a DATE, an integer expression. No standard spelling: H2 {@code DATEDIFF(DAY, DATE
     * '1970-01-01', e)}, PostgreSQL and DuckDB {@code (e - DATE '1970-01-01')}, Spark {@code unix_date(e)}.
     */
    public abstract String epochDays(String e);

    /**
     * The microseconds from 1970-01-01 00:00 to a timestamp, an integer expression: of the UTC instant for a timestamp
     * with time zone ({@link ValueType#TIMESTAMP_TZ}), of the wall-clock time for one without. No standard spelling:
     * DuckDB {@code epoch_us(e)}, PostgreSQL {@code EXTRACT(EPOCH FROM e) * 1000000}, Spark {@code unix_micros(e)}.
     */
    public abstract String epochMicros(SourceColumn c, String e);

    /** The one-character string of this code point (1 to 3, and 0 where {@link #stringsHoldNul}): {@code chr(n)}. */
    public abstract String chr(int code);

    /** Whether strings can hold U+0000 (PostgreSQL's cannot, so it is not escaped there). */
    public boolean stringsHoldNul() {
        return true;
    }

    /**
     * Empties the run's scratch tables {@code tables} (they exist, in the shape this run needs) so that a run reuses
     * them instead of dropping and creating them: one statement or one per table. An empty list: the database
     * replaces its scratch tables instead (Delta's {@code CREATE OR REPLACE TABLE}, which is one commit anyway).
     * Default: {@code TRUNCATE TABLE} of each; nothing where the database creates or replaces its scratch tables.
     */
    public List<Statement> clearScratchTables(List<TableName> tables) {
        if (capabilities().createOrReplaceTable()) {
            return List.of();
        }
        return tables.stream().map(t -> Statement.of("clear scratch tables", "TRUNCATE TABLE " + table(t))).toList();
    }

    /**
     * A row's 64-bit hash (alias {@code alias}) over {@code columns} in the order given: {@link #hash64} of the
     * row's canonical text, which joins, for each column, {@code 'V' <length> ':' <text>} for a value
     * ({@link #fingerprintText}) and {@code 'N'} for NULL: unambiguous, whatever the values hold. A dialect may hash
     * another unambiguous text of the row (and says so in {@link #fingerprintFormat}).
     */
    public String rowHash(List<SourceColumn> columns, String alias) {
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
    public String fingerprintText(SourceColumn column, String expression) {
        return toText(expression);
    }

    /**
     * A 64-bit integer hash of a text expression ({@code BIGINT}), the same for the same text on every run; null when
     * the database has none (restatements are then not detected). Default: null.
     */
    public String hash64(String textExpression) {
        return null;
    }

    /**
     * An expression of a column's value that compares by identity, used in PARTITION BY (exact copies, duplicate
     * keys) and in the change comparison of tracked columns: the expression itself for types whose equality is
     * identity; the value's text for types without an equality operator, or whose {@code =} holds for values that
     * differ (PostgreSQL's json, xml, point; boxes and circles that compare by area; intervals where '1 day' equals
     * '24 hours').
     */
    public String partitionable(SourceColumn column, String expression) {
        return expression;
    }

    // ---------------------------------------------------------------- rollback

    // ---------------------------------------------------------------- applying the run's batches

    // ---------------------------------------------------------------- check

    // ---------------------------------------------------------------- reading the history

    // ---------------------------------------------------------------- open versions (valid_to_current)

    /** Changes {@code column} of {@code table} to the type of {@code to} (a widening, see {@link Dialect#widens}). */
    public abstract Statement widenColumn(TableName table, String column, SourceColumn to);

    /**
     * What a table needs before a column of it is widened, run before every {@link #widenColumn} (so idempotent):
     * Delta Lake's type widening is a table feature that upgrades the table's protocol, so it is enabled only when a
     * column is about to be widened. Default: nothing.
     */
    public List<Statement> prepareWidening(TableName table) {
        return List.of();
    }

    /**
     * The format of this dialect's fingerprints (the row text it hashes and the hash): part of every fingerprint's
     * signature, so that fingerprints of another format are recorded again, never compared. Empty for the first one.
     */
    public String fingerprintFormat() {
        return "";
    }

    /**
     * What follows {@code AS} in level {@code level} (from 0) of the engine's chain of window levels, a {@code WITH} of
     * one common table expression per level over the one before: empty by default (the database plans the chain as
     * one query), {@code "MATERIALIZED "} where planning the inlined chain costs more than computing the level once.
     */
    public String windowLevelMaterialization(int level) {
        return "";
    }

    /** Whether {@code text} is exactly one value slot ({@link #slot}). */
    public static boolean isSlot(String text) {
        return SLOT.matcher(text).matches();
    }
}
