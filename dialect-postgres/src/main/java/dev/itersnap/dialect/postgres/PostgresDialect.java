package dev.itersnap.dialect.postgres;

import dev.itersnap.core.TableName;
import dev.itersnap.spi.AbstractSqlDialect;
import dev.itersnap.spi.ModelLock;
import dev.itersnap.spi.PlanHints;
import dev.itersnap.spi.ModelView;
import dev.itersnap.spi.SourceColumn;
import dev.itersnap.spi.StageScope;
import dev.itersnap.spi.Statement;
import dev.itersnap.spi.TableSpec;
import dev.itersnap.spi.ValueType;

import javax.sql.DataSource;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;

/**
 * PostgreSQL 15 and newer: MERGE, transactional DDL (schema changes commit with the run's first transaction),
 * {@code jsonb} for {@code changed_attributes}, a session advisory lock for the model lock.
 */
public final class PostgresDialect extends AbstractSqlDialect implements PlanHints {

    /**
     * Identifiers have at most 63 bytes (NAMEDATALEN - 1); longer ones are cut silently by the server. A table has at
     * most 1,600 columns (MaxHeapAttributeNumber), a query's target list and a join's rows 1,664
     * (MaxTupleAttributeNumber).
     */
    private static final dev.itersnap.spi.Capabilities CAPABILITIES =
            dev.itersnap.spi.Capabilities.STANDARD.maxIdentifierLength(63).maxColumns(1600).maxQueryColumns(1664);

    @Override
    public String name() {
        return "postgres";
    }

    /** This dialect's plan hints: index probes of the source, a semi-join for the timeline check, ANALYZE. */
    @Override
    public PlanHints planHints() {
        return this;
    }

    @Override
    public dev.itersnap.spi.Capabilities capabilities() {
        return CAPABILITIES;
    }

    @Override
    public boolean handlesUrl(String jdbcUrl) {
        return jdbcUrl.contains(":postgresql:");
    }

    @Override
    public boolean handlesProduct(String productName) {
        return productName.equalsIgnoreCase("PostgreSQL");
    }

    /**
     * {@code hashtextextended} (PostgreSQL 11 and later): the 64-bit hash PostgreSQL uses for hash partitioning, stable
     * across versions and platforms since partitions depend on it.
     */
    @Override
    public String hash64(String textExpression) {
        return "hashtextextended(" + textExpression + ", 0)";
    }

    /**
     * The row as a typed record hashed by {@code hash_record_extended} (PostgreSQL 14 and later): each value by its
     * type's extended hash function, combined in column order, NULL apart from any value. No value is turned into
     * text, which was two thirds of the work (measured on PostgreSQL 18: 1,000,000 rows of six columns hashed and
     * summed in 275 ms against 665 ms for the record's text), and no session setting changes a hash (a
     * {@code timestamptz}'s or a float's text depends on {@code TimeZone} and {@code extra_float_digits}). The types
     * hashed as they are ({@link #HASHED_TYPED}) have a hash consistent with their {@code =}; every other type (json,
     * xml, intervals, geometric and range types, arrays, enums, domains, extension types) is hashed as its text, so a
     * change that {@code =} would not see ('1 day' to '24 hours') still changes the hash.
     */
    @Override
    public String rowHash(List<SourceColumn> columns, String alias) {
        List<String> values = new ArrayList<>();
        for (SourceColumn c : columns) {
            String v = col(alias, c.name());
            values.add(HASHED_TYPED.contains(c.typeName().toLowerCase(Locale.ROOT)) ? v : "CAST(" + v + " AS TEXT)");
        }
        return "hash_record_extended(ROW(" + String.join(", ", values) + "), 0)";
    }

    /**
     * Types hashed by value in {@link #rowHash}: their hash function agrees with their {@code =}, which is identity
     * of the value or (numeric scale, a char's trailing blanks, a float's zero sign) a difference that the history's
     * own change comparison does not see either. Changing this list changes {@link #fingerprintFormat}'s name.
     */
    private static final java.util.Set<String> HASHED_TYPED = java.util.Set.of("int2", "int4", "int8", "numeric",
            "float4", "float8", "varchar", "bpchar", "text", "name", "bool", "date", "time", "timestamp",
            "timestamptz", "bytea", "uuid", "jsonb", "oid");

