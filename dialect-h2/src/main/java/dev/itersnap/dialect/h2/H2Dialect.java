package dev.itersnap.dialect.h2;

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
import dev.itersnap.spi.ValueType;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;

/**
 * H2 2.x. MERGE without {@code NOT MATCHED BY SOURCE} (absent keys are closed by an UPDATE), DDL that commits
 * implicitly (the engine issues all DDL before a run's first transaction), row locks for the model lock.
 */
public final class H2Dialect extends AbstractSqlDialect {
    /** H2's epoch-millisecond conversions, for the lease of {@link #H2Dialect(boolean, Duration)}. */
    static final LeaseLock.Clock LEASE_CLOCK = new LeaseLock.Clock(
            e -> "DATEADD(MILLISECOND, CAST(" + e + " AS BIGINT), TIMESTAMP '1970-01-01 00:00:00')",
            e -> "DATEDIFF(MILLISECOND, TIMESTAMP '1970-01-01 00:00:00', " + e + ")");

    private final boolean transactionalDml;
    /** Null: the model lock is a lock row (H2ModelLock); else a lease of this TTL, as on Delta Lake. */
    private final Duration leaseTtl;

    /** The dialect ServiceLoader finds. */
    public H2Dialect() {
        this(true);
    }

    /**
     * With {@code transactionalDml} false, the engine runs H2 the way it runs Delta Lake (every statement its own
     * commit); the tests use it to prove the non-transactional path quickly.
     */
    H2Dialect(boolean transactionalDml) {
        this(transactionalDml, null);
    }

    /**
     * As {@link #H2Dialect(boolean)}, with the model lock a lease of {@code leaseTtl} ({@link LeaseLock}, the
     * Databricks dialect's lock) instead of a lock row: the tests run the lease's fencing on H2 in seconds.
     */
    H2Dialect(boolean transactionalDml, Duration leaseTtl) {
        this.transactionalDml = transactionalDml;
        this.leaseTtl = leaseTtl;
    }

    @Override
    public Capabilities capabilities() {
        return Capabilities.STANDARD.transactionalDml(transactionalDml).maxIdentifierLength(256).maxColumns(16384);
    }

    @Override
    public String name() {
        return "h2";
    }

    @Override
    public boolean handlesUrl(String jdbcUrl) {
        return jdbcUrl.startsWith("jdbc:h2:");
    }

    @Override
    public boolean handlesProduct(String productName) {
        return productName.equalsIgnoreCase("H2");
    }

    /** H2 compares strings by UTF-16 code unit; UTF-8 bytes compare by code point. */
    @Override
    public String[] orderedAround(ModelView m) {
        return m.sequenceType() == ValueType.STRING ? new String[] {"STRINGTOUTF8(", ")"} : super.orderedAround(m);
    }

    /** Binary values as hex (H2 casts a BLOB to no text, and VARBINARY to the raw bytes as characters). */
    @Override
    public String fingerprintText(SourceColumn column, String expression) {
        return switch (column.jdbcType()) {
            case java.sql.Types.BINARY, java.sql.Types.VARBINARY, java.sql.Types.LONGVARBINARY, java.sql.Types.BLOB ->
                    "RAWTOHEX(" + expression + ")";
            default -> toText(expression);
        };
    }

    /** The first 8 bytes of the text's SHA-256 (of its UTF-8 bytes), read as a BIGINT. */
    @Override
    public String hash64(String textExpression) {
        return "CAST(SUBSTRING(HASH('SHA-256', " + textExpression + "), 1, 8) AS BIGINT)";
    }

    @Override
    public String epochDays(String e) {
        return "DATEDIFF(DAY, DATE '1970-01-01', " + e + ")";
    }

