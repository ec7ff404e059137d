package dev.itersnap.spi;

import dev.itersnap.core.ColumnNames;
import dev.itersnap.core.TableName;
import dev.itersnap.spi.TableSpec.ColumnType;
import dev.itersnap.spi.TableSpec.Creation;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * The tables of one model, described once: the history, and the working tables in the metadata schema (archive,
 * pending, stage, work) with their internal columns; plus the plain housekeeping statements over them that need no
 * dialect of their own (copying between stage and pending, emptying, listing sequences). Internal columns start with
 * {@code itersnap_}, which source columns may not. Immutable.
 */
public final class ModelTables {
    /** Stage, work, archive, pending: the row is an explicit delete. */
    public static final String DEL = "itersnap_del";
    /** Stage, work, archive, pending: why the row is set aside, or NULL. */
    public static final String REJECT = "itersnap_reject";
    /** Stage, pending: the row was reproduced from the history. */
    public static final String REPRO = "itersnap_repro";
    /** Pending: the deletion time the ledger recorded for the batch. */
    public static final String DELTIME = "itersnap_deltime";
    /** Work: what the batch does with the row (insert, change, return, delete, noop). */
    public static final String ACTION = "itersnap_action";
    /** Work: the row goes to the archive. */
    public static final String KEEP = "itersnap_keep";
    /** Work: valid_from of the version the row opens. */
    public static final String VFROM = "itersnap_vfrom";
    /** Work: changed_attributes of the version the row closes. */
    public static final String CHANGED = "itersnap_changed";

    private final Dialect dialect;
    private final ResolvedModel m;

    public ModelTables(Dialect dialect, ResolvedModel m) {
        this.dialect = dialect;
        this.m = m;
    }

    // ---------------------------------------------------------------- the tables

    /**
     * The history: the source's columns, the meta columns, and the sequences that opened and closed each version;
     * indexed on (key, valid_to) and on each sequence column.
     */
    public TableSpec history() {
        ColumnNames n = m.meta();
        ColumnType upd = ColumnType.like(m.updatedAtColumn());
        ColumnType seq = ColumnType.like(m.sequenceColumn());
        TableSpec.Builder b = TableSpec.builder(m.target(), Creation.NEW).widenable();
        if (m.target().schema() != null) {
            b.createSchema();
        }
        m.sourceColumns().forEach(c -> b.column(c.name(), ColumnType.like(c)));
        b.column(n.scdId(), ColumnType.text(64)).column(n.updatedAt(), upd).column(n.validFrom(), upd)
                .column(n.validTo(), upd).column(n.changeType(), ColumnType.text(16))
                .column(n.changedAttributes(), ColumnType.json());
        if (m.deletionRecords()) {
            b.column(n.isDeleted(), ColumnType.bool());
        }
        b.column(n.openedSeq(), seq).column(n.closedSeq(), seq);
        List<String> key = new ArrayList<>(m.keys());
        key.add(n.validTo());
        String base = m.target().table();
        return b.index(m.fit(base + "_itersnap_key"), key).index(m.fit(base + "_itersnap_opened"),
                List.of(n.openedSeq())).index(m.fit(base + "_itersnap_closed"), List.of(n.closedSeq())).build();
    }

    /**
     * The archive: the rows of applied batches whose effect the history alone cannot reproduce (set-aside rows,
     * explicit deletes, rows that changed nothing but differ from the live version), so that a batch that aged out
     * of the source can be replayed exactly.
     */
    public TableSpec archive() {
        TableSpec.Builder b = sourceColumns(TableSpec.builder(m.archive(), Creation.IF_NOT_EXISTS).widenable());
        return b.column(m.id(DEL), ColumnType.bool()).column(m.id(REJECT), ColumnType.text(32))
                .index(m.fit(m.archive().table() + "_ix"), sequenceAndKey()).build();
    }

    /**
     * The pending batches, used only without transactional DML: the staged rows of batches that aged out of the
     * source, saved before a replay rolls the history back over them, with their recorded deletion time, so that a
     * run that fails in between loses nothing (the next run finds them here). Empty between runs.
     */
    public TableSpec pending() {
        TableSpec.Builder b = sourceColumns(TableSpec.builder(m.pending(), Creation.IF_NOT_EXISTS).widenable());
        return b.column(m.id(DEL), ColumnType.bool()).column(m.id(REJECT), ColumnType.text(32))
                .column(m.id(REPRO), ColumnType.bool()).column(m.id(DELTIME), ColumnType.text(64)).build();
    }

    /** The stage: the run's source rows (and reproduced batches), classified for NULLs and duplicates. */
    public TableSpec stage() {
        TableSpec.Builder b = sourceColumns(TableSpec.builder(m.stage(), Creation.SCRATCH));
        return b.column(m.id(DEL), ColumnType.bool()).column(m.id(REJECT), ColumnType.text(32))
                .column(m.id(REPRO), ColumnType.bool()).index(m.fit(m.stage().table() + "_ix"), sequenceAndKey())
                .build();
    }

    /** The work table: one batch's rows with what the batch does with each. */
    public TableSpec work() {
        TableSpec.Builder b = sourceColumns(TableSpec.builder(m.work(), Creation.SCRATCH));
        return b.column(m.id(DEL), ColumnType.bool()).column(m.id(REJECT), ColumnType.text(32))
                .column(m.id(ACTION), ColumnType.text(8)).column(m.id(KEEP), ColumnType.bool())
                .column(m.id(VFROM), ColumnType.like(m.updatedAtColumn()))
                .column(m.id(CHANGED), ColumnType.json()).index(m.fit(m.work().table() + "_ix"), m.keys()).build();
    }

