package dev.itersnap.dialect.duckdb;

import dev.itersnap.core.TableName;
import dev.itersnap.spi.AbstractSqlDialect;
import dev.itersnap.spi.Capabilities;
import dev.itersnap.spi.LockState;
import dev.itersnap.spi.MetadataSchema;
import dev.itersnap.spi.ModelLock;
import dev.itersnap.spi.ModelView;
import dev.itersnap.spi.SourceColumn;
import dev.itersnap.spi.SqlValues;
import dev.itersnap.spi.Statement;
import dev.itersnap.spi.TableSpec;
import dev.itersnap.spi.ValueBinder;
import dev.itersnap.spi.ValueType;
import dev.itersnap.spi.WriteConflicts;

import javax.sql.DataSource;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;

/**
 * DuckDB 1.4 and newer: {@code MERGE INTO}, transactional DDL and DML with optimistic concurrency (a second writer of
 * a row fails at once with a write conflict instead of waiting), one process writing a database file at a time, and
 * table functions that read CSV, Parquet and JSON files ({@code read_csv('exports/*.csv', filename = true)}), so that
 * a folder of files can be a model's source.
 *
 * <p>No primary keys and no indexes: DuckDB refuses {@code ALTER TABLE} on a table with an index (a widened column)
 * and checks an index's uniqueness before an update's old row is gone; its scans skip row groups by their min/max
 * statistics instead. The model lock is {@link DuckDbModelLock}.
 */
public final class DuckDbDialect extends AbstractSqlDialect {
    private static final Capabilities CAPABILITIES = Capabilities.STANDARD.primaryKeys(false).indexes(false);

    @Override
    public String name() {
        return "duckdb";
    }

    @Override
    public Capabilities capabilities() {
        return CAPABILITIES;
    }

    @Override
    public boolean handlesUrl(String jdbcUrl) {
        return jdbcUrl.startsWith("jdbc:duckdb:");
    }

    @Override
    public boolean handlesProduct(String productName) {
        return productName.equalsIgnoreCase("DuckDB");
    }

    // ---------------------------------------------------------------- values and conflicts

    /**
     * The shared binding, except two values the driver (1.4) refuses: {@code setObject(v, Types.DATE)} ("Unknown
     * target type 91"), so a LocalDate goes through {@code setObject(v)}, which the driver binds as a DATE; and a
     * BigDecimal of negative scale ({@code 1E+3}), bound at scale 0 (the same number).
     */
    @Override
    public ValueBinder valueBinder() {
        return DuckDbDialect::bind;
    }

    static void bind(java.sql.PreparedStatement ps, int index, Object value) throws SQLException {
        if (value instanceof LocalDate d) {
            ps.setObject(index, d);
        } else if (value instanceof BigDecimal d && d.scale() < 0) {
            ps.setBigDecimal(index, d.setScale(0));
        } else {
            SqlValues.bind(ps, index, value);
        }
    }

    /**
     * DuckDB's own conflicts ({@code TransactionContext Error: Conflict on update!}, a write-write conflict on a
     * catalog entry), which carry no SQLState, besides the shared ones.
     */
    @Override
    public boolean isWriteConflict(Throwable failure) {
        return super.isWriteConflict(failure) || WriteConflicts.anyInChain(failure, t -> t.getMessage() != null
                && (t.getMessage().contains("Conflict on ") || t.getMessage().contains("write-write conflict")));
    }

    /**
     * The first line, plus the file and the reason of a CSV error, which the driver writes on later lines ("Conversion
     * Error: CSV Error on Line: 3 of file /exports/customers_2024-01-04.csv: Error when converting column "id". Could
     * not convert string "two" to 'INTEGER'").
     */
    @Override
    public String errorSummary(SQLException failure) {
        String first = super.errorSummary(failure);
        String message = failure.getMessage();
        if (message == null) {
            return first;
        }
        String file = null;
        String reason = null;
        for (String line : message.split("\n")) {
            String l = line.strip();
            if (file == null && l.startsWith("file = ")) {
                file = l.substring("file = ".length());
            } else if (reason == null && l.startsWith("Error when ")) {
                reason = l;
            }
        }
        return file == null || first.contains(file) ? first
                : first + " of file " + file + (reason == null ? "" : ": " + reason);
    }