    /** H2's DATEDIFF counts wall-clock time whatever the offsets, so a timestamp with time zone is moved to UTC first. */
    @Override
    public String epochMicros(SourceColumn c, String e) {
        return c.valueType() == ValueType.TIMESTAMP_TZ
                ? "DATEDIFF(MICROSECOND, TIMESTAMP WITH TIME ZONE '1970-01-01 00:00:00+00:00', (" + e
                        + " AT TIME ZONE 'UTC'))"
                : "DATEDIFF(MICROSECOND, TIMESTAMP '1970-01-01 00:00:00', " + e + ")";
    }

    @Override
    public String chr(int code) {
        return "CHAR(" + code + ")";
    }

    /** Long text as H2 has always created it (VARCHAR without a length is the same type, kept for identical DDL). */
    @Override
    public String typeName(dev.itersnap.spi.TableSpec.ColumnType type) {
        return type.kind() == dev.itersnap.spi.TableSpec.ColumnType.Kind.LONG_TEXT ? "VARCHAR(1000000)"
                : super.typeName(type);
    }

    @Override
    public String md5Hex(String textExpression) {
        return "LOWER(RAWTOHEX(HASH('MD5', CAST(" + textExpression + " AS VARCHAR))))";
    }

    @Override
    public String jsonObject(List<String> names, List<String> expressions) {
        List<String> pairs = new ArrayList<>();
        for (int i = 0; i < names.size(); i++) {
            String e = expressions.get(i);
            pairs.add("'" + names.get(i).replace("'", "''") + "': " + jsonValue(e));
        }
        return "CAST(JSON_OBJECT(" + String.join(", ", pairs) + " NULL ON NULL) AS VARCHAR(1000000))";
    }

    /** Numbers and booleans stay JSON scalars; everything else becomes its text form. */
    private String jsonValue(String e) {
        return "CASE WHEN " + e + " IS NULL THEN NULL ELSE " + e + " END";
    }

    /**
     * The DDL type of a described column, exactly: lengths, precision, scale and fractional seconds kept (DECFLOAT
     * stays DECFLOAT, a TIME keeps its fraction, an INTERVAL its leading precision, an ARRAY its cardinality); types
     * JDBC reports by a name H2 also parses (UUID, JSON, ENUM with its values, ROW, ...) keep that name.
     *
     * @throws IllegalArgumentException for JAVA_OBJECT, which the history cannot carry (the run and validate refuse it)
     */
    @Override
    public String columnType(SourceColumn c) {
        String name = c.typeName().toUpperCase(Locale.ROOT);
        if (name.startsWith("ENUM(") || name.startsWith("ROW(")) {
            return c.typeName(); // the values and field names as H2 reports them
        }
        if (name.endsWith(" ARRAY")) {
            return c.typeName() + (c.precision() > 0 && c.precision() < 65536 ? "[" + c.precision() + "]" : "");
        }
        if (name.startsWith("INTERVAL ")) {
            return interval(name, c.precision(), c.scale());
        }
        switch (name) {
            case "DECFLOAT": // JDBC reports precision 1 for computed values: those get the largest precision
                return c.precision() > 1 && c.precision() < 100_000 ? "DECFLOAT(" + c.precision() + ")" : "DECFLOAT";
            case "UUID": case "JSON": case "GEOMETRY": return name;
            case "JAVA_OBJECT":
                throw new IllegalArgumentException("a serialized Java object has no text form, which the error log "
                        + "and version ids need");
            case "TIME": return "TIME(" + c.scale() + ")";
            default: break;
        }
        switch (c.jdbcType()) {
            case Types.CHAR: case Types.VARCHAR: case Types.NCHAR: case Types.NVARCHAR:
                return c.precision() > 0 && c.precision() <= 1_000_000 ? name + "(" + c.precision() + ")" : name;
            case Types.NUMERIC: case Types.DECIMAL:
                return c.precision() > 0 ? "NUMERIC(" + c.precision() + ", " + c.scale() + ")" : "NUMERIC";
            case Types.TIMESTAMP: case Types.TIMESTAMP_WITH_TIMEZONE: case Types.TIME: case Types.TIME_WITH_TIMEZONE:
                return name.contains("(") ? name : name.replace("TIMESTAMP", "TIMESTAMP(" + c.scale() + ")")
                        .replace("TIME WITH", "TIME(" + c.scale() + ") WITH");
            case Types.VARBINARY: case Types.BINARY:
                return c.precision() > 0 && c.precision() <= 1_000_000 ? name + "(" + c.precision() + ")" : name;
            default:
                return name;
        }
    }