    /** Typed record hash, see {@link #rowHash}; the name changes whenever what a row's hash is changes. */
    @Override
    public String fingerprintFormat() {
        return "pg-record-hash-1\n";
    }

    @Override
    public String md5Hex(String textExpression) {
        return "md5(" + textExpression + ")";
    }

    @Override
    public String toText(String expression) {
        return "CAST(" + expression + " AS TEXT)";
    }

    @Override
    public String epochDays(String e) {
        return "(" + e + " - DATE '1970-01-01')";
    }

    /** EXTRACT(EPOCH ...) is an exact numeric (PostgreSQL 14 on); for a timestamp without time zone, of its wall time. */
    @Override
    public String epochMicros(SourceColumn c, String e) {
        return "CAST(EXTRACT(EPOCH FROM " + e + ") * 1000000 AS BIGINT)";
    }

    @Override
    public String chr(int code) {
        return "CHR(" + code + ")";
    }

    @Override
    public boolean stringsHoldNul() {
        return false;
    }

    /** {@code row_to_json} has no argument limit (json_build_object stops at 50 columns). */
    @Override
    public String jsonObject(List<String> names, List<String> expressions) {
        List<String> cols = new ArrayList<>();
        for (int i = 0; i < names.size(); i++) {
            cols.add(expressions.get(i) + " AS " + quote(names.get(i)));
        }
        return "(SELECT CAST(row_to_json(r) AS TEXT) FROM (SELECT " + String.join(", ", cols) + ") r)";
    }

    /** Long text is {@code TEXT}; changed_attributes is {@code JSONB}. */
    @Override
    public String typeName(TableSpec.ColumnType type) {
        return switch (type.kind()) {
            case LONG_TEXT -> "TEXT";
            case JSON -> "JSONB";
            default -> super.typeName(type);
        };
    }

    @Override
    public String changedAttributesValue(String textExpression) {
        return "CAST(" + textExpression + " AS JSONB)";
    }

    /** String sequences compare by code point whatever the database's collation. */
    @Override
    public String[] orderedAround(ModelView m) {
        return m.sequenceType() == ValueType.STRING ? new String[] {"", " COLLATE \"C\""} : super.orderedAround(m);
    }

    /**
     * Types whose {@code =} is identity of the value (arrays of them too, {@code _int4} ...). Every other type is
     * compared as its text: those without an equality operator (json, xml, point, line, path, polygon, ...), those
     * whose {@code =} holds for different values (box and circle compare areas, interval takes '1 day' for
     * '24 hours'), and types this list does not know (enums, domains over them, extension types).
     */
    private static final java.util.Set<String> IDENTITY_EQUALITY = java.util.Set.of("int2", "int4", "int8",
            "numeric", "float4", "float8", "money", "varchar", "bpchar", "text", "name", "char", "bool", "date",
            "time", "timetz", "timestamp", "timestamptz", "bytea", "uuid", "jsonb", "inet", "cidr", "macaddr",
            "macaddr8", "bit", "varbit", "tsvector", "tsquery", "oid", "pg_lsn", "int4range", "int8range", "numrange",
            "daterange", "tsrange", "tstzrange");

    @Override
    public String partitionable(SourceColumn column, String expression) {
        String t = column.typeName().toLowerCase(Locale.ROOT);
        String base = t.startsWith("_") ? t.substring(1) : t;
        return IDENTITY_EQUALITY.contains(base) ? expression : "CAST(" + expression + " AS TEXT)";
    }

    /**
     * Scratch tables skip the write-ahead log: every run drops and recreates them, and after a crash PostgreSQL
     * empties an unlogged table, which the next run recreates anyway.
     */
    @Override
    public String createScratchTable() {
        return "CREATE UNLOGGED TABLE ";
    }

