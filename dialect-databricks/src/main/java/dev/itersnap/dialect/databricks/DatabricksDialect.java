package dev.itersnap.dialect.databricks;

import dev.itersnap.core.ColumnNames;
import dev.itersnap.core.TableName;
import dev.itersnap.spi.AbstractSqlDialect;
import dev.itersnap.spi.ModelLock;
import dev.itersnap.spi.ResolvedModel;
import dev.itersnap.spi.SourceColumn;

import javax.sql.DataSource;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;
import java.util.regex.Pattern;

/**
 * Databricks and Spark SQL over Delta Lake, through the Databricks JDBC driver or a {@link SparkDataSource}.
 *
 * <p>What differs from {@link AbstractSqlDialect}: backtick quoting; Spark's spellings ({@code STRING},
 * {@code md5}, {@code to_json(named_struct(...))}, backslash-escaped literals); Delta DDL ({@code USING DELTA}, no
 * primary keys, no indexes, type widening enabled on the tables whose columns may widen); and three statements that
 * Delta refuses or that would return no row count, rewritten as {@code MERGE} with their documented bind order
 * unchanged ({@link #closeAbsent}, {@link #fillIntroduced}, {@link #insertDeletionRecords}, {@link #logNullSequences}).
 * DML is not transactional: every statement is its own Delta commit. The model lock is a lease row
 * ({@link DeltaLease}). Stateless and thread-safe.
 */
public final class DatabricksDialect extends AbstractSqlDialect {
    private static final Pattern VARCHAR = Pattern.compile("VARCHAR\\(\\d+\\)");
    private static final Pattern TABLE_PRIMARY_KEY = Pattern.compile(", PRIMARY KEY \\([^)]*\\)");
    private static final String TYPE_WIDENING = " TBLPROPERTIES ('delta.enableTypeWidening' = 'true')";

    @Override
    public String name() {
        return "databricks";
    }

    @Override
    public boolean handlesUrl(String jdbcUrl) {
        return jdbcUrl.startsWith("jdbc:databricks:");
    }

    /** {@code SparkSQL} (the Databricks JDBC driver), {@code Spark SQL} ({@link SparkDataSource}), or Databricks. */
    @Override
    public boolean handlesProduct(String productName) {
        String p = productName.toLowerCase(Locale.ROOT).replace(" ", "");
        return p.equals("sparksql") || p.startsWith("databricks");
    }

    /** Every Delta statement commits on its own; there are no multi-statement transactions. */
    @Override
    public boolean transactionalDml() {
        return false;
    }

    // ---------------------------------------------------------------- primitives

    /** Backticks, a backtick inside doubled; a double-quoted name is a string literal in Spark SQL. */
    @Override
    public String quote(String identifier) {
        return '`' + identifier.replace("`", "``") + '`';
    }

    @Override
    protected String md5Hex(String textExpression) {
        return "md5(" + textExpression + ")";
    }

    @Override
    protected String toText(String expression) {
        return "CAST(" + expression + " AS STRING)";
    }

    /** {@code ignoreNullFields=false} keeps NULL columns in the record (to_json drops them by default). */
    @Override
    protected String jsonObject(List<String> names, List<String> expressions) {
        List<String> fields = new ArrayList<>();
        for (int i = 0; i < names.size(); i++) {
            fields.add(stringLiteral(names.get(i)));
            fields.add(expressions.get(i));
        }
        return "to_json(named_struct(" + String.join(", ", fields) + "), map('ignoreNullFields', 'false'))";
    }

    @Override
    protected String longTextType() {
        return "STRING";
    }

    /** A backslash starts an escape in a Spark string literal, so it is escaped like the quote. */
    @Override
    protected String stringLiteral(String s) {
        return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'";
    }

    /** The sequence text as STRING ({@code VARCHAR(n)} casts log a warning). */
    @Override
    protected String sequenceTextParam() {
        return "CAST(? AS STRING)";
    }

    // ---------------------------------------------------------------- types

