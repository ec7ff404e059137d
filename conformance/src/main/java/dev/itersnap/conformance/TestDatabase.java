package dev.itersnap.conformance;

import javax.sql.DataSource;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;

/**
 * What a dialect module supplies to run the conformance suite: a fresh database per scenario and the SQL type names
 * of the raw tables' columns. Implementations must be thread-safe if the suite is run in parallel (it is not by
 * default).
 */
public interface TestDatabase {

    /** The kinds of column the generated raw tables use. */
    enum ColumnType { INTEGER, BIGINT, DECIMAL, VARCHAR, DATE, TIMESTAMP }

    /**
     * A fresh, empty database for one scenario (no tables, no itersnap metadata). The data source must hand out
     * independent connections: a run holds one for the model lock while it works on another.
     *
     * @param scenario a short, identifier-safe name of the scenario, usable in a database or schema name
     */
    DataSource newDatabase(String scenario);

    /**
     * The dialect to run the engine with, or null (the default) to let itersnap detect it from the data source. A
     * module sets it to run the suite with a variant of its dialect (for example H2 without transactional DML).
     */
    default dev.itersnap.spi.Dialect dialect() {
        return null;
    }

    /**
     * A new database holding a copy of {@code database} (made by {@link #newDatabase}, no session open on it), or
     * null when copying is not supported (the default): fault injection then prepares every fault point's database
     * from scratch. A database where a copy is much cheaper than replaying the runs that led there (PostgreSQL:
     * {@code CREATE DATABASE ... TEMPLATE}) implements it.
     */
    default DataSource copyOf(DataSource database) {
        return null;
    }

    /** Releases the database of a finished scenario (for example drops or shuts it down). Default: nothing. */
    default void discard(DataSource database) {
    }

    /**
     * The SQL type to declare for a raw-table column of this kind, for example {@code VARCHAR(40)} or, on
     * Databricks, {@code STRING}. Values are bound through JDBC as Integer, Long, BigDecimal, String, LocalDate and
     * LocalDateTime. DECIMAL holds three decimals (the generated decimal sequences), TIMESTAMP microseconds.
     */
    String sqlType(ColumnType type);

    /**
     * The statement that widens a raw-table column to {@code type} (INTEGER to BIGINT in the generated cases).
     * Default: the SQL standard's {@code ALTER TABLE t ALTER COLUMN c SET DATA TYPE type}.
     */
    default String widenColumn(String table, String column, ColumnType type) {
        return "ALTER TABLE " + table + " ALTER COLUMN " + column + " SET DATA TYPE " + sqlType(type);
    }

    /**
     * Whether raw tables can carry an index: half the generated cases index the sequence column, so discovery is
     * checked through an index and without one. Default: true.
     */
    default boolean indexes() {
        return true;
    }

    /**
     * A key or {@code updated_at} value as the database's cast to text writes it, the way {@code dbt_scd_id} hashes
     * it (docs/semantics.md: "MD5 hex of key columns, updated_at and sequence as text"). Default: integers as digits,
     * strings as they are, timestamps as {@code 2024-03-04 08:12:33.25} (fraction without trailing zeros), dates as
     * ISO-8601: what H2, PostgreSQL and Spark write.
     */
    default String castToText(Object value) {
        if (value instanceof LocalDateTime t) {
            String text = t.format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss"));
            if (t.getNano() != 0) {
                String fraction = String.format("%09d", t.getNano());
                text += "." + fraction.replaceAll("0+$", "");
            }
            return text;
        }
        return ReferenceModel.canonical(value);
    }

    /**
     * The database's spelling of an ANSI column type used by the scenario tests' raw tables ({@code INT},
     * {@code BIGINT}, {@code VARCHAR(20)}, {@code DATE}, {@code TIMESTAMP}, {@code DECIMAL(10,2)},
     * {@code DOUBLE PRECISION}, {@code BOOLEAN}). Default: unchanged.
     */
    default String type(String ansiType) {
        return ansiType;
    }
}
