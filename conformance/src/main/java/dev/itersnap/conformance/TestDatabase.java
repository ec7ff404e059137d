package dev.itersnap.conformance;

import javax.sql.DataSource;

/**
 * What a dialect module supplies to run the conformance suite: a fresh database per scenario and the SQL type names
 * of the raw tables' columns. Implementations must be thread-safe if the suite is run in parallel (it is not by
 * default).
 */
public interface TestDatabase {

    /** The kinds of column the generated raw tables use. */
    enum ColumnType { INTEGER, VARCHAR, DATE, TIMESTAMP }

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

    /** Releases the database of a finished scenario (for example drops or shuts it down). Default: nothing. */
    default void discard(DataSource database) {
    }

    /**
     * The SQL type to declare for a raw-table column of this kind, for example {@code VARCHAR(40)} or, on
     * Databricks, {@code STRING}. Values are bound through JDBC as Integer, String, LocalDate and LocalDateTime.
     */
    String sqlType(ColumnType type);

    /**
     * The database's spelling of an ANSI column type used by the scenario tests' raw tables ({@code INT},
     * {@code BIGINT}, {@code VARCHAR(20)}, {@code DATE}, {@code TIMESTAMP}, {@code DECIMAL(10,2)},
     * {@code DOUBLE PRECISION}, {@code BOOLEAN}). Default: unchanged.
     */
    default String type(String ansiType) {
        return ansiType;
    }
}
