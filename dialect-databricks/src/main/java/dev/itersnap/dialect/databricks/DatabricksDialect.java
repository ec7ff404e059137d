package dev.itersnap.dialect.databricks;

import dev.itersnap.core.TableName;
import dev.itersnap.spi.AbstractSqlDialect;
import dev.itersnap.spi.Capabilities;
import dev.itersnap.spi.lease.LeaseLock;
import dev.itersnap.spi.LockState;
import dev.itersnap.spi.MetadataSchema;
import dev.itersnap.spi.ModelLock;
import dev.itersnap.spi.ModelView;
import dev.itersnap.spi.SourceColumn;
import dev.itersnap.spi.Statement;
import dev.itersnap.spi.TableSpec;

import javax.sql.DataSource;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;

/**
 * Databricks and Spark SQL over Delta Lake, through the Databricks JDBC driver or a {@link SparkDataSource}.
 *
 * <p>What differs from {@link AbstractSqlDialect}: backtick quoting; Spark's spellings ({@code STRING},
 * {@code md5}, {@code to_json(named_struct(...))}, backslash-escaped literals); Delta tables ({@code USING DELTA},
 * type widening on the tables whose columns may widen, {@code ADD COLUMNS}); and its {@link #capabilities()}: no
 * multi-statement transactions (every statement is its own Delta commit), no keys or indexes, no INSERT row counts,
 * no subqueries in UPDATE, {@code CREATE OR REPLACE TABLE}. The model lock is a lease ({@link LeaseLock}).
 * Stateless and thread-safe.
 */
public final class DatabricksDialect extends AbstractSqlDialect {
    /** System property overriding the lease's time to live, e.g. {@code 5m}, {@code 90s}, {@code PT10M}. */
    static final String TTL_PROPERTY = "itersnap.databricks.leaseTtl";
    /** Spark SQL's epoch-millisecond conversions. */
    static final LeaseLock.Clock CLOCK = new LeaseLock.Clock(e -> "timestamp_millis(" + e + ")",
            e -> "unix_millis(" + e + ")");

    /**
     * System property: {@code false} creates itersnap's tables without deletion vectors (for UniForm / Iceberg
     * readers, or readers without deletion-vector support); {@code true}, the default, with them.
     */
    static final String DELETION_VECTORS_PROPERTY = "itersnap.databricks.deletionVectors";

    /** The lease's TTL; null: {@link LeaseLock#ttl(String)} of {@value #TTL_PROPERTY} at each acquisition. */
    private final Duration leaseTtl;
    /** Deletion vectors on the tables several runs write; null: {@value #DELETION_VECTORS_PROPERTY}. */
    private final Boolean deletionVectors;
    /** Whether a run replaces its scratch tables (false: empties them with {@code TRUNCATE TABLE}; measured, tests). */
    private final boolean replaceScratch;

    public DatabricksDialect() {
        this(null, null);
    }

    /** A dialect whose lease has this TTL, below {@link LeaseLock#MIN_TTL} if need be (tests). */
    DatabricksDialect(Duration leaseTtl) {
        this(leaseTtl, null);
    }

    private DatabricksDialect(Duration leaseTtl, Boolean deletionVectors) {
        this(leaseTtl, deletionVectors, true);
    }

    private DatabricksDialect(Duration leaseTtl, Boolean deletionVectors, boolean replaceScratch) {
        this.leaseTtl = leaseTtl;
        this.deletionVectors = deletionVectors;
        this.replaceScratch = replaceScratch;
    }

    /**
     * A dialect whose runs reuse their scratch tables, emptied with {@code TRUNCATE TABLE}, instead of replacing them:
     * the alternative docs/benchmarks.md measures against (tests only).
     */
    static DatabricksDialect truncatingScratchTables() {
        return new DatabricksDialect(null, null, false);
    }