    // ---------------------------------------------------------------- primitives

    @Override
    public String md5Hex(String textExpression) {
        return "md5(" + textExpression + ")";
    }

    /**
     * The low 64 bits of the text's MD5 as a signed BIGINT: stable across DuckDB versions, which its {@code hash()}
     * is not promised to be.
     */
    @Override
    public String hash64(String textExpression) {
        return "CAST(CAST(md5_number_lower(" + textExpression + ") AS HUGEINT) - 9223372036854775808 AS BIGINT)";
    }

    /**
     * The first window level materialized: DuckDB inlines the chain's levels and pushes filters through all of them,
     * which cost more to plan than to run (the in-order run's events at 10,000 keys: 42 ms to prepare, 17 ms with this
     * level materialized; DuckDB 1.4.4).
     */
    @Override
    public String windowLevelMaterialization(int level) {
        return level == 1 ? "MATERIALIZED " : "";
    }

    /** {@code json_object}, which keeps a NULL value as {@code null}; numbers and booleans stay JSON scalars. */
    @Override
    public String jsonObject(List<String> names, List<String> expressions) {
        List<String> pairs = new ArrayList<>();
        for (int i = 0; i < names.size(); i++) {
            pairs.add(stringLiteral(names.get(i)) + ", " + expressions.get(i));
        }
        return "CAST(json_object(" + String.join(", ", pairs) + ") AS VARCHAR)";
    }

    @Override
    public String epochDays(String e) {
        return "(" + e + " - DATE '1970-01-01')";
    }

    /** {@code epoch_us}: of the UTC instant for a TIMESTAMP WITH TIME ZONE, of the wall-clock time otherwise. */
    @Override
    public String epochMicros(SourceColumn c, String e) {
        return "epoch_us(" + e + ")";
    }

    @Override
    public String chr(int code) {
        return "chr(" + code + ")";
    }

    /** Every text is VARCHAR (DuckDB ignores a length); changed_attributes too (JSON is VARCHAR underneath). */
    @Override
    public String typeName(TableSpec.ColumnType type) {
        return switch (type.kind()) {
            case TEXT, LONG_TEXT, JSON -> "VARCHAR";
            default -> super.typeName(type);
        };
    }

    /**
     * Values whose {@code =} holds for different values, or has none, compared as their text: intervals ('1 month'
     * equals '30 days'), maps, JSON.
     */
    @Override
    public String partitionable(SourceColumn column, String expression) {
        String t = upper(column);
        return t.equals("INTERVAL") || t.startsWith("MAP(") || t.equals("JSON")
                ? "CAST(" + expression + " AS VARCHAR)" : expression;
    }

    /**
     * A timestamp with time zone as its epoch microseconds (its text follows the session's time zone), binary values
     * as hex (their text escapes some bytes only), a type holding a UNION as JSON, which names each union value's
     * member (the text of {@code union_value(num := 1)} and of {@code union_value(str := '1')} is {@code 1} for both).
     */
    @Override
    public String fingerprintText(SourceColumn column, String expression) {
        String t = upper(column);
        if (t.equals("TIMESTAMP WITH TIME ZONE")) {
            return toText("epoch_us(" + expression + ")");
        }
        if (t.equals("BLOB") || t.equals("BYTEA")) {
            return "hex(" + expression + ")";
        }
        if (t.contains("UNION(")) {
            return toText("to_json(" + expression + ")");
        }
        return toText(expression);
    }

    // ---------------------------------------------------------------- types