    private TableSpec.Builder sourceColumns(TableSpec.Builder b) {
        m.sourceColumns().forEach(c -> b.column(c.name(), ColumnType.like(c)));
        return b;
    }

    private List<String> sequenceAndKey() {
        List<String> cols = new ArrayList<>();
        cols.add(m.sequenceBy());
        cols.addAll(m.keys());
        return cols;
    }

    // ---------------------------------------------------------------- housekeeping statements

    /** Empties a working table. */
    public Statement clear(TableName table) {
        return Statement.of("clear " + table.table(), "DELETE FROM " + name(table));
    }

    /** The greatest updated_at of a batch in the stage (its deletion time when the sequence is not a time). */
    public Statement deletionTime(Object sequence) {
        return Statement.builder("deletion time").sql("SELECT MAX(" + q(m.updatedAt()) + ") FROM " + name(m.stage())
                + " WHERE " + q(m.sequenceBy()) + " = ").bind(sequence).build();
    }

    /** The distinct non-NULL values of a sequence column of the history ({@code opened} or {@code closed}). */
    public Statement historySequences(String column) {
        return Statement.of("recover", "SELECT DISTINCT " + q(column) + " FROM " + name(m.target()) + " WHERE "
                + q(column) + " IS NOT NULL");
    }

    /** The comment a history table carries naming its owner: the model and the metadata schema. */
    public String ownerComment() {
        return "itersnap history of model " + m.name() + " with metadata in " + m.metadataSchema();
    }

    /** Reads {@link #ownerComment()}: model and metadata schema, or null when {@code comment} is not one. */
    public static String[] parseOwnerComment(String comment) {
        if (comment == null) {
            return null;
        }
        java.util.regex.Matcher mt = java.util.regex.Pattern.compile(
                "itersnap history of model ([A-Za-z0-9_]+) with metadata in ([A-Za-z0-9_]+)").matcher(comment);
        return mt.find() ? new String[] {mt.group(1), mt.group(2)} : null;
    }

    /**
     * Marks the history table with its owner ({@link #ownerComment()}) as a table comment, which every database
     * keeps with the table, also when the metadata schema is dropped or another one is used. Names only (validated
     * identifiers), no value from data.
     */
    public Statement markOwner() {
        return Statement.of("register owner", "COMMENT ON TABLE " + name(m.target()) + " IS '" + ownerComment()
                + "'");
    }

    /** One row of the history table, if it has any. */
    public Statement anyHistoryRow() {
        return Statement.of("check owner", "SELECT 1 FROM " + name(m.target()));
    }

    /** The distinct non-NULL sequences the history records (opened or closed a version). */
    public Statement historySequences() {
        String opened = q(m.meta().openedSeq());
        String closed = q(m.meta().closedSeq());
        return Statement.of("check ledger", "SELECT " + opened + " FROM " + name(m.target()) + " WHERE " + opened
                + " IS NOT NULL UNION SELECT " + closed + " FROM " + name(m.target()) + " WHERE " + closed
                + " IS NOT NULL");
    }

    /** The distinct sequences of the archive. */
    public Statement archivedSequences() {
        return Statement.of("recover", "SELECT DISTINCT " + q(m.sequenceBy()) + " FROM " + name(m.archive()));
    }

    /** The batches in the pending table with their recorded deletion time: sequence, deletion time text. */
    public Statement pendingBatches() {
        return Statement.of("discover", "SELECT DISTINCT " + q(m.sequenceBy()) + ", " + q(m.id(DELTIME)) + " FROM "
                + name(m.pending()));
    }

    /** Copies a pending batch into the stage. */
    public Statement restorePending(Object sequence) {
        return Statement.builder("reproduce aged-out batch").sql("INSERT INTO " + name(m.stage()) + " ("
                + stageColumns() + ") SELECT " + stageColumns() + " FROM " + name(m.pending()) + " WHERE "
                + q(m.sequenceBy()) + " = ").bind(sequence).build();
    }

    /** Saves a staged batch, with its recorded deletion time, in the pending table. */
    public Statement savePending(Object sequence, String deletionTime) {
        return Statement.builder("save aged-out batch").sql("INSERT INTO " + name(m.pending()) + " ("
                + stageColumns() + ", " + q(m.id(DELTIME)) + ") SELECT " + stageColumns() + ", ").bind(deletionTime)
                .sql(" FROM " + name(m.stage()) + " WHERE " + q(m.sequenceBy()) + " = ").bind(sequence).build();
    }

    /** The stage's columns, quoted (also the pending table's, which adds the deletion time). */
    private String stageColumns() {
        List<String> cols = new ArrayList<>(m.sourceNames());
        cols.add(m.id(DEL));
        cols.add(m.id(REJECT));
        cols.add(m.id(REPRO));
        return cols.stream().map(this::q).collect(Collectors.joining(", "));
    }

    private String q(String identifier) {
        return dialect.quote(identifier);
    }

    private String name(TableName table) {
        return table.parts().stream().map(this::q).collect(Collectors.joining("."));
    }
}