    /**
     * A dialect that creates the history and the shared metadata tables with deletion vectors ({@code true}, the
     * default) or explicitly without ({@code false}: a history that UniForm / Iceberg readers, or Delta readers without
     * deletion-vector support, must read). Whatever the system property {@value #DELETION_VECTORS_PROPERTY} says. Use
     * it with {@code IterativeSnapshot.builder().dialect(DatabricksDialect.withDeletionVectors(false))}. Tables that
     * exist keep their properties.
     */
    public static DatabricksDialect withDeletionVectors(boolean enabled) {
        return new DatabricksDialect(null, enabled);
    }

    /** Whether new shared tables get deletion vectors: this dialect's choice, else the system property, else yes. */
    boolean deletionVectors() {
        if (deletionVectors != null) {
            return deletionVectors;
        }
        String value = System.getProperty(DELETION_VECTORS_PROPERTY);
        if (value == null || value.isBlank() || value.strip().equalsIgnoreCase("true")) {
            return true;
        }
        if (value.strip().equalsIgnoreCase("false")) {
            return false;
        }
        throw new dev.itersnap.core.ItersnapException(dev.itersnap.core.ErrorCode.INVALID_SETTING, "system property "
                + DELETION_VECTORS_PROPERTY + " is '" + value + "'; expected true or false");
    }

    private static final Capabilities DELTA = Capabilities.STANDARD.transactionalDml(false).primaryKeys(false)
            .indexes(false).insertRowCounts(false).createOrReplaceTable(true).maxIdentifierLength(255);

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

    @Override
    public Capabilities capabilities() {
        return replaceScratch ? DELTA : DELTA.createOrReplaceTable(false);
    }

    /**
     * Lower case: Unity Catalog and Spark's session catalog store names in lower case, quoted or not, while the
     * Databricks JDBC driver reports mixed-case identifiers.
     */
    @Override
    public java.util.function.UnaryOperator<String> identifierFolding() {
        return s -> s.toLowerCase(Locale.ROOT);
    }

    // ---------------------------------------------------------------- primitives

    /** Backticks, a backtick inside doubled; a double-quoted name is a string literal in Spark SQL. */
    @Override
    public String quote(String identifier) {
        return '`' + identifier.replace("`", "``") + '`';
    }

    /** Spark's {@code xxhash64} (seed 42), a BIGINT. */
    @Override
    public String hash64(String textExpression) {
        return "xxhash64(" + textExpression + ")";
    }

    @Override
    public String md5Hex(String textExpression) {
        return "md5(" + textExpression + ")";
    }

    @Override
    public String toText(String expression) {
        return "CAST(" + expression + " AS STRING)";
    }

    @Override
    public String epochDays(String e) {
        return "datediff(" + e + ", DATE'1970-01-01')";
    }

    /** A TIMESTAMP is an instant (unix_micros does not depend on the session time zone); a TIMESTAMP_NTZ its wall time. */
    @Override
    public String epochMicros(SourceColumn c, String e) {
        return columnType(c).equals("TIMESTAMP_NTZ")
                ? "timestampdiff(MICROSECOND, TIMESTAMP_NTZ'1970-01-01 00:00:00', " + e + ")"
                : "unix_micros(" + e + ")";
    }

    @Override
    public String chr(int code) {
        return "chr(" + code + ")";
    }

    /**
     * {@code ignoreNullFields=false} keeps NULL columns in the record (to_json drops them by default); the timestamp
     * formats keep microseconds (to_json's default keeps milliseconds, so two set-aside rows differing below a
     * millisecond would log the same record).
     */
    @Override
    public String jsonObject(List<String> names, List<String> expressions) {
        List<String> fields = new ArrayList<>();
        for (int i = 0; i < names.size(); i++) {
            fields.add(stringLiteral(names.get(i)));
            fields.add(expressions.get(i));
        }
        return "to_json(named_struct(" + String.join(", ", fields) + "), map('ignoreNullFields', 'false', "
                + "'timestampFormat', " + stringLiteral("yyyy-MM-dd'T'HH:mm:ss.SSSSSSXXX") + ", 'timestampNTZFormat', "
                + stringLiteral("yyyy-MM-dd'T'HH:mm:ss.SSSSSS") + "))";
    }