    /**
     * Spark SQL's name for the type the JDBC metadata describes: strings of any length are {@code STRING}, a
     * timestamp without time zone (Spark {@code TIMESTAMP_NTZ}) keeps that name, other types keep the database's name.
     */
    @Override
    public String columnType(SourceColumn c) {
        String name = c.typeName() == null ? "" : c.typeName().toUpperCase(Locale.ROOT);
        switch (c.jdbcType()) {
            case Types.CHAR: case Types.VARCHAR: case Types.NCHAR: case Types.NVARCHAR: case Types.LONGVARCHAR:
            case Types.LONGNVARCHAR: case Types.CLOB: case Types.NCLOB:
                return "STRING";
            case Types.TINYINT: return "TINYINT";
            case Types.SMALLINT: return "SMALLINT";
            case Types.INTEGER: return "INT";
            case Types.BIGINT: return "BIGINT";
            case Types.NUMERIC: case Types.DECIMAL:
                return c.precision() > 0 && c.precision() <= 38
                        ? "DECIMAL(" + c.precision() + "," + Math.max(0, c.scale()) + ")" : "DECIMAL(38,18)";
            case Types.REAL: return "FLOAT";
            case Types.FLOAT: case Types.DOUBLE: return name.equals("FLOAT") ? "FLOAT" : "DOUBLE";
            case Types.BOOLEAN: case Types.BIT: return "BOOLEAN";
            case Types.DATE: return "DATE";
            case Types.TIMESTAMP:
                return name.contains("NTZ") ? "TIMESTAMP_NTZ" : "TIMESTAMP";
            case Types.TIMESTAMP_WITH_TIMEZONE: return "TIMESTAMP";
            case Types.BINARY: case Types.VARBINARY: case Types.LONGVARBINARY: case Types.BLOB: return "BINARY";
            default:
                return name;
        }
    }

    /**
     * The widenings Delta's type widening applies in place: a wider integer type, a DECIMAL with at least as many
     * integer and fraction digits, FLOAT to DOUBLE. (Strings are all STRING, so they never need widening.)
     */
    @Override
    public boolean widens(SourceColumn from, SourceColumn to) {
        String f = columnType(from);
        String t = columnType(to);
        if (f.equals(t)) {
            return true;
        }
        int fr = integerRank(f);
        int tr = integerRank(t);
        if (fr > 0 && tr > 0) {
            return tr >= fr;
        }
        boolean decimals = isDecimal(from.jdbcType()) && isDecimal(to.jdbcType());
        if (decimals) {
            return to.scale() >= from.scale() && to.precision() - to.scale() >= from.precision() - from.scale();
        }
        return f.equals("FLOAT") && t.equals("DOUBLE");
    }

    private static int integerRank(String type) {
        return List.of("TINYINT", "SMALLINT", "INT", "BIGINT").indexOf(type) + 1;
    }

    private static boolean isDecimal(int jdbcType) {
        return jdbcType == Types.DECIMAL || jdbcType == Types.NUMERIC;
    }

    /** Needs {@code delta.enableTypeWidening}, which the history and archive tables are created with. */
    @Override
    public String widenColumn(TableName table, String column, SourceColumn to) {
        return "ALTER TABLE " + table(table) + " ALTER COLUMN " + quote(column) + " TYPE " + columnType(to);
    }

    // ---------------------------------------------------------------- DDL

    /**
     * The ledger, run log, error log and column registry as Delta tables, without primary keys (Delta has none;
     * Unity Catalog's are informational): the engine never relies on them. The lease table belongs to
     * {@link DeltaLease}; the row-lock table other dialects use is not created.
     */
    @Override
    public List<String> createMetadata(ResolvedModel m) {
        String lockTable = table(m.metaTable("itersnap_lock"));
        List<String> out = new ArrayList<>();
        for (String s : super.createMetadata(m)) {
            if (!s.contains(lockTable + " (")) {
                out.add(delta(s, ""));
            }
        }
        return out;
    }

    /** The history as a Delta table with type widening on; no indexes (Delta has none). */
    @Override
    public List<String> createHistory(ResolvedModel m) {
        return deltaTables(super.createHistory(m), TYPE_WIDENING);
    }

    @Override
    public List<String> createArchive(ResolvedModel m) {
        return deltaTables(super.createArchive(m), TYPE_WIDENING);
    }