    /** {@code INTERVAL DAY TO SECOND} with precision p and scale s as {@code INTERVAL DAY(p) TO SECOND(s)}. */
    private static String interval(String name, int precision, int scale) {
        String[] parts = name.substring("INTERVAL ".length()).split(" TO ");
        String lead = parts[0] + (parts[0].equals("SECOND") ? "(" + precision + ", " + scale + ")" : "(" + precision + ")");
        if (parts.length == 1) {
            return "INTERVAL " + lead;
        }
        return "INTERVAL " + lead + " TO " + parts[1] + (parts[1].equals("SECOND") ? "(" + scale + ")" : "");
    }

    @Override
    public Statement widenColumn(TableName table, String column, SourceColumn to) {
        return Statement.of("widen column", "ALTER TABLE " + table(table) + " ALTER COLUMN " + quote(column)
                + " SET DATA TYPE " + columnType(to));
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
        boolean chars = isChar(from.jdbcType()) && isChar(to.jdbcType());
        if (chars) {
            return to.precision() >= from.precision();
        }
        boolean decimals = (from.jdbcType() == Types.NUMERIC || from.jdbcType() == Types.DECIMAL)
                && (to.jdbcType() == Types.NUMERIC || to.jdbcType() == Types.DECIMAL);
        if (decimals) {
            return to.scale() >= from.scale() && to.precision() - to.scale() >= from.precision() - from.scale();
        }
        return from.jdbcType() == Types.TIMESTAMP && to.jdbcType() == Types.TIMESTAMP && to.scale() >= from.scale();
    }

    private static int rank(int jdbcType) {
        switch (jdbcType) {
            case Types.TINYINT: return 1;
            case Types.SMALLINT: return 2;
            case Types.INTEGER: return 3;
            case Types.BIGINT: return 4;
            default: return 0;
        }
    }

    private static boolean isChar(int t) {
        return t == Types.VARCHAR || t == Types.NVARCHAR;
    }

    /**
     * A damaged file (H2's FILE_CORRUPTED_1, ROW_NOT_FOUND_IN_PRIMARY_INDEX, the MVStore's file errors), named, with
     * H2's recovery tool: {@link H2Damage}, decision 0007.
     */
    @Override
    public String damagedStorage(SQLException failure, Connection connection) {
        return H2Damage.describe(failure, connection);
    }

    /** Whether a commit is on disk when it returns ({@code WRITE_DELAY} 0), or a run can make it so. */
    @Override
    public List<dev.itersnap.core.Check> environmentChecks(java.sql.Connection connection) throws SQLException {
        return List.of(H2Durability.check(connection));
    }

    @Override
    public ModelLock lock(DataSource dataSource, ModelView m, Duration timeout, Supplier<String> describeHolder)
            throws SQLException {
        if (leaseTtl != null) {
            return LeaseLock.acquire(dataSource, this, m, timeout, describeHolder, leaseTtl, LEASE_CLOCK);
        }
        return H2ModelLock.acquire(dataSource, this, m, timeout, describeHolder);
    }

    /** Tries the lock row with {@code SKIP LOCKED}, in one statement: a row skipped is held by a live session. */
    @Override
    public LockState lockState(Connection connection, MetadataSchema metadata, String model) throws SQLException {
        if (leaseTtl != null) {
            return LeaseLock.observe(connection, new LeaseLock.Statements(this, metadata, model, LEASE_CLOCK));
        }
        return H2ModelLock.observe(connection, this, metadata, model);
    }
}