    /** A backslash starts an escape in a Spark string literal, so it is escaped like the quote. */
    @Override
    public String stringLiteral(String s) {
        return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'";
    }

    // ---------------------------------------------------------------- types and tables

    /** Text of any length is {@code STRING} ({@code VARCHAR(n)} casts log a warning). */
    @Override
    public String typeName(TableSpec.ColumnType type) {
        return switch (type.kind()) {
            case TEXT, LONG_TEXT, JSON -> "STRING";
            default -> super.typeName(type);
        };
    }

    /**
     * Spark SQL's name for the type the JDBC metadata describes: strings of any length are {@code STRING}, a
     * timestamp without time zone (Spark {@code TIMESTAMP_NTZ}) keeps that name, other types keep the database's name
     * (ARRAY, MAP, STRUCT with their element types, VARIANT).
     *
     * @throws IllegalArgumentException for intervals, which Delta tables cannot store
     */
    @Override
    public String columnType(SourceColumn c) {
        String name = c.typeName() == null ? "" : c.typeName().toUpperCase(Locale.ROOT);
        if (name.startsWith("INTERVAL")) {
            throw new IllegalArgumentException("Delta tables cannot store intervals");
        }
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
                return c.typeName() == null ? name : c.typeName(); // STRUCT field names keep their case
        }
    }

    /**
     * Maps and variants have no equality in Spark SQL (not in comparisons, not in PARTITION BY), nor do arrays and
     * structs holding them: they are compared as their JSON text.
     */
    @Override
    public String partitionable(SourceColumn column, String expression) {
        String t = column.typeName() == null ? "" : column.typeName().toUpperCase(Locale.ROOT);
        return t.contains("MAP<") || t.contains("VARIANT") ? "to_json(" + expression + ")" : expression;
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

    /**
     * The scratch tables, replaced by every run: each replacement leaves the previous run's files behind until a
     * VACUUM removes them. A retention of one hour for removed files (instead of seven days) lets a plain {@code VACUUM}
     * (yours, or predictive optimization's) remove them an hour after the run, without {@code RETAIN} and without
     * turning off Delta's retention check; files a table still uses are never removed. One day of log.
     */
    static final String SCRATCH_OPTIONS = " USING DELTA TBLPROPERTIES ("
            + "'delta.deletedFileRetentionDuration' = 'interval 1 hours', "
            + "'delta.logRetentionDuration' = 'interval 1 days')";

    /**
     * A scratch table created by the run's first {@code INSERT INTO} it, as {@code CREATE OR REPLACE TABLE ... AS
     * SELECT}: one statement and one Delta commit where creating it empty and then inserting were two. The columns are
     * cast to the types {@link #createTable} gives them (the query's columns renamed by the subquery's column list, the
     * table's others NULL), so the table has the same schema either way. Not when scratch tables are emptied instead of
     * replaced ({@link #truncatingScratchTables}).
     */
    @Override
    public Statement createTableAs(TableSpec spec, List<String> columns, Statement query) {
        if (!replaceScratch || spec.creation() != TableSpec.Creation.SCRATCH) {
            return null;
        }
        String alias = "itersnap_filled";
        List<String> select = new ArrayList<>();
        for (TableSpec.Column c : spec.columns()) {
            String type = typeName(c.type());
            select.add("CAST(" + (columns.contains(c.name()) ? col(alias, c.name()) : "NULL") + " AS " + type + ") AS "
                    + quote(c.name()));
        }
        return Statement.builder(query.step()).sql("CREATE OR REPLACE TABLE " + table(spec.name()) + tableOptions(spec)
                        + " AS SELECT " + String.join(", ", select) + " FROM (").sql(query)
                .sql(") " + alias + " (" + String.join(", ", columns.stream().map(this::quote).toList()) + ")")
                .build();
    }

    /**
     * Delta tables. Tables several runs write at once (the shared metadata tables, the history: {@link
     * TableSpec.Writers#MANY}) get deletion vectors unless the user turned them off ({@link #withDeletionVectors},
     * {@value #DELETION_VECTORS_PROPERTY}): Databricks' row-level concurrency (Runtime 14.2 and later) needs them, so
     * that two models' runs or a background OPTIMIZE do not conflict on different rows (a conflict that still happens
     * is retried). Turned off they are set to false explicitly, since a workspace may enable them by default. Row
     * tracking is left to the workspace: row-level concurrency does not need it. The lease table ({@link
     * TableSpec.Writers#MUTEX}) gets neither, explicitly: two first acquisitions inserting the same model's row must
     * conflict, not both succeed. Type widening is not enabled here ({@link #prepareWidening}).
     */
    @Override
    public String tableOptions(TableSpec spec) {
        if (spec.creation() == TableSpec.Creation.SCRATCH) {
            return SCRATCH_OPTIONS;
        }
        return switch (spec.writers()) {
            case MANY -> " USING DELTA TBLPROPERTIES ('delta.enableDeletionVectors' = '" + deletionVectors() + "')";
            case MUTEX -> " USING DELTA TBLPROPERTIES ('delta.enableDeletionVectors' = 'false', "
                    + "'delta.enableRowTracking' = 'false')";
            case ONE -> " USING DELTA";
        };
    }

    /**
     * {@code delta.enableTypeWidening}, set only when a column is about to be widened: the table feature upgrades the
     * table's protocol, which older readers (before Databricks Runtime 15.4, older Delta clients) cannot read.
     */
    @Override
    public List<Statement> prepareWidening(TableName table) {
        return List.of(Statement.of("widen column", "ALTER TABLE " + table(table)
                + " SET TBLPROPERTIES ('delta.enableTypeWidening' = 'true')"));
    }

    @Override
    public Statement addColumn(TableName table, SourceColumn column) {
        return Statement.of("add column", "ALTER TABLE " + table(table) + " ADD COLUMNS (" + quote(column.name()) + " "
                + columnType(column) + ")");
    }

    @Override
    public Statement addColumn(TableName table, String column, dev.itersnap.spi.TableSpec.ColumnType type) {
        return Statement.of("add column", "ALTER TABLE " + table(table) + " ADD COLUMNS (" + quote(column) + " "
                + typeName(type) + ")");
    }

    /** Needs {@code delta.enableTypeWidening}, which {@link #prepareWidening} sets just before. */
    @Override
    public Statement widenColumn(TableName table, String column, SourceColumn to) {
        return Statement.of("widen column", "ALTER TABLE " + table(table) + " ALTER COLUMN " + quote(column) + " TYPE "
                + columnType(to));
    }

    // ---------------------------------------------------------------- runtime checks

    /**
     * The runtime: Spark 3.5 or later (Databricks Runtime 15.4 LTS and later, serverless, SQL warehouses); the
     * session time zone UTC, in which itersnap reads and binds TIMESTAMP values ({@link SparkDataSource} sets it for
     * its statements; over JDBC the connection must have it: {@code TIMEZONE=UTC} in the URL).
     */
    @Override
    public List<dev.itersnap.core.Check> environmentChecks(java.sql.Connection c) throws SQLException {
        List<dev.itersnap.core.Check> out = new ArrayList<>();
        String version = single(c, "SELECT version()");
        java.util.regex.Matcher v = java.util.regex.Pattern.compile("^(\\d+)\\.(\\d+)").matcher(version.strip());
        boolean supported = v.find() && (Integer.parseInt(v.group(1)) > 3
                || Integer.parseInt(v.group(1)) == 3 && Integer.parseInt(v.group(2)) >= 5);
        out.add(supported ? dev.itersnap.core.Check.ok("runtime", "Spark " + version.strip())
                : dev.itersnap.core.Check.failed("runtime", "Spark " + version.strip() + ": itersnap needs Spark 3.5 "
                + "or later (Databricks Runtime 15.4 LTS or later)"));
        String zone = single(c, "SELECT current_timezone()").strip();
        if (isUtc(zone) || onSparkSession(c)) { // SparkDataSource runs every statement in UTC
            out.add(dev.itersnap.core.Check.ok("session time zone", zone));
        } else {
            try {
                prepareRunConnection(c);
                out.add(dev.itersnap.core.Check.ok("session time zone", zone + "; a run sets UTC on its connection "
                        + "(SET TIME ZONE 'UTC'), or put TIMEZONE=UTC in the JDBC URL"));
            } catch (dev.itersnap.core.ItersnapException e) {
                out.add(dev.itersnap.core.Check.failed("session time zone", e.getMessage()));
            }
        }
        return out;
    }

    /**
     * {@code table files}: the number of data files and bytes of each of the model's tables that exist ({@code
     * DESCRIBE DETAIL}: the history, its archive and pending table, the shared metadata tables, the model's scratch
     * tables), so that a table that needs OPTIMIZE or VACUUM shows (docs/dialects.md, "Maintenance"). Informational:
     * never a failure.
     */
    @Override
    public List<dev.itersnap.core.Check> tableChecks(java.sql.Connection c, ModelView m) throws SQLException {
        List<TableName> tables = new ArrayList<>(List.of(m.target(), m.archive(), m.pending()));
        m.metadata().engineTables().forEach(t -> tables.add(t.name()));
        tables.add(m.metadata().lease().spec().name());
        tables.addAll(List.of(m.stage(), m.batches(), m.keysTable(), m.work()));
        List<String> found = new ArrayList<>();
        long files = 0;
        for (TableName t : tables) {
            try (java.sql.Statement s = c.createStatement();
                 java.sql.ResultSet rs = s.executeQuery("DESCRIBE DETAIL " + table(t))) {
                if (rs.next()) {
                    long n = rs.getLong("numFiles");
                    files += n;
                    found.add(t.table() + " " + n + " (" + megabytes(rs.getLong("sizeInBytes")) + ")");
                }
            } catch (SQLException e) {
                // not created yet (or not a Delta table): nothing to report
            }
        }
        return List.of(dev.itersnap.core.Check.ok("table files", found.isEmpty() ? "no tables of this model yet"
                : files + " data files: " + String.join(", ", found) + "; see Maintenance in docs/dialects.md"));
    }

    private static String megabytes(long bytes) {
        return String.format(Locale.ROOT, "%.1f MB", bytes / 1_048_576.0);
    }

    private static boolean isUtc(String zone) {
        return List.of("UTC", "ETC/UTC", "Z", "+00:00", "GMT", "ETC/GMT", "ETC/UCT", "UCT", "ETC/ZULU", "ZULU")
                .contains(zone.strip().toUpperCase(Locale.ROOT));
    }

    /**
     * Over JDBC (the Databricks driver: each connection is a server session) a run's session must be in UTC, in which
     * itersnap reads and binds TIMESTAMP values, so that validity times do not depend on where the run happens. A
     * session in another zone is set to UTC ({@code SET TIME ZONE 'UTC'}) before the run reads or writes anything; if
     * the compute refuses, the run stops naming the setting ({@code INVALID_SETTING}). On a SparkSession nothing is
     * done: {@link SparkDataSource} runs each statement with the time zone UTC and puts the caller's back.
     */
    @Override
    public void prepareRunConnection(java.sql.Connection c) throws SQLException {
        if (onSparkSession(c)) {
            return;
        }
        String zone = single(c, "SELECT current_timezone()").strip();
        if (isUtc(zone)) {
            return;
        }
        String refused;
        try (java.sql.Statement s = c.createStatement()) {
            s.execute("SET TIME ZONE 'UTC'");
            String now = single(c, "SELECT current_timezone()").strip();
            if (isUtc(now)) {
                return;
            }
            refused = "after SET TIME ZONE 'UTC' it is still " + now;
        } catch (SQLException e) {
            refused = "SET TIME ZONE 'UTC' was refused: " + e.getMessage().lines().findFirst().orElse("");
        }
        throw new dev.itersnap.core.ItersnapException(dev.itersnap.core.ErrorCode.INVALID_SETTING,
                "the session time zone is " + zone + " and " + refused + ". itersnap reads and binds TIMESTAMP values "
                + "in UTC, so that validity times do not depend on where the run happens: set TIMEZONE=UTC in the "
                + "JDBC URL (the driver's session setting), or spark.sql.session.timeZone UTC in the cluster's or "
                + "warehouse's configuration; nothing was written");
    }

    private static String single(java.sql.Connection c, String sql) throws SQLException {
        try (java.sql.Statement s = c.createStatement(); java.sql.ResultSet rs = s.executeQuery(sql)) {
            return rs.next() ? String.valueOf(rs.getString(1)) : "";
        }
    }

    // ---------------------------------------------------------------- locking

    /**
     * A lease row in the metadata schema ({@link LeaseLock}): Delta has no locks a dead process releases. Its TTL is
     * {@link LeaseLock#DEFAULT_TTL} unless the system property {@value #TTL_PROPERTY} sets another.
     *
     * <p>On a SparkSession ({@link SparkDataSource}, or a wrapper of one) the lease's statements run outside the
     * session's statement window, so that its heartbeat never waits for a running statement of a run (a statement
     * longer than the lease's renewal margin would otherwise let another job take the lease while this one still
     * writes: docs/decisions/0008-lease-statements-outside-the-window.md). The lease table is then named with the
     * data source's catalog, which is what the window would make current. Over JDBC nothing changes: each connection
     * is its own session there.
     */
    @Override
    public ModelLock lock(DataSource dataSource, ModelView m, Duration timeout, Supplier<String> describeHolder)
            throws SQLException {
        Duration ttl = leaseTtl != null ? leaseTtl : LeaseLock.ttl(TTL_PROPERTY);
        MetadataSchema metadata = m.metadata();
        DataSource leaseSource = dataSource;
        try (java.sql.Connection c = dataSource.getConnection()) {
            if (onSparkSession(c)) {
                metadata = metadata.inCatalog(c.getCatalog());
                leaseSource = SparkDataSource.outsideWindow(dataSource);
            }
        }
        return LeaseLock.acquire(leaseSource, new LeaseLock.Statements(this, metadata, m.name(), CLOCK), timeout,
                describeHolder, ttl, LeaseLock.newOwner());
    }

    /**
     * Whether {@code c} is a connection of a {@link SparkDataSource} (or a wrapper of one): it answers for the
     * client-info property {@link SparkDataSource#OUTSIDE_WINDOW}, which a JDBC driver does not know (null). Asked
     * without naming a Spark class, which is not on the classpath over JDBC.
     */
    private static boolean onSparkSession(java.sql.Connection c) {
        try {
            return c.getClientInfo(SparkDataSource.OUTSIDE_WINDOW) != null;
        } catch (SQLException | RuntimeException e) {
            return false;
        }
    }

    /** The lease row read: held while its expiry is ahead (a dead run's lease lapses at its expiry). */
    @Override
    public LockState lockState(java.sql.Connection connection, MetadataSchema metadata, String model)
            throws SQLException {
        return LeaseLock.observe(connection, new LeaseLock.Statements(this, metadata, model, CLOCK));
    }
}