    /** {@code CREATE OR REPLACE} empties and reshapes a scratch table in one statement (no DROP, no index). */
    @Override
    public List<String> createScratch(ResolvedModel m) {
        List<String> out = new ArrayList<>();
        for (String s : super.createScratch(m)) {
            if (s.startsWith("CREATE TABLE ")) {
                out.add(delta("CREATE OR REPLACE TABLE " + s.substring("CREATE TABLE ".length()), ""));
            }
        }
        return out;
    }

    @Override
    public String addColumn(ResolvedModel m, TableName table, SourceColumn column) {
        return "ALTER TABLE " + table(table) + " ADD COLUMNS (" + quote(column.name()) + " " + columnType(column) + ")";
    }

    /** Drops the index statements and makes each CREATE TABLE a Delta table. */
    private static List<String> deltaTables(List<String> ddl, String properties) {
        List<String> out = new ArrayList<>();
        for (String s : ddl) {
            if (!s.startsWith("CREATE INDEX")) {
                out.add(s.startsWith("CREATE TABLE") ? delta(s, properties) : s);
            }
        }
        return out;
    }

    /** A CREATE TABLE as a Delta table: no PRIMARY KEY, STRING for VARCHAR(n), {@code USING DELTA}. */
    private static String delta(String createTable, String properties) {
        if (!createTable.startsWith("CREATE")) {
            return createTable;
        }
        String s = TABLE_PRIMARY_KEY.matcher(createTable).replaceAll("").replace(" NOT NULL PRIMARY KEY", " NOT NULL");
        s = VARCHAR.matcher(s).replaceAll("STRING");
        return s.startsWith("CREATE SCHEMA") ? s : s + " USING DELTA" + properties;
    }

    // ---------------------------------------------------------------- statements Delta refuses as written

    /**
     * {@inheritDoc}
     * <p>Delta refuses a subquery in UPDATE's WHERE, so the versions to close are a MERGE source read from the
     * history itself. The binds move into the source's select list, ahead of its WHERE, so their order stays
     * AbstractSqlDialect's: deletion time, deletion time, sequence (closing), sequence (the batch in the stage).
     * Assumes at most one open version per key, the invariant the timeline check verifies. ({@code WHEN NOT MATCHED
     * BY SOURCE} would save the self-join but puts the stage's bind first, which the engine's bind order forbids.)
     */
    @Override
    public String closeAbsent(ResolvedModel m) {
        ColumnNames n = m.meta();
        String dt = param(m.updatedAtColumn());
        String seq = param(m.sequenceColumn());
        String t = table(m.target());
        String source = "SELECT " + list(m.keys(), "h") + ", " + dt + " AS " + quote(m.id("itersnap_dt1")) + ", " + dt
                + " AS " + quote(m.id("itersnap_dt2")) + ", " + seq + " AS " + quote(m.id("itersnap_closing"))
                + " FROM " + t + " h WHERE " + col("h", n.validTo()) + " IS NULL AND " + notDeletionRecord(m, "h")
                + " AND NOT EXISTS (SELECT 1 FROM " + table(m.stage()) + " s WHERE " + col("s", m.sequenceBy())
                + " = " + seq + " AND " + keyJoin(m, "s", "h") + ")";
        return "MERGE INTO " + t + " t USING (" + source + ") a ON " + keyJoin(m, "t", "a") + " AND "
                + col("t", n.validTo()) + " IS NULL AND " + notDeletionRecord(m, "t")
                + " WHEN MATCHED THEN UPDATE SET " + quote(n.validTo()) + " = CASE WHEN " + col("t", n.validFrom())
                + " > " + col("a", m.id("itersnap_dt1")) + " THEN " + col("t", n.validFrom()) + " ELSE "
                + col("a", m.id("itersnap_dt2")) + " END, " + quote(n.changeType()) + " = 'delete', "
                + quote(n.changedAttributes()) + " = NULL, " + quote(n.closedSeq()) + " = "
                + col("a", m.id("itersnap_closing"));
    }

