package dev.itersnap.spi;

/**
 * What a database can do, as data: the shared SQL of {@link AbstractSqlDialect} and the engine pick a statement form
 * from it instead of a dialect overriding the statement. Start from {@link #STANDARD} (what H2 and PostgreSQL do) and
 * switch off what the database lacks. Immutable.
 */
public final class Capabilities {
    /**
     * Transactional DML, primary keys, indexes and INSERT row counts; no {@code CREATE OR REPLACE TABLE}; no known
     * identifier or column limit.
     */
    public static final Capabilities STANDARD = new Capabilities(true, true, true, true, false, 0, 0, 0);

    private final boolean transactionalDml;
    private final boolean primaryKeys;
    private final boolean indexes;
    private final boolean insertRowCounts;
    private final boolean createOrReplaceTable;
    private final int maxIdentifierLength;
    private final int maxColumns;
    private final int maxQueryColumns;

    private Capabilities(boolean transactionalDml, boolean primaryKeys, boolean indexes, boolean insertRowCounts,
                         boolean createOrReplaceTable, int maxIdentifierLength, int maxColumns, int maxQueryColumns) {
        this.transactionalDml = transactionalDml;
        this.primaryKeys = primaryKeys;
        this.indexes = indexes;
        this.insertRowCounts = insertRowCounts;
        this.createOrReplaceTable = createOrReplaceTable;
        this.maxIdentifierLength = maxIdentifierLength;
        this.maxColumns = maxColumns;
        this.maxQueryColumns = maxQueryColumns;
    }

    /**
     * DML is transactional: a batch's writes and its ledger entry commit together. Without it every statement is its
     * own commit and the engine keeps a run crash-safe through the ledger (recovery) and the pending table.
     */
    public boolean transactionalDml() {
        return transactionalDml;
    }

    /** Tables can declare primary keys (without: none are declared; the engine never relies on them). */
    public boolean primaryKeys() {
        return primaryKeys;
    }

    /** Tables can have secondary indexes (without: none are created). */
    public boolean indexes() {
        return indexes;
    }

    /**
     * {@code INSERT ... SELECT} reports how many rows it inserted (without: inserts whose count the engine needs are
     * written as {@code MERGE ... ON FALSE WHEN NOT MATCHED THEN INSERT}, which reports it).
     */
    public boolean insertRowCounts() {
        return insertRowCounts;
    }

    /** {@code CREATE OR REPLACE TABLE} empties and reshapes a scratch table in one statement (without: DROP, CREATE). */
    public boolean createOrReplaceTable() {
        return createOrReplaceTable;
    }

    /**
     * The longest identifier (table, schema, column, index name) the database accepts, in characters of the plain
     * ASCII identifiers itersnap uses; 0 when unknown. Settings naming longer ones are refused before anything is
     * written, and derived names (scratch, archive, pending tables, indexes) that would be longer are shortened with a
     * hash so that they fit.
     */
    public int maxIdentifierLength() {
        return maxIdentifierLength;
    }

    /**
     * The most columns a table may have (PostgreSQL: 1,600; H2: 16,384); 0 when unknown or without a practical limit.
     * A model whose tables would have more (the source's columns and the columns the engine adds to the history) is
     * refused before anything is written, by {@code validate}, {@code check} and a run alike, naming the limit and the
     * count.
     */
    public int maxColumns() {
        return maxColumns;
    }

    public Capabilities maxColumns(int value) {
        return new Capabilities(transactionalDml, primaryKeys, indexes, insertRowCounts, createOrReplaceTable,
                maxIdentifierLength, value, maxQueryColumns);
    }

    /**
     * The most values one query may select or carry through a join (PostgreSQL: 1,664 target-list entries); 0 when
     * unknown or without a practical limit. The engine's widest statements carry two of each column of the history
     * (the staged row and the version it is compared with) and, under {@code strategy: check}, the row and two of
     * each compared column: a model whose statements would carry more is refused before anything is written.
     */
    public int maxQueryColumns() {
        return maxQueryColumns;
    }

    public Capabilities maxQueryColumns(int value) {
        return new Capabilities(transactionalDml, primaryKeys, indexes, insertRowCounts, createOrReplaceTable,
                maxIdentifierLength, maxColumns, value);
    }

    public Capabilities maxIdentifierLength(int value) {
        return new Capabilities(transactionalDml, primaryKeys, indexes, insertRowCounts, createOrReplaceTable,
                value, maxColumns, maxQueryColumns);
    }

    public Capabilities transactionalDml(boolean value) {
        return new Capabilities(value, primaryKeys, indexes, insertRowCounts, createOrReplaceTable,
                maxIdentifierLength, maxColumns, maxQueryColumns);
    }

    public Capabilities primaryKeys(boolean value) {
        return new Capabilities(transactionalDml, value, indexes, insertRowCounts, createOrReplaceTable,
                maxIdentifierLength, maxColumns, maxQueryColumns);
    }

    public Capabilities indexes(boolean value) {
        return new Capabilities(transactionalDml, primaryKeys, value, insertRowCounts, createOrReplaceTable,
                maxIdentifierLength, maxColumns, maxQueryColumns);
    }

    public Capabilities insertRowCounts(boolean value) {
        return new Capabilities(transactionalDml, primaryKeys, indexes, value, createOrReplaceTable,
                maxIdentifierLength, maxColumns, maxQueryColumns);
    }

    public Capabilities createOrReplaceTable(boolean value) {
        return new Capabilities(transactionalDml, primaryKeys, indexes, insertRowCounts, value,
                maxIdentifierLength, maxColumns, maxQueryColumns);
    }

    @Override
    public String toString() {
        return "Capabilities[transactionalDml=" + transactionalDml + ", primaryKeys=" + primaryKeys + ", indexes="
                + indexes + ", insertRowCounts=" + insertRowCounts + ", createOrReplaceTable=" + createOrReplaceTable
                + ", maxIdentifierLength=" + maxIdentifierLength + ", maxColumns=" + maxColumns + ", maxQueryColumns="
                + maxQueryColumns + "]";
    }
}