    /**
     * For a plain table source whose sequence column leads a valid, non-partial B-tree index (with the column's own
     * collation), the distinct sequences are read by a loose index scan: one index probe per sequence instead of
     * reading every row (PostgreSQL has no skip scan for DISTINCT). Otherwise, and for any other source, the plain
     * {@code SELECT DISTINCT}. The query checks the catalog itself; a one-time filter runs only one of the two forms.
     * The recursion compares with the column's own collation, so any total order the index has enumerates every
     * value once (the same values DISTINCT gives); a NULL sequence is reported by its own probe. No row is counted:
     * a run counts only the batches it applies or checks.
     */
    @Override
    public Statement discoverSequences(ModelView m, String rel) {
        if (rel.startsWith("(")) {
            return null;
        }
        String seq = col("s", m.sequenceBy());
        String indexed = sequenceIndexed(m, rel);
        // the gate is a CTE: evaluated once, and (parallel restricted) above any parallel scan, so a plan that is
        // not taken starts no workers
        String loose = "WITH RECURSIVE itersnap_gate(ok) AS (SELECT " + indexed + "), itersnap_seq(v) AS ((SELECT "
                + seq + " FROM " + rel + " s WHERE " + seq + " IS NOT NULL ORDER BY " + seq + " LIMIT 1) UNION ALL "
                + "SELECT (SELECT " + seq + " FROM " + rel + " s WHERE " + seq + " > r.v ORDER BY " + seq
                + " LIMIT 1) FROM itersnap_seq r WHERE r.v IS NOT NULL)";
        String gate = "(SELECT ok FROM itersnap_gate)";
        return Statement.of("discover", loose + " SELECT v FROM itersnap_seq r WHERE v IS NOT NULL AND " + gate
                + " UNION ALL SELECT NULL WHERE " + gate + " AND EXISTS (SELECT 1 FROM " + rel + " s WHERE " + seq
                + " IS NULL) UNION ALL SELECT DISTINCT " + seq + " FROM " + rel + " s WHERE NOT " + gate);
    }

    /**
     * Statistics for the scratch tables a run fills before it reads them: the stage (once staged), the keys the run
     * computes and the work table (once derived). Autovacuum cannot have seen them yet, and without statistics the planner takes the default
     * selectivities ({@code IS NULL}, {@code = 1}: half a percent), estimates a hundred rows where there are a hundred
     * thousand and joins them by nested loops. ANALYZE reads a sample (at most 30,000 rows) and is transactional.
     */
    @Override
    public List<Statement> statistics(TableName table) {
        return List.of(Statement.of("analyze " + table.table(), "ANALYZE " + table(table)));
    }

    /**
     * For a plain table source, the rows a key-scoped replay stages are probed through an index of the source where
     * one serves: each batch applied in full through a B-tree index led by the sequence column (the index discovery
     * uses), each (replayed batch, key) pair through one led by the key columns (in any order), or by the key columns
     * and the sequence column. A lateral subquery the planner cannot flatten: a late batch 20 deep whose rows change
     * 1,200 keys of 100,000 reads one batch and about 25,000 index entries instead of hashing every row of 21 batches
     * (two million). The plan so depends neither on the statistics of the scratch tables nor on the source's. Without
     * such an index the join form (a probe would read the whole source each time). Both forms sit in one statement
     * behind a one-time filter that reads the catalog, as in {@link #discoverSequences}.
     */
    @Override
    public String scopedRows(ModelView m, String relation, StageScope scope, String from, String joined) {
        if (relation.startsWith("(")) {
            return joined;
        }
        String seq = m.sequenceBy();
        String columns = list(m.sourceNames(), "s0");
        String fromBatches = " FROM " + table(m.batches()) + " sb";
        String range = ordered(m, col("sb", seq)) + " >= " + ordered(m, param(m.sequenceColumn(), from));
        String probe = " CROSS JOIN LATERAL (SELECT " + columns + " FROM " + relation + " s0 WHERE " + col("s0", seq)
                + " = " + col("sb", seq);
        String gate;
        String probed;
        if (scope == StageScope.FRESH) {
            gate = sequenceIndexed(m, relation);
            probed = "SELECT " + columns + fromBatches + probe + " OFFSET 0) s0 WHERE NOT "
                    + col("sb", m.id(REPLAYED)) + " AND " + range + " AND " + gate;
        } else {
            int n = m.keys().size();
            // key columns of the index (not INCLUDE ones), each in its column's own collation; n distinct columns
            // in the first n slots are exactly those
            List<String> keyed = new ArrayList<>(List.of("i.indnkeyatts >= " + n, ownCollations(n)));
            List<String> keyedWithSequence = new ArrayList<>(List.of("i.indnkeyatts > " + n, ownCollations(n + 1)));
            for (String k : m.keys()) {
                keyed.add(attnum(k) + " IN (" + indexColumns(n) + ")");
                keyedWithSequence.add(attnum(k) + " IN (" + indexColumns(n + 1) + ")");
            }
            keyedWithSequence.add(attnum(seq) + " IN (" + indexColumns(n + 1) + ")");
            gate = btreeIndexed(relation, "", "((" + String.join(" AND ", keyed) + ") OR ("
                    + String.join(" AND ", keyedWithSequence) + "))");
            probed = "SELECT " + columns + fromBatches + " JOIN " + table(m.keysTable()) + " sk ON "
                    + col("sb", m.id(REPLAYED)) + " AND " + col("sk", m.id(RECOMPUTED_FROM))
                    + " = 1 AND " + range + probe + " AND " + keyJoin(m, "sk", "s0") + " OFFSET 0) s0 WHERE " + gate;
        }
        return "(" + probed + " UNION ALL SELECT " + columns + " FROM " + joined + " AND NOT " + gate + ") s0";
    }

