package dev.itersnap.internal.sql;

import dev.itersnap.core.ColumnNames;
import dev.itersnap.core.TableName;
import dev.itersnap.spi.Dialect;
import dev.itersnap.internal.ResolvedModel;
import dev.itersnap.spi.Statement;
import dev.itersnap.spi.TableSpec;
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
    /** Batches, events, work: the batch's position in the run, from 1 (events: 0 for a key's state before it). */
    public static final String IDX = "itersnap_idx";
    /** Batches: the sequence's canonical text (the ledger's and dbt_scd_id's form). */
    public static final String SEQTEXT = "itersnap_seqtext";
    /** Batches: the deletion time is the one the ledger recorded (NULL included), not computed again. */
    public static final String RECORDED = "itersnap_recorded";
    /**
     * Events: what the row is: {@code I} the key's state before the run (from the history), {@code U} an accepted
     * row, {@code D} an accepted explicit delete, {@code R} rows set aside by the stage (the key is in the batch, but
     * untouched), {@code G} a row set aside as an updated_at regression.
     */
    public static final String KIND = "itersnap_kind";
    /** Batches: position of the first batch from this one on that has a deletion time (deletes absent keys). */
    public static final String ND = "itersnap_nd";
    /**
     * Batches: the batch is already applied and replayed key by key: its rows are staged again only for the keys the
     * run's late batches change.
     */
    public static final String REPLAYED = dev.itersnap.spi.PlanHints.REPLAYED;
    /** Batches: as {@link #ND}, among the replayed batches only (the history before the late batches). */
    public static final String ND_REPLAYED = "itersnap_nd_replayed";
    /**
     * Keys: the position of the first batch whose rows are the key's events: 1 for a key computed again from the
     * start of the run, else the first batch after every replayed one (the late batches leave the key as it is).
     */
    public static final String FROM_IDX = dev.itersnap.spi.PlanHints.RECOMPUTED_FROM;
    /** Events, I rows: {@code live} (a current version), {@code drec} (a current deletion record), {@code closed}. */
    public static final String ISTATE = "itersnap_istate";
    /** Events, I rows: valid_from of the current version. */
    public static final String IVF = "itersnap_ivf";
    /** Events, I rows: dbt_updated_at of the current version. */
    public static final String IUPD = "itersnap_iupd";
    /** Events, I rows without a current version: the end of the key's last version. */
    public static final String IEND = "itersnap_iend";
    /**
     * Work: what the row does: {@code ilive}, {@code idrec}, {@code iclosed} (the state before the run),
     * {@code insert}, {@code return}, {@code change}, {@code noop}, {@code delete}, {@code delnoop}, {@code absent}
     * (deleted by absence), {@code present} (set aside by the stage), {@code regr} (set aside as a regression).
     */
    public static final String ACTION = "itersnap_action";
    /** Work: the time the row takes effect at (its updated_at; a batch's deletion time for {@code absent}). */
    public static final String T = "itersnap_t";
    /** Work: when it takes effect, never before the key's previous change (a running maximum of T). */
    public static final String TT = "itersnap_tt";
    /** Work: a change or delete earlier than the version it would close (an updated_at regression). */
    public static final String REG = "itersnap_reg";
    /**
     * Work: how many rows of the key up to this one change its state: the next such row is the one with one more
     * (see {@link SetBasedApply}).
     */
    public static final String SCC = "itersnap_scc";
    /**
     * Work: the position up to which (not included) the row repeats in the key's batches (the derivation leaves such
     * repeats out: see {@link SetBasedApply}); one more than its own for a row not repeated.
     */
    public static final String UPTO = "itersnap_upto";
    /** Work: position of the row that opened the key's version current at this row (0: the state before). */
    public static final String OIDX = "itersnap_oidx";

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
        TableSpec.Builder b = TableSpec.builder(m.target(), Creation.NEW).widenable()
                .writers(TableSpec.Writers.MANY);
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

    /**
     * The values of the columns a replay carries ({@link ResolvedModel#carrying}), saved before its roll back on a
     * database without transactions, one row per key and batch ({@link SqlSteps#saveCarried}): a run that fails after
     * the roll back loses none of them. Emptied when the replay is applied.
     */
    public TableSpec carriedValues() {
        TableSpec.Builder b = TableSpec.builder(m.carriedValues(), Creation.IF_NOT_EXISTS).widenable();
        m.keys().forEach(k -> b.column(k, ColumnType.like(m.sourceColumn(k))));
        b.column(m.sequenceBy(), ColumnType.like(m.sequenceColumn()));
        m.carried().forEach(c -> b.column(c, ColumnType.like(m.sourceColumn(c))));
        return b.build();
    }

    /**
     * The stage: the run's source rows (and reproduced batches), classified for NULLs and duplicates; indexed by key
     * (the run's statements read it per key).
     */
    public TableSpec stage() {
        TableSpec.Builder b = sourceColumns(TableSpec.builder(m.stage(), Creation.SCRATCH));
        List<String> keyAndSequence = new ArrayList<>(m.keys());
        keyAndSequence.add(m.sequenceBy());
        return b.column(m.id(DEL), ColumnType.bool()).column(m.id(REJECT), ColumnType.text(32))
                .column(m.id(REPRO), ColumnType.bool()).index(m.fit(m.stage().table() + "_ix"), keyAndSequence)
                .build();
    }

    /**
     * The keys the run may change, each with the first batch whose rows it takes as events: every other key's rows
     * are the same as its version then current, in every batch.
     */
    public TableSpec keys() {
        TableSpec.Builder b = TableSpec.builder(m.keysTable(), Creation.SCRATCH);
        m.keys().forEach(k -> b.column(k, ColumnType.like(m.sourceColumn(k))));
        b.column(m.id(FROM_IDX), ColumnType.integer());
        return b.index(m.fit(m.keysTable().table() + "_ix"), m.keys()).build();
    }

    /** The run's batches in business order, with their position, canonical text and deletion time. */
    public TableSpec batches() {
        return TableSpec.builder(m.batches(), Creation.SCRATCH).column(m.sequenceBy(), ColumnType.like(m.sequenceColumn()))
                .column(m.id(IDX), ColumnType.integer()).column(m.id(SEQTEXT), ColumnType.text(256))
                .column(m.id(DELTIME), ColumnType.like(m.updatedAtColumn())).column(m.id(RECORDED), ColumnType.bool())
                .column(m.id(ND), ColumnType.integer()).column(m.id(REPLAYED), ColumnType.bool())
                .column(m.id(ND_REPLAYED), ColumnType.integer()).build();
    }

    /** What the run does, per key and batch: each event classified, and the key's deletions by absence. */
    public TableSpec work() {
        ColumnType upd = ColumnType.like(m.updatedAtColumn());
        TableSpec.Builder b = dataColumns(TableSpec.builder(m.work(), Creation.SCRATCH));
        return b.column(m.id(IDX), ColumnType.integer()).column(m.id(ACTION), ColumnType.text(8))
                .column(m.id(T), upd).column(m.id(TT), upd).column(m.id(REG), ColumnType.bool())
                .column(m.id(SCC), ColumnType.integer()).column(m.id(OIDX), ColumnType.integer())
                .column(m.id(UPTO), ColumnType.integer())
                .index(m.fit(m.work().table() + "_ix"), keyAndIdx()).build();
    }

    private TableSpec.Builder dataColumns(TableSpec.Builder b) {
        m.historyDataSourceColumns().forEach(c -> b.column(c.name(), ColumnType.like(c)));
        return b;
    }

    private List<String> keyAndIdx() {
        List<String> cols = new ArrayList<>(m.keys());
        cols.add(m.id(IDX));
        return cols;
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

    /** The distinct non-NULL values of a sequence column of the history ({@code opened} or {@code closed}). */
    public Statement historySequences(String column) {
        return Statement.of("recover", "SELECT DISTINCT " + q(column) + " FROM " + name(m.target()) + " WHERE "
                + q(column) + " IS NOT NULL");
    }

    /**
     * The comment a history table carries naming its owner: the model and the metadata schema, and the
     * {@code valid_to_current} its open versions carry when set.
     */
    public String ownerComment() {
        String current = m.settings().validToCurrent();
        return "itersnap history of model " + m.name() + " with metadata in " + m.metadataSchema()
                + (current == null ? "" : "; open versions end at " + current);
    }

    /**
     * Reads {@link #ownerComment()}: model, metadata schema and valid_to_current (null when the open versions carry
     * NULL), or null when {@code comment} is not one.
     */
    public static OwnerMark parseOwnerComment(String comment) {
        if (comment == null) {
            return null;
        }
        java.util.regex.Matcher mt = java.util.regex.Pattern.compile(
                "itersnap history of model ([A-Za-z0-9_]+) with metadata in ([^\\s;']+)"
                        + "(?:; open versions end at ([0-9A-Za-z :.+\\-]+))?").matcher(comment);
        return mt.find() ? new OwnerMark(mt.group(1), mt.group(2), mt.group(3)) : null;
    }

    /**
     * What the owner's comment on a history table says: the model, its metadata schema, and the literal open versions
     * carry ({@code valid_to_current}; null when none).
     */
    public record OwnerMark(String model, String metadataSchema, String validToCurrent) {
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

    /** The comment the stage carries naming the shape of the run's scratch tables ({@code signature}). */
    public static String scratchComment(String signature) {
        return "itersnap scratch tables " + signature;
    }

    /** Marks the stage with the shape of the scratch tables just created. */
    public Statement markScratch(String signature) {
        return Statement.of("create scratch tables", "COMMENT ON TABLE " + name(m.stage()) + " IS '"
                + scratchComment(signature) + "'");
    }

    /**
     * The earliest {@code valid_from} of the history table's versions and, with {@code updatedAt} (a column of the
     * table, or null), the earliest value of that column: one row, NULLs when the table is empty.
     */
    public Statement earliestTimes(String updatedAt) {
        return Statement.of("adopt", "SELECT MIN(" + q(m.meta().validFrom()) + "), "
                + (updatedAt == null ? "NULL" : "MIN(" + q(updatedAt) + ")") + " FROM " + name(m.target()));
    }

    /** The number of versions in the history table. */
    public Statement countHistory() {
        return Statement.of("count history", "SELECT COUNT(*) FROM " + name(m.target()));
    }

    /**
     * Takes over an existing SCD Type 2 table's versions as the history through {@code through}, once its bookkeeping
     * columns exist. With {@code cut} (a rebuild), the versions that start at or after that time go and each key's
     * latest remaining version is reopened unless it closed by then. Then every version is opened at {@code through}
     * and every closed one closed there (no roll back reaches them), and change types are filled from the timeline:
     * {@code insert} for an open version, {@code update} when the key's next version starts where this one ends,
     * otherwise {@code delete}. With {@code fillIsDeleted} a NULL deletion flag is set false.
     * {@code validToType}: the table's valid_to type when {@code valid_to_current} marks open versions, else null.
     * The MERGEs over an aggregate stand where an UPDATE with a correlated subquery would: Delta Lake refuses
     * subqueries in an UPDATE's condition.
     */
    public List<Statement> adoptVersions(Object through, Object cut, String validToType, boolean fillIsDeleted) {
        ColumnNames n = m.meta();
        String t = name(m.target());
        String vt = q(n.validTo());
        String open = vt + " IS NULL";
        if (validToType != null) {
            open = "(" + open + " OR " + vt + " = CAST('" + m.settings().validToCurrent().replace("'", "''")
                    + "' AS " + validToType + "))";
        }
        String closed = q(n.closedSeq());
        String ct = q(n.changeType());
        String vf = q(n.validFrom());
        String keys = keyList("");
        String on = keysEqual("x", "y") + " AND x." + vf + " = y.itersnap_vf";
        List<Statement> out = new ArrayList<>();
        if (cut != null) {
            out.add(Statement.builder("adopt").sql("DELETE FROM " + t + " WHERE " + vf + " >= ").bind(cut).build());
            out.add(Statement.builder("adopt").sql("MERGE INTO " + t + " x USING (SELECT " + keys + ", MAX(" + vf
                    + ") AS itersnap_vf FROM " + t + " GROUP BY " + keys + ") y ON " + on + " WHEN MATCHED AND ("
                    + open.replace(vt, "x." + vt) + " OR x." + vt + " > ").bind(cut).sql(") THEN UPDATE SET " + vt
                    + " = NULL, " + ct + " = 'insert', " + q(n.changedAttributes()) + " = NULL").build());
        }
        out.add(Statement.builder("adopt").sql("UPDATE " + t + " SET " + q(n.openedSeq()) + " = ").bind(through)
                .build());
        out.add(Statement.of("adopt", "UPDATE " + t + " SET " + closed + " = NULL WHERE " + open));
        out.add(Statement.builder("adopt").sql("UPDATE " + t + " SET " + closed + " = ").bind(through)
                .sql(" WHERE NOT " + open).build());
        out.add(Statement.of("adopt", "UPDATE " + t + " SET " + ct + " = 'insert' WHERE " + ct + " IS NULL AND "
                + closed + " IS NULL"));
        out.add(Statement.of("adopt", "MERGE INTO " + t + " x USING (SELECT DISTINCT " + keyList("a.") + ", a." + vf
                + " AS itersnap_vf FROM " + t + " a JOIN " + t + " s ON " + keysEqual("s", "a") + " AND s." + vf
                + " = a." + vt + ") y ON " + on + " WHEN MATCHED AND x." + ct
                + " IS NULL THEN UPDATE SET " + ct + " = 'update'"));
        out.add(Statement.of("adopt", "UPDATE " + t + " SET " + ct + " = 'delete' WHERE " + ct + " IS NULL"));
        if (fillIsDeleted) {
            out.add(Statement.of("adopt", "UPDATE " + t + " SET " + q(n.isDeleted()) + " = FALSE WHERE "
                    + q(n.isDeleted()) + " IS NULL"));
        }
        return out;
    }

    /** The key columns, quoted, each after {@code prefix} ("" or an alias and a dot), comma-separated. */
    private String keyList(String prefix) {
        return m.keys().stream().map(k -> prefix + q(k)).collect(Collectors.joining(", "));
    }

    /** {@code a.k = b.k} for every key column, joined by AND. */
    private String keysEqual(String a, String b) {
        return m.keys().stream().map(k -> a + "." + q(k) + " = " + b + "." + q(k))
                .collect(Collectors.joining(" AND "));
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