    /**
     * {@inheritDoc}
     * <p>Delta refuses a correlated subquery in SET: a MERGE from the work table instead. Keys of rows not set aside
     * are unique in the work table, so no history row matches twice.
     */
    @Override
    public String fillIntroduced(ResolvedModel m, String column) {
        return "MERGE INTO " + table(m.target()) + " t USING (SELECT " + list(m.keys(), "w") + ", " + col("w", column)
                + " FROM " + table(m.work()) + " w WHERE " + col("w", m.id(REJECT)) + " IS NULL) w ON "
                + keyJoin(m, "t", "w") + " AND " + col("t", m.meta().validTo()) + " IS NULL WHEN MATCHED THEN UPDATE SET "
                + quote(column) + " = " + col("w", column);
    }

    /**
     * {@inheritDoc}
     * <p>As {@code MERGE ... ON FALSE}: a Spark INSERT returns no row count, and the engine adds this one to the
     * batch's inserted rows. Binds keep their order: sequence text, sequence (opening), sequence (closed by the
     * batch).
     */
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
        String t = table(m.target());
        return insertCounted(m, t, cols, values, " FROM " + t + " h WHERE " + col("h", n.closedSeq()) + " = "
                + param(m.sequenceColumn()) + " AND " + col("h", n.changeType()) + " = 'delete' AND "
                + col("h", n.isDeleted()) + " = FALSE");
    }

    /**
     * {@inheritDoc}
     * <p>As {@code MERGE ... ON FALSE}, for the row count (the engine reports it in an event). The times a record is
     * already logged come from a join, not a subquery expression: Delta cannot read a MERGE's target table inside a
     * subquery expression of its source ("Table does not support reads"). Binds keep their order: model, run id,
     * logged-at time (select list), model (the joined count).
     */
    @Override
    public String logNullSequences(ResolvedModel m) {
        List<String> exprs = m.sourceNames().stream().map(c -> col("s", c)).toList();
        String json = jsonObject(m.sourceNames(), exprs);
        String errors = table(m.metaTable("itersnap_errors"));
        List<String> cols = List.of(m.id("model"), m.id("run_id"), m.id("sequence_value"), m.id("reason"),
                m.id("record"), m.id("logged_at"));
        List<String> values = List.of("CAST(? AS STRING)", "CAST(? AS STRING)", "CAST(NULL AS STRING)",
                "'null_sequence'", "x.rec", "CAST(? AS TIMESTAMP)");
        return insertCounted(m, errors, cols, values, " FROM (SELECT " + json + " AS rec, ROW_NUMBER() OVER "
                + "(PARTITION BY " + json + " ORDER BY " + json + ") AS rn FROM " + table(m.stage()) + " s WHERE "
                + col("s", m.sequenceBy()) + " IS NULL) x LEFT JOIN (SELECT " + col("e", m.id("record")) + " AS rec, "
                + "COUNT(*) AS n FROM " + errors + " e WHERE " + col("e", m.id("model")) + " = ? AND "
                + col("e", m.id("reason")) + " = 'null_sequence' GROUP BY " + col("e", m.id("record")) + ") p ON "
                + "p.rec = x.rec WHERE x.rn > COALESCE(p.n, 0)");
    }

    /** {@code INSERT INTO t (cols) SELECT values <from>} as a MERGE that reports num_inserted_rows. */
    private String insertCounted(ResolvedModel m, String target, List<String> cols, List<String> values,
                                 String from) {
        List<String> aliased = new ArrayList<>();
        List<String> refs = new ArrayList<>();
        for (int i = 0; i < values.size(); i++) {
            aliased.add(values.get(i) + " AS " + quote(m.id("itersnap_c" + i)));
            refs.add(col("d", m.id("itersnap_c" + i)));
        }
        return "MERGE INTO " + target + " t USING (SELECT " + String.join(", ", aliased) + from
                + ") d ON FALSE WHEN NOT MATCHED THEN INSERT (" + list(cols, null) + ") VALUES ("
                + String.join(", ", refs) + ")";
    }

    // ---------------------------------------------------------------- locking

    /** A lease row in the metadata schema ({@link DeltaLease}): Delta has no locks a dead process releases. */
    @Override
    public ModelLock lock(DataSource dataSource, ResolvedModel m, Duration timeout, Supplier<String> describeHolder)
            throws SQLException {
        return DeltaLease.acquire(dataSource, this, m, timeout, describeHolder);
    }
}