    /**
     * The type as the driver names it, which DuckDB parses back (DECIMAL(12,3), INTEGER[], STRUCT(...), MAP(...),
     * TIMESTAMP WITH TIME ZONE, ...); texts as VARCHAR.
     *
     * @throws IllegalArgumentException for an ENUM, whose values the driver does not report
     */
    @Override
    public String columnType(SourceColumn c) {
        String t = upper(c);
        if (t.isEmpty()) {
            throw new IllegalArgumentException("the driver reports no type name for this column");
        }
        if (t.equals("ENUM")) {
            throw new IllegalArgumentException("the DuckDB driver does not report an ENUM's values, which the history's "
                    + "column needs: cast it to VARCHAR in the source query");
        }
        if (t.matches("VARCHAR(\\(\\d+\\))?|TEXT|STRING")) {
            return "VARCHAR";
        }
        if ((c.jdbcType() == Types.DECIMAL || c.jdbcType() == Types.NUMERIC) && !t.contains("(")) {
            return c.precision() > 0 ? "DECIMAL(" + c.precision() + ", " + c.scale() + ")" : "DECIMAL(18, 3)";
        }
        return c.typeName();
    }

    private static String upper(SourceColumn c) {
        return c.typeName() == null ? "" : c.typeName().toUpperCase(Locale.ROOT).strip();
    }

    @Override
    public boolean widens(SourceColumn from, SourceColumn to) {
        String f = upper(from);
        String t = upper(to);
        // the ranks below compare signed integers and timestamps without time zone
        for (List<String> ranked : List.of(INTEGERS, TIMESTAMPS)) {
            int fr = ranked.indexOf(f);
            int tr = ranked.indexOf(t);
            if (fr >= 0 && tr >= 0) {
                return tr >= fr;
            }
        }
        if (columnType(from).equals("VARCHAR") && columnType(to).equals("VARCHAR")) {
            return true;
        }
        boolean decimals = (from.jdbcType() == Types.DECIMAL || from.jdbcType() == Types.NUMERIC)
                && (to.jdbcType() == Types.DECIMAL || to.jdbcType() == Types.NUMERIC);
        if (decimals) {
            return to.scale() >= from.scale() && to.precision() - to.scale() >= from.precision() - from.scale();
        }
        return f.equals(t);
    }

    /** Signed integers, narrowest first. */
    private static final List<String> INTEGERS = List.of("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT");
    /** Timestamps without time zone, coarsest first (seconds, milliseconds, microseconds, nanoseconds). */
    private static final List<String> TIMESTAMPS = List.of("TIMESTAMP_S", "TIMESTAMP_MS", "TIMESTAMP",
            "TIMESTAMP_NS");

    @Override
    public Statement widenColumn(TableName table, String column, SourceColumn to) {
        return Statement.of("widen column", "ALTER TABLE " + table(table) + " ALTER COLUMN " + quote(column)
                + " SET DATA TYPE " + columnType(to));
    }

    // ---------------------------------------------------------------- the model lock

    @Override
    public ModelLock lock(DataSource dataSource, ModelView m, Duration timeout, Supplier<String> describeHolder)
            throws SQLException {
        return DuckDbModelLock.acquire(dataSource, this, m, timeout, describeHolder);
    }

    /** The database is one that every connection of the data source shares (not {@code jdbc:duckdb:} alone). */
    @Override
    public List<dev.itersnap.core.Check> environmentChecks(Connection connection) throws SQLException {
        String unshared = DuckDbModelLock.unsharedDatabase(connection);
        return List.of(unshared == null ? dev.itersnap.core.Check.ok("database", "shared by the run's connections")
                : dev.itersnap.core.Check.failed("database", unshared));
    }

    @Override
    public LockState lockState(Connection connection, MetadataSchema metadata, String model) throws SQLException {
        return DuckDbModelLock.observe(connection, this, metadata, model);
    }
}