    /**
     * True (evaluated by the database) when the sequence column leads a valid, non-partial B-tree index of table
     * {@code relation} with the column's own collation.
     */
    private String sequenceIndexed(ModelView m, String relation) {
        return btreeIndexed(relation, " JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = "
                + "i.indkey[0]", "a.attname = " + stringLiteral(m.sequenceBy())
                + " AND i.indcollation[0] = a.attcollation");
    }

    /**
     * True (evaluated by the database) when table {@code relation} has a valid, non-partial B-tree index {@code i}
     * meeting {@code condition} (over what {@code join} adds, if anything).
     */
    private String btreeIndexed(String relation, String join, String condition) {
        return "EXISTS (SELECT 1 FROM pg_catalog.pg_index i JOIN pg_catalog.pg_class ic ON ic.oid = i.indexrelid "
                + "JOIN pg_catalog.pg_am am ON am.oid = ic.relam" + join + " WHERE i.indrelid = to_regclass("
                + stringLiteral(relation) + ") AND am.amname = 'btree' AND i.indisvalid AND i.indpred IS NULL AND "
                + condition + ")";
    }

    /** The attribute number of the indexed table's column {@code name}, inside {@link #btreeIndexed}. */
    private String attnum(String name) {
        return "(SELECT a.attnum FROM pg_catalog.pg_attribute a WHERE a.attrelid = i.indrelid AND a.attname = "
                + stringLiteral(name) + ")";
    }

    /** True when each of the first {@code n} columns of index {@code i} has its column's own collation. */
    private static String ownCollations(int n) {
        return "NOT EXISTS (SELECT 1 FROM generate_series(0, " + (n - 1) + ") j JOIN pg_catalog.pg_attribute a ON "
                + "a.attrelid = i.indrelid AND a.attnum = i.indkey[j] WHERE i.indcollation[j] <> a.attcollation)";
    }

    /** The first {@code n} columns of index {@code i}, as attribute numbers (NULL past its last column). */
    private static String indexColumns(int n) {
        List<String> slots = new ArrayList<>();
        for (int j = 0; j < n; j++) {
            slots.add("i.indkey[" + j + "]");
        }
        return String.join(", ", slots);
    }

    /**
     * A correlated {@code EXISTS}: PostgreSQL makes it a hashed semi-join, where the join form sorts the whole history
     * for a merge join (K=100k: ~34 against ~73 ms per in-order run).
     */
    @Override
    public String touchedVersions(ModelView m, String p) {
        return table(m.target()) + " h WHERE EXISTS (SELECT 1 FROM " + table(m.target()) + " x WHERE "
                + keyJoin(m, "x", "h") + " AND (" + ordered(m, col("x", m.meta().openedSeq())) + " >= " + p + " OR "
                + ordered(m, col("x", m.meta().closedSeq())) + " >= " + p + "))";
    }

    /** PostgreSQL creates an index in its table's schema and refuses a qualified index name. */
    @Override
    public String indexName(TableName table, String index) {
        return quote(index);
    }

