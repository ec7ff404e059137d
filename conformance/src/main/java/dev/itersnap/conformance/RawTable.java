package dev.itersnap.conformance;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A raw table holding the batches of a source (every batch still retained). Rows are inserted with bound values in
 * the table's current column order; retention and schema changes are plain statements on it.
 */
public final class RawTable {
    private final SnapshotFixture fixture;
    private final String name;
    private final List<String> columns;

    RawTable(SnapshotFixture fixture, String name, List<String> columns) {
        this.fixture = fixture;
        this.name = name;
        this.columns = new ArrayList<>(columns);
    }

    public String name() {
        return name;
    }

    /** The fixture whose database holds the table. */
    public SnapshotFixture fixture() {
        return fixture;
    }

    /** The current columns, in order. */
    public List<String> columns() {
        return Collections.unmodifiableList(columns);
    }

    /** {@code SELECT * FROM <table>}: the usual model source. */
    public String selectAll() {
        return "SELECT * FROM " + name;
    }

    /** Inserts one row; values in column order, bound as parameters. */
    public RawTable insert(Object... values) {
        if (values.length != columns.size()) {
            throw new IllegalArgumentException(name + " has columns " + columns + ", got " + values.length + " values");
        }
        fixture.execute("INSERT INTO " + name + " (" + String.join(", ", columns) + ") VALUES ("
                + "?, ".repeat(values.length - 1) + "?)", values);
        return this;
    }

    /**
     * Inserts several rows, several in one multi-row statement (on Delta Lake every statement
     * is a commit: one per row made the suite's set-ups cost more than the runs they set up).
     */
    public RawTable insertAll(List<Object[]> rows) {
        int perStatement = rowsPerInsert(columns.size());
        for (int from = 0; from < rows.size(); from += perStatement) {
            List<Object[]> chunk = rows.subList(from, Math.min(rows.size(), from + perStatement));
            List<Object> binds = new ArrayList<>();
            for (Object[] row : chunk) {
                if (row.length != columns.size()) {
                    throw new IllegalArgumentException(name + " has columns " + columns + ", got " + row.length
                            + " values");
                }
                binds.addAll(java.util.Arrays.asList(row));
            }
            String tuple = "(" + "?, ".repeat(columns.size() - 1) + "?)";
            fixture.execute("INSERT INTO " + name + " (" + String.join(", ", columns) + ") VALUES "
                    + String.join(", ", Collections.nCopies(chunk.size(), tuple)), binds.toArray());
        }
        return this;
    }

    /** Rows per multi-row INSERT of {@link #insertAll}, fewer when 250 values would not hold them. */
    static final int ROWS_PER_INSERT = 20;

    /** How many rows of {@code columns} values one fixture INSERT takes: well under every driver's parameter limit. */
    static int rowsPerInsert(int columns) {
        return Math.max(1, Math.min(ROWS_PER_INSERT, 250 / columns));
    }

    /** Removes the rows whose {@code column} equals {@code value} (retention dropping a batch). */
    public int deleteWhere(String column, Object value) {
        return fixture.execute("DELETE FROM " + name + " WHERE " + column + " = ?", value);
    }

    /** Sets {@code column} to {@code value} on the rows where {@code whereColumn = whereValue}. */
    public int update(String column, Object value, String whereColumn, Object whereValue) {
        return fixture.execute("UPDATE " + name + " SET " + column + " = ? WHERE " + whereColumn + " = ?", value,
                whereValue);
    }

    /** Adds a column at the end ({@code name ANSI_TYPE}). */
    public RawTable addColumn(String definition) {
        int sp = definition.indexOf(' ');
        String col = definition.substring(0, sp);
        fixture.execute("ALTER TABLE " + name + " ADD COLUMN " + col + " "
                + fixture.type(definition.substring(sp + 1).strip()));
        columns.add(col);
        return this;
    }

    /** Drops a column. */
    public RawTable dropColumn(String column) {
        fixture.execute("ALTER TABLE " + name + " DROP COLUMN " + column);
        columns.removeIf(c -> c.equalsIgnoreCase(column));
        return this;
    }

    /** Number of rows. */
    public long count() {
        return (Long) fixture.query("SELECT COUNT(*) AS n FROM " + name).get(0).get("n");
    }
}
