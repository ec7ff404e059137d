package dev.itersnap.spi;

/**
 * What a database can do, as data: the shared SQL of {@link AbstractSqlDialect} and the engine pick a statement form
 * from it instead of a dialect overriding the statement. Start from {@link #STANDARD} (what H2 and PostgreSQL do) and
 * switch off what the database lacks. Immutable.
 */
public final class Capabilities {
    /**
     * Transactional DML, primary keys, indexes and INSERT row counts; no {@code CREATE OR REPLACE TABLE}; no known identifier limit.
     */
    public static final Capabilities STANDARD = new Capabilities(true, true, true, true, false, 0);

    private final boolean transactionalDml;
    private final boolean primaryKeys;
    private final boolean indexes;
    private final boolean insertRowCounts;
    private final boolean createOrReplaceTable;
    private final int maxIdentifierLength;

    private Capabilities(boolean transactionalDml, boolean primaryKeys, boolean indexes, boolean insertRowCounts,
                         boolean createOrReplaceTable, int maxIdentifierLength) {
        this.transactionalDml = transactionalDml;
        this.primaryKeys = primaryKeys;
        this.indexes = indexes;
        this.insertRowCounts = insertRowCounts;
        this.createOrReplaceTable = createOrReplaceTable;
        this.maxIdentifierLength = maxIdentifierLength;
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

    public Capabilities maxIdentifierLength(int value) {
        return new Capabilities(transactionalDml, primaryKeys, indexes, insertRowCounts, createOrReplaceTable, value);
    }

    public Capabilities transactionalDml(boolean value) {
        return new Capabilities(value, primaryKeys, indexes, insertRowCounts, createOrReplaceTable, maxIdentifierLength);
    }

    public Capabilities primaryKeys(boolean value) {
        return new Capabilities(transactionalDml, value, indexes, insertRowCounts, createOrReplaceTable, maxIdentifierLength);
    }

    public Capabilities indexes(boolean value) {
        return new Capabilities(transactionalDml, primaryKeys, value, insertRowCounts, createOrReplaceTable, maxIdentifierLength);
    }

    public Capabilities insertRowCounts(boolean value) {
        return new Capabilities(transactionalDml, primaryKeys, indexes, value, createOrReplaceTable, maxIdentifierLength);
    }

    public Capabilities createOrReplaceTable(boolean value) {
        return new Capabilities(transactionalDml, primaryKeys, indexes, insertRowCounts, value, maxIdentifierLength);
    }

    @Override
    public String toString() {
        return "Capabilities[transactionalDml=" + transactionalDml + ", primaryKeys=" + primaryKeys + ", indexes="
                + indexes + ", insertRowCounts=" + insertRowCounts + ", createOrReplaceTable=" + createOrReplaceTable
                + ", maxIdentifierLength=" + maxIdentifierLength + "]";
    }
}