    @Override
    public String columnType(SourceColumn c) {
        String t = c.typeName().toLowerCase(Locale.ROOT);
        switch (t) {
            case "varchar":
                return c.precision() > 0 && c.precision() < 10_485_760 ? "varchar(" + c.precision() + ")" : "varchar";
            case "bpchar":
                return c.precision() > 0 && c.precision() < 10_485_760 ? "char(" + c.precision() + ")" : "char";
            case "numeric":
                return c.precision() > 0 && c.precision() <= 1000 ? "numeric(" + c.precision() + ", " + c.scale() + ")"
                        : "numeric";
            case "timestamp":
                return "timestamp(" + Math.min(6, Math.max(0, c.scale())) + ")";
            case "timestamptz":
                return "timestamptz(" + Math.min(6, Math.max(0, c.scale())) + ")";
            case "time":
                return "time(" + Math.min(6, Math.max(0, c.scale())) + ")";
            case "timetz":
                return "timetz(" + Math.min(6, Math.max(0, c.scale())) + ")";
            case "bit":
                return c.precision() > 0 && c.precision() < 83_886_080 ? "bit(" + c.precision() + ")" : "bit";
            case "varbit":
                return c.precision() > 0 && c.precision() < 83_886_080 ? "varbit(" + c.precision() + ")" : "varbit";
            case "char":
                return "\"char\""; // the one-byte internal type, not char(1)
            case "int2": return "smallint";
            case "int4": return "integer";
            case "int8": return "bigint";
            case "float4": return "real";
            case "float8": return "double precision";
            case "bool": return "boolean";
            default:
                return quoteTypeIfNeeded(t);
        }
    }

    private String quoteTypeIfNeeded(String t) {
        return t.matches("[a-z_][a-z0-9_]*(\\[\\])?") ? t : quote(t);
    }

    @Override
    public Statement widenColumn(TableName table, String column, SourceColumn to) {
        return Statement.of("widen column", "ALTER TABLE " + table(table) + " ALTER COLUMN " + quote(column) + " TYPE "
                + columnType(to));
    }

    @Override
    public boolean widens(SourceColumn from, SourceColumn to) {
        return widening(from, to);
    }

    private static boolean widening(SourceColumn from, SourceColumn to) {
        int f = rank(from.jdbcType());
        int t = rank(to.jdbcType());
        if (f > 0 && t > 0) {
            return t >= f;
        }
        String ft = from.typeName().toLowerCase(Locale.ROOT);
        String tt = to.typeName().toLowerCase(Locale.ROOT);
        if (ft.equals("varchar") && (tt.equals("text") || tt.equals("varchar") && (to.precision() >= from.precision()
                || to.precision() <= 0))) {
            return true;
        }
        if (ft.equals("numeric") && tt.equals("numeric")) {
            return to.precision() <= 0 || to.precision() > 1000 || to.scale() >= from.scale()
                    && to.precision() - to.scale() >= from.precision() - from.scale();
        }
        return ft.equals(tt) && (ft.equals("timestamp") || ft.equals("timestamptz")) && to.scale() >= from.scale();
    }

    private static int rank(int jdbcType) {
        switch (jdbcType) {
            case Types.SMALLINT: return 1;
            case Types.INTEGER: return 2;
            case Types.BIGINT: return 3;
            default: return 0;
        }
    }

    @Override
    public ModelLock lock(DataSource dataSource, ModelView m, Duration timeout, Supplier<String> describeHolder)
            throws SQLException {
        return PostgresAdvisoryLock.acquire(dataSource, m, timeout, describeHolder);
    }

    /** Reads {@code pg_locks} for the model's advisory lock: held while a live session has it, without waiting. */
    @Override
    public dev.itersnap.spi.LockState lockState(java.sql.Connection connection, dev.itersnap.spi.MetadataSchema metadata,
                                                String model) throws SQLException {
        return PostgresAdvisoryLock.observe(connection, metadata.schema(), model);
    }

    /** One {@code TRUNCATE} of all of them (transactional; the tables keep their indexes). */
    @Override
    public List<Statement> clearScratchTables(List<TableName> tables) {
        List<String> names = new ArrayList<>();
        tables.forEach(t -> names.add(table(t)));
        return List.of(Statement.of("clear scratch tables", "TRUNCATE TABLE " + String.join(", ", names)));
    }
}
