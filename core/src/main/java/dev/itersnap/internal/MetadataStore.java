package dev.itersnap.internal;

import dev.itersnap.core.BatchResult;
import dev.itersnap.core.Inspection;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.TableName;
import dev.itersnap.internal.sql.SqlSteps;
import dev.itersnap.spi.Dialect;
import dev.itersnap.spi.MetadataSchema;
import dev.itersnap.spi.Statement;
import dev.itersnap.spi.TableSpec;
import dev.itersnap.spi.ValueType;

import java.lang.management.ManagementFactory;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * The metadata store of one model: the only code that creates, writes and reads the ledger, the run log, the error
 * log's bookkeeping and the column registry ({@link MetadataSchema} names them). Used by the engine and by
 * {@link MetadataInspection}. Values are always bound. Not thread-safe: one per run or inspection.
 */
public final class MetadataStore {
    /**
     * One applied batch with its counts. {@code lost} marks a batch the history carries but the ledger lost
     * (tampering): it is replayed, never applied over; it has no counts. {@code fingerprint} is the batch's content
     * hash as applied ({@link Fingerprints}), null when not recorded.
     */
    record Entry(Seq sequence, String runId, String deletionTime, boolean reproduced, boolean lost, BatchResult counts,
                 Fingerprint fingerprint) {
        /** The rows the source held for the batch when it was applied (0 for a lost entry). */
        long sourceRows() {
            return counts == null ? 0 : counts.sourceRows();
        }
    }

    /**
     * One known source column, the batch that introduced it (null: there from the first batch), whether the source has
     * it, and for a column the source no longer has the last batch applied while it had it (null: none was).
     */
    record Column(String name, String introducedText, boolean inSource, String droppedAfterText) {
    }

    /** A ledger row as an inspection shows it, its sequence still text. */
    record LedgerRow(String sequence, String runId, LocalDateTime appliedAt, long sourceRows, long duplicateRows,
                     long inserted, long updated, long deleted, long rejected, boolean reproduced,
                     String fingerprint) {
    }

    /** Sequences per DELETE of {@link #forget}: with the model, below the driver's parameter limit. */
    static final int FORGET_CHUNK = dev.itersnap.spi.SqlValues.MAX_PARAMETERS - 56;
    /** Ledger rows per INSERT of {@link #recordAll}: 13 values each, below the driver's parameter limit. */
    static final int RECORD_CHUNK = 18;

    private final Jdbc jdbc;
    private final Dialect dialect;
    private final MetadataSchema schema;
    private final String model;
    /** The content hashes of the source's batches found by this run, recorded with the batches applied from it. */
    private Map<Seq, Fingerprint> fingerprints = Map.of();
    private List<LedgerRead> ledgerRows;
    private long ledgerRowsAt;
    /** See {@link #readNothing}. */
    private boolean readsNothing;
    /** What {@link #readAll} read, valid while {@link Jdbc#writes} is {@link #readAt}; null before. */
    private ReadAll read;
    private long readAt;

    MetadataStore(Jdbc jdbc, Dialect dialect, MetadataSchema schema, String model) {
        this.jdbc = jdbc;
        this.dialect = dialect;
        this.schema = schema;
        this.model = model;
    }

    /**
     * A store for reading a model's metadata on {@code connection} ({@link MetadataInspection}); names are folded the
     * way the database folds unquoted identifiers.
     */
    static MetadataStore reading(Connection connection, Dialect dialect, ModelSettings settings)
            throws SQLException {
        var fold = Jdbc.folding(connection, dialect);
        return new MetadataStore(new Jdbc(connection, settings.name(), dialect), dialect,
                new MetadataSchema(fold.apply(settings.metadataSchema()), fold), settings.name());
    }

    /** The metadata schema's tables and columns, folded. */
    MetadataSchema schema() {
        return schema;
    }

    /**
     * For a plan made before the metadata tables exist: every read of the model's ledger, owners and fingerprint
     * formats gives nothing, as the first run will find.
     */
    void readNothing() {
        readsNothing = true;
    }

    /** Whether the run log exists: false until the model (or another of the schema) first ran. */
    boolean exists() throws SQLException {
        return jdbc.tableExists(schema.runs().spec().name());
    }

    // ---------------------------------------------------------------- DDL

    /**
     * Creates the schema and the engine's tables if missing. One read when they are there: the run log is the last
     * table created, so a run log means every table exists, and nothing is created (no {@code CREATE ... IF NOT
     * EXISTS} per run, which on some catalogs needs a privilege even when the object exists). Two first runs may race
     * on {@code CREATE ... IF NOT EXISTS}: a statement that fails is tried once more, when it sees the object.
     */
    void create() {
        if (describes(schema.runs().spec())) {
            return;
        }
        createTables();
    }

    /**
     * {@link #create} without the read that tells whether the tables are there, for a caller that found out (a
     * {@link #readAll} that failed).
     */
    void createTables() {
        for (TableSpec spec : schema.engineTables()) {
            for (Statement s : dialect.createTable(spec)) {
                Statement st = s.inStep("create metadata");
                try {
                    jdbc.update(st);
                } catch (RuntimeException e) {
                    jdbc.update(st);
                }
            }
        }
    }

    /** Whether {@code table} can be described (it exists); one statement. */
    private boolean describes(TableSpec table) {
        try {
            jdbc.describe(SqlSteps.of(dialect).describe(dev.itersnap.spi.Relation.table(table.name())));
            return true;
        } catch (SQLException | RuntimeException e) {
            jdbc.rollbackQuietly();
            return false;
        }
    }

    // ---------------------------------------------------------------- what a run reads first

    /**
     * What {@link #readAll} read: the run log's head for run {@code runId}, the owners of table {@code target}, the
     * ledger, the column registry and the sequences with rows in the error log.
     */
    private record ReadAll(String runId, String target, RunLogHead head, Owners owners, List<LedgerRead> ledger,
                           Map<String, Column> columns, List<String> errorSequences) {
    }

    /**
     * Reads in one statement what a run reads of its model's metadata before it writes (issue 39: on a warehouse every
     * statement is a round trip, on Delta a job): the run log's head ({@link #runLogHead}), the owners of {@code
     * target} ({@link #owners}), the ledger ({@link #ledger}), the column registry ({@link #columns}) and the error
     * log's sequences ({@link #loggedSequences}). Each of those answers from it until the run writes on this
     * connection; after a write it reads again, as before. One {@code UNION ALL} of one branch per table, each row
     * tagged with its table, its values in typed slots (text, six integers, a flag, a time) so that no value changes
     * type on the way.
     */
    void readAll(String runId, String target) {
        readAll(runId, target, null);
    }

    /**
     * {@link #readAll} and, in the same statement, the description of {@code describe} (the source's, {@code SELECT *
     * ... WHERE 1 = 0}): the metadata's rows with the described relation's columns after them, joined to none of its
     * rows. A run reads both first, before it takes the lock: one round trip where it made two. Returns the described
     * columns, or null when the statement failed (the metadata tables do not exist yet, or the source cannot be
     * read): nothing is read then, and the caller describes the source alone, which reports its own failure.
     */
    List<dev.itersnap.spi.SourceColumn> readAllDescribing(String runId, String target, Statement describe) {
        try {
            return readAll(runId, target, describe);
        } catch (RuntimeException e) {
            jdbc.rollbackQuietly();
            read = null;
            return null;
        }
    }

    /** Whether {@link #readAll} read what the run reads first and nothing was written since. */
    boolean readValid() {
        return valid() != null;
    }

    private List<dev.itersnap.spi.SourceColumn> readAll(String runId, String target, Statement describe) {
        if (readsNothing) {
            return null;
        }
        var p = SqlSteps.of(dialect).primitives();
        String text = "CAST(NULL AS " + p.typeName(TableSpec.ColumnType.longText()) + ")";
        String number = "CAST(NULL AS " + p.typeName(TableSpec.ColumnType.bigint()) + ")";
        String flag = "CAST(NULL AS " + p.typeName(TableSpec.ColumnType.bool()) + ")";
        String time = "CAST(NULL AS " + p.typeName(TableSpec.ColumnType.timestamp()) + ")";
        String longText = p.typeName(TableSpec.ColumnType.longText());
        java.util.function.Function<String, String> t = e -> "CAST(" + e + " AS " + longText + ")";
        java.util.function.Function<String, String> n = e -> "CAST(" + e + " AS "
                + p.typeName(TableSpec.ColumnType.bigint()) + ")";
        MetadataSchema.Ledger l = schema.ledger();
        MetadataSchema.Targets g = schema.targets();
        MetadataSchema.Columns c = schema.columns();
        MetadataSchema.Errors e = schema.errors();
        Statement.Builder b = Statement.builder("read metadata");
        // the slots: 1 the table, 2-5 text, 6-11 numbers, 12 a flag, 13 a time
        // the first branch names the slots (itersnap_k1 ...), so that the union can be a derived table (describe)
        List<String> slots = List.of("'r'", t.apply("itersnap_run"), t.apply("itersnap_logic"),
                t.apply("itersnap_status"), t.apply("itersnap_checked"), n.apply("itersnap_latest"),
                n.apply("itersnap_logged"), n.apply("itersnap_latest_logged"), n.apply("itersnap_swept"),
                n.apply("itersnap_latest_swept"), n.apply("itersnap_runs"), flag, "itersnap_start");
        StringBuilder first = new StringBuilder("SELECT ");
        for (int i = 0; i < slots.size(); i++) {
            first.append(i == 0 ? "" : ", ").append(slots.get(i)).append(" AS itersnap_k").append(i + 1);
        }
        if (describe != null) {
            b.sql("SELECT itersnap_m.*, itersnap_d.* FROM (");
        }
        b.sql(first + " FROM ").sql(headRows(runId));
        b.sql(" UNION ALL SELECT 'l', " + t.apply(q(l.sequence())) + ", " + t.apply(q(l.runId())) + ", "
                + t.apply(q(l.deletionTime())) + ", " + t.apply(q(l.contentHash())) + ", " + n.apply(q(l.sourceRows()))
                + ", " + n.apply(q(l.duplicateRows())) + ", " + n.apply(q(l.inserted())) + ", "
                + n.apply(q(l.updated())) + ", " + n.apply(q(l.deleted())) + ", " + n.apply(q(l.rejected())) + ", "
                + q(l.reproduced()) + ", " + time + " FROM " + name(l.spec().name()) + " WHERE " + q(l.model())
                + " = ").bind(model);
        String bigint = p.typeName(TableSpec.ColumnType.bigint());
        b.sql(" UNION ALL SELECT 'o', " + t.apply(q(g.target())) + ", " + t.apply(q(g.model())) + ", " + text + ", "
                + text + ", CAST(CASE WHEN " + q(g.target()) + " = ").bind(target).sql(" THEN 1 ELSE 0 END AS "
                + bigint + "), CAST(CASE WHEN " + q(g.model()) + " = ").bind(model).sql(" THEN 1 ELSE 0 END AS "
                + bigint + "), " + number + ", " + number + ", " + number + ", " + number + ", " + flag + ", " + time + " FROM "
                + name(g.spec().name()) + " WHERE " + q(g.target()) + " = ").bind(target).sql(" OR " + q(g.model())
                + " = ").bind(model);
        b.sql(" UNION ALL SELECT 'c', " + t.apply(q(c.column())) + ", " + t.apply(q(c.introduced())) + ", "
                + t.apply(q(c.droppedAfter())) + ", " + text + ", " + number + ", " + number + ", " + number + ", "
                + number + ", " + number + ", " + number + ", " + q(c.inSource()) + ", " + time + " FROM "
                + name(c.spec().name()) + " WHERE " + q(c.model()) + " = ").bind(model);
        b.sql(" UNION ALL SELECT 'e', " + t.apply("d.itersnap_sequence") + ", " + text + ", " + text + ", " + text
                + ", " + number + ", " + number + ", " + number + ", " + number + ", " + number + ", " + number + ", "
                + flag + ", " + time + " FROM (SELECT DISTINCT " + q(e.sequence()) + " AS itersnap_sequence FROM "
                + name(e.spec().name()) + " WHERE " + q(e.model()) + " = ").bind(model).sql(" AND "
                + q(e.sequence()) + " IS NOT NULL) d");
        if (describe != null) {
            b.sql(") itersnap_m LEFT JOIN (").sql(describe).sql(") itersnap_d ON 1 = 0");
        }
        HeadReader head = new HeadReader();
        String[] owners = new String[2];
        List<LedgerRead> ledger = new ArrayList<>();
        Map<String, Column> columns = new LinkedHashMap<>();
        List<String> errors = new ArrayList<>();
        List<dev.itersnap.spi.SourceColumn> described = new ArrayList<>();
        Jdbc.Columns describing = describe == null ? null : md -> {
            for (int i = slots.size() + 1; i <= md.getColumnCount(); i++) {
                described.add(new dev.itersnap.spi.SourceColumn(md.getColumnLabel(i), md.getColumnType(i),
                        md.getColumnTypeName(i), md.getPrecision(i), md.getScale(i)));
            }
        };
        jdbc.query(b.build(), describing, rs -> {
            switch (rs.getString(1)) {
                case "r" -> head.row(rs, 2, 6, 13);
                case "l" -> ledger.add(new LedgerRead(rs.getString(2), rs.getString(3), rs.getString(4),
                        rs.getBoolean(12), rs.getLong(6), rs.getLong(7), rs.getLong(8), rs.getLong(9), rs.getLong(10),
                        rs.getLong(11), rs.getString(5)));
                case "o" -> {
                    if (rs.getLong(6) == 1 && owners[0] == null) {
                        owners[0] = rs.getString(3);
                    }
                    if (rs.getLong(7) == 1 && owners[1] == null) {
                        owners[1] = rs.getString(2);
                    }
                }
                case "c" -> columns.put(rs.getString(2), new Column(rs.getString(2), rs.getString(3),
                        rs.getBoolean(12), rs.getString(4)));
                default -> errors.add(rs.getString(2));
            }
            return null;
        });
        read = new ReadAll(runId, target, head.head(), new Owners(owners[0], owners[1]), List.copyOf(ledger),
                columns, List.copyOf(errors));
        readAt = jdbc.writes();
        return describe == null ? null : List.copyOf(described);
    }

    /** What {@link #readAll} read, or null when nothing was or the run wrote since. */
    private ReadAll valid() {
        return read != null && readAt == jdbc.writes() ? read : null;
    }

    // ---------------------------------------------------------------- ledger

    /** Applied batches in business order. */
    TreeMap<Seq, Entry> ledger(ResolvedModel m) {
        TreeMap<Seq, Entry> out = new TreeMap<>();
        for (LedgerRead r : ledgerRead()) {
            Seq s = Seq.parse(m, r.sequence());
            BatchResult counts = new BatchResult(s.shown(), r.sourceRows(), r.inserted(), r.updated(), r.deleted(),
                    r.rejected(), r.reproduced(), r.duplicateRows());
            out.put(s, new Entry(s, r.runId(), r.deletionTime(), r.reproduced(), false, counts,
                    Fingerprint.parse(r.fingerprint())));
        }
        return out;
    }

    /** How many batches the model's ledger records, and how many versions they inserted. */
    record LedgerSize(long batches, long inserted) {
    }

    /** The model's {@link LedgerSize}. */
    LedgerSize ledgerSize() {
        long inserted = 0;
        List<LedgerRead> rows = ledgerRead();
        for (LedgerRead r : rows) {
            inserted += r.inserted();
        }
        return new LedgerSize(rows.size(), inserted);
    }

    /** One ledger row as read, its sequence still text (the owner check reads it before the type is checked). */
    private record LedgerRead(String sequence, String runId, String deletionTime, boolean reproduced, long sourceRows,
                              long duplicateRows, long inserted, long updated, long deleted, long rejected,
                              String fingerprint) {
    }

    /**
     * The model's ledger rows: read once and reused while nothing was written on the run's connection since (the
     * owner check and the run's plan both need them; on Delta every read is a job).
     */
    private List<LedgerRead> ledgerRead() {
        if (readsNothing) {
            return List.of();
        }
        if (ledgerRows != null && ledgerRowsAt == jdbc.writes()) {
            return ledgerRows;
        }
        ReadAll all = valid();
        if (all != null) {
            return all.ledger();
        }
        MetadataSchema.Ledger l = schema.ledger();
        ledgerRows = List.copyOf(jdbc.query(select("read ledger", l.spec(), List.of(l.sequence(), l.runId(),
                l.deletionTime(), l.reproduced(), l.sourceRows(), l.duplicateRows(), l.inserted(), l.updated(),
                l.deleted(), l.rejected(), l.contentHash()), l.model()),
                rs -> new LedgerRead(rs.getString(1), rs.getString(2), rs.getString(3), rs.getBoolean(4),
                        rs.getLong(5), rs.getLong(6), rs.getLong(7), rs.getLong(8), rs.getLong(9), rs.getLong(10),
                        rs.getString(11))));
        ledgerRowsAt = jdbc.writes();
        return ledgerRows;
    }

    /** The ledger's rows of the model, with their counts and fingerprints, in the order the database returns them. */
    List<LedgerRow> ledgerRows() {
        MetadataSchema.Ledger l = schema.ledger();
        return jdbc.query(select("read ledger", l.spec(), List.of(l.sequence(), l.runId(), l.appliedAt(),
                l.sourceRows(), l.duplicateRows(), l.inserted(), l.updated(), l.deleted(), l.rejected(),
                l.reproduced(), l.contentHash()), l.model()), rs -> new LedgerRow(rs.getString(1),
                rs.getString(2), time(rs, 3), rs.getLong(4), rs.getLong(5), rs.getLong(6), rs.getLong(7),
                rs.getLong(8), rs.getLong(9), rs.getBoolean(10), rs.getString(11)));
    }

    /**
     * Read-only, for dry runs: the applied batches the next run of {@code settings} finds restated (their fingerprint
     * in the source differs from the ledger's), as sequence texts in business order. Empty with {@code restatements:
     * ignore} and before the first run.
     */
    List<String> restatedBatches(ModelSettings settings) throws SQLException {
        MetadataSchema.Ledger l = schema.ledger();
        if (settings.restatements() == dev.itersnap.core.Restatements.IGNORE || !jdbc.tableExists(l.spec().name())) {
            return List.of();
        }
        dev.itersnap.internal.ResolvedModel m = ModelResolver.resolveSource(jdbc, dialect, settings);
        Fingerprints prints = Fingerprints.of(dialect, m);
        TreeMap<Seq, Entry> applied = ledger(m);
        Map<Seq, Fingerprint> now = prints.read(jdbc, dialect, m);
        TreeMap<Seq, Entry> restated = prints.restated(applied, now);
        // entries fingerprinted before the source's columns changed, compared over the columns they cover
        restated.putAll(Fingerprints.compareOlderFormats(jdbc, dialect, m, prints, applied, now.keySet(),
                this::formats).restated());
        return restated.keySet().stream().map(Seq::text).toList();
    }

    /**
     * The content hashes of the source's batches that this run found ({@link Fingerprints}): a batch applied from
     * the source is recorded with its hash; one reproduced from the history, or not in the map, with none.
     */
    void fingerprints(Map<Seq, Fingerprint> found) {
        this.fingerprints = found;
    }

    /**
     * Records applied batches in the ledger, in business order: a few multi-row inserts (at most 18 rows each, so
     * that a statement binds at most 234 values, below a driver's limit).
     */
    void recordAll(List<BatchResult> results, List<Seq> sequences, String runId, List<String> deletionTimes) {
        MetadataSchema.Ledger l = schema.ledger();
        List<String> columns = List.of(l.model(), l.sequence(), l.runId(), l.appliedAt(), l.sourceRows(),
                l.duplicateRows(), l.inserted(), l.updated(), l.deleted(), l.rejected(), l.deletionTime(),
                l.reproduced(), l.contentHash());
        LocalDateTime now = LocalDateTime.now();
        for (int from = 0; from < results.size(); from += RECORD_CHUNK) {
            Statement.Builder b = Statement.builder("record batch").sql("INSERT INTO " + name(l.spec().name()) + " ("
                    + list(columns.toArray(String[]::new)) + ") VALUES ");
            for (int k = from; k < Math.min(results.size(), from + RECORD_CHUNK); k++) {
                BatchResult r = results.get(k);
                List<Object> row = java.util.Arrays.asList(model, sequences.get(k).text(), runId, now, r.sourceRows(),
                        r.duplicateCopies(), r.inserted(), r.updated(), r.deleted(), r.rejected(),
                        deletionTimes.get(k), r.reproduced(),
                        r.reproduced() || fingerprints.get(sequences.get(k)) == null ? null
                                : fingerprints.get(sequences.get(k)).text());
                b.sql(k == from ? "(" : ", (");
                for (int v = 0; v < row.size(); v++) {
                    b.sql(v == 0 ? "" : ", ").bind(row.get(v));
                }
                b.sql(")");
            }
            jdbc.update(b.build());
        }
    }

    /**
     * Records the content hashes of applied batches that this run does not apply again (entries without one, or
     * with one over other columns): one UPDATE per chunk, {@code CASE} on the sequence.
     */
    void recordFingerprints(Map<Seq, Fingerprint> hashes) {
        MetadataSchema.Ledger l = schema.ledger();
        List<Seq> seqs = new ArrayList<>(hashes.keySet());
        for (int from = 0; from < seqs.size(); from += FORGET_CHUNK / 3) {
            List<Seq> chunk = seqs.subList(from, Math.min(seqs.size(), from + FORGET_CHUNK / 3));
            Statement.Builder b = Statement.builder("record fingerprints").sql("UPDATE " + name(l.spec().name())
                    + " SET " + q(l.contentHash()) + " = CASE " + q(l.sequence()));
            for (Seq s : chunk) {
                b.sql(" WHEN ").bind(s.text()).sql(" THEN ").bind(hashes.get(s).text());
            }
            b.sql(" END WHERE " + q(l.model()) + " = ").bind(model).sql(" AND " + q(l.sequence()));
            jdbc.update(inList(b, chunk));
        }
    }

    /**
     * Removes the ledger entries and error-log rows of rolled-back batches; replaying them logs their set-aside
     * rows again (from the source, or from the archive for batches that aged out).
     */
    void forget(List<Seq> batches) {
        forgetEntries(batches);
        deleteIn(schema.errors().spec(), schema.errors().model(), schema.errors().sequence(), batches);
    }

    /** Removes the ledger entries of {@code batches}, leaving their error log rows. */
    void forgetEntries(List<Seq> batches) {
        deleteIn(schema.ledger().spec(), schema.ledger().model(), schema.ledger().sequence(), batches);
    }

    /**
     * Marks the error-log rows of replayed batches as logged by this run: a key-scoped replay logs again only the
     * rows of the keys it computes again, and the others stay, as every row of a replayed batch belongs to the run
     * that last applied the batch (like its ledger entry).
     */
    void relogErrors(List<Seq> batches, String runId, LocalDateTime at) {
        MetadataSchema.Errors e = schema.errors();
        forEachChunk(batches, chunk -> inList(Statement.builder("log rows set aside").sql("UPDATE "
                + name(e.spec().name()) + " SET " + q(e.runId()) + " = ").bind(runId).sql(", " + q(e.loggedAt())
                + " = ").bind(at).sql(" WHERE " + q(e.model()) + " = ").bind(model).sql(" AND " + q(e.sequence())),
                chunk));
    }

    private void deleteIn(TableSpec table, String modelColumn, String sequenceColumn, List<Seq> seqs) {
        forEachChunk(seqs, chunk -> inList(Statement.builder("rollback " + table.name().table()).sql("DELETE FROM "
                + name(table.name()) + " WHERE " + q(modelColumn) + " = ").bind(model).sql(" AND "
                + q(sequenceColumn)), chunk));
    }

    /** Runs one statement per {@link #FORGET_CHUNK} sequences, so that none binds more values than a driver takes. */
    private void forEachChunk(List<Seq> seqs, java.util.function.Function<List<Seq>, Statement> statement) {
        chunks(seqs).forEach(chunk -> jdbc.update(statement.apply(chunk)));
    }

    /** {@code seqs} in runs of at most {@link #FORGET_CHUNK}, each one IN list under the drivers' parameter limits. */
    private static List<List<Seq>> chunks(List<Seq> seqs) {
        List<List<Seq>> out = new ArrayList<>();
        for (int from = 0; from < seqs.size(); from += FORGET_CHUNK) {
            out.add(seqs.subList(from, Math.min(seqs.size(), from + FORGET_CHUNK)));
        }
        return out;
    }

    /** Ends {@code b} with {@code IN (...)} of the sequences' canonical texts, each bound. */
    private static Statement inList(Statement.Builder b, List<Seq> seqs) {
        b.sql(" IN (");
        for (int i = 0; i < seqs.size(); i++) {
            b.sql(i == 0 ? "" : ", ").bind(seqs.get(i).text());
        }
        return b.sql(")").build();
    }

    // ---------------------------------------------------------------- owners of history tables

    /**
     * Who owns what: the model of this metadata schema that owns a history table ({@code targetOwner}), and the history
     * table this model owns ({@code ownTarget}, folded and dot-joined); either null when no row records it.
     */
    record Owners(String targetOwner, String ownTarget) {
    }

    /** {@link Owners} of history table {@code target} (folded, dot-joined), in one read of the owners table. */
    Owners owners(String target) {
        if (readsNothing) {
            return new Owners(null, null);
        }
        ReadAll all = valid();
        if (all != null && all.target().equals(target)) {
            return all.owners();
        }
        MetadataSchema.Targets t = schema.targets();
        String[] out = new String[2];
        jdbc.query(Statement.builder("check owner").sql("SELECT " + q(t.target()) + ", " + q(t.model()) + ", CASE WHEN "
                + q(t.target()) + " = ").bind(target).sql(" THEN 1 ELSE 0 END, CASE WHEN " + q(t.model()) + " = ")
                .bind(model).sql(" THEN 1 ELSE 0 END FROM " + name(t.spec().name()) + " WHERE " + q(t.target()) + " = ")
                .bind(target).sql(" OR " + q(t.model()) + " = ").bind(model).build(), rs -> {
                    if (rs.getInt(3) == 1 && out[0] == null) {
                        out[0] = rs.getString(2);
                    }
                    if (rs.getInt(4) == 1 && out[1] == null) {
                        out[1] = rs.getString(1);
                    }
                    return null;
                });
        return new Owners(out[0], out[1]);
    }

    /** Records that this model owns {@code target} (and no other table). */
    void own(String target, String runId) {
        MetadataSchema.Targets t = schema.targets();
        jdbc.update(Statement.builder("register owner").sql("DELETE FROM " + name(t.spec().name()) + " WHERE "
                + q(t.model()) + " = ").bind(model).build());
        jdbc.update(insert("register owner", t.spec(), values(t.target(), target, t.model(), model,
                t.registeredAt(), LocalDateTime.now(), t.runId(), runId)));
    }

    /**
     * Forgets everything this metadata schema records about the model's batches (ledger, error log, column
     * registry): the model starts over, as on its first run (a full refresh into a new or empty history table).
     */
    void forgetAll() {
        for (TableSpec table : List.of(schema.ledger().spec(), schema.errors().spec(), schema.columns().spec(),
                schema.formats().spec())) {
            jdbc.update(Statement.builder("start over").sql("DELETE FROM " + name(table.name()) + " WHERE "
                    + q(schema.ledger().model()) + " = ").bind(model).build());
        }
    }

    // ---------------------------------------------------------------- error log

    /** The sequences (as text) that have set-aside rows in the error log (rows with a NULL sequence excluded). */
    List<String> loggedSequences() {
        ReadAll all = valid();
        if (all != null) {
            return all.errorSequences();
        }
        MetadataSchema.Errors e = schema.errors();
        return jdbc.query(Statement.builder("read error log").sql("SELECT DISTINCT " + q(e.sequence()) + " FROM "
                + name(e.spec().name()) + " WHERE " + q(e.model()) + " = ").bind(model).sql(" AND "
                + q(e.sequence()) + " IS NOT NULL").build(), rs -> rs.getString(1));
    }

    /** The sequences among {@code batches} (canonical texts) with rows in the error log. */
    List<String> loggedSequences(List<Seq> batches) {
        ReadAll all = valid();
        if (all != null) {
            java.util.Set<String> texts = batches.stream().map(Seq::text).collect(Collectors.toSet());
            return all.errorSequences().stream().filter(texts::contains).toList();
        }
        MetadataSchema.Errors e = schema.errors();
        List<String> out = new ArrayList<>();
        for (List<Seq> chunk : chunks(batches)) {
            out.addAll(jdbc.query(inList(Statement.builder("read error log").sql("SELECT DISTINCT "
                    + q(e.sequence()) + " FROM " + name(e.spec().name()) + " WHERE " + q(e.model()) + " = ")
                    .bind(model).sql(" AND " + q(e.sequence())), chunk), rs -> rs.getString(1)));
        }
        return out;
    }

    /** Rows set aside, counted by reason (and sequence, when grouped so; NULL for rows without a sequence). */
    record ErrorCount(String sequence, String reason, long rows) {
    }

    /** Rows set aside by reason, most first; with {@code bySequence}, by sequence and reason, in text order. */
    List<ErrorCount> errorCounts(boolean bySequence) {
        MetadataSchema.Errors e = schema.errors();
        String groups = bySequence ? q(e.sequence()) + ", " + q(e.reason()) : q(e.reason());
        return jdbc.query(Statement.builder("read error log").sql("SELECT " + (bySequence ? "" : "NULL, ") + groups
                + ", COUNT(*) FROM " + name(e.spec().name()) + " WHERE " + q(e.model()) + " = ").bind(model)
                .sql(" GROUP BY " + groups + (bySequence ? " ORDER BY 1, 2" : " ORDER BY 3 DESC, 2")).build(),
                rs -> new ErrorCount(rs.getString(1), rs.getString(2), rs.getLong(3)));
    }

    /**
     * The rows of batch {@code sequence} (its text; null: the rows without a sequence) set aside in the error log, at
     * most {@code limit} (all when 0), in the order they were logged.
     */
    List<Inspection.SetAsideRow> errorRows(String sequence, int limit) {
        MetadataSchema.Errors e = schema.errors();
        Statement.Builder b = Statement.builder("read error log").sql("SELECT " + list(e.sequence(), e.reason(),
                e.runId(), e.record(), e.loggedAt()) + " FROM " + name(e.spec().name()) + " WHERE " + q(e.model())
                + " = ").bind(model).sql(" AND " + q(e.sequence()));
        if (sequence == null) {
            b.sql(" IS NULL");
        } else {
            b.sql(" = ").bind(sequence);
        }
        Statement s = b.sql(" ORDER BY " + q(e.loggedAt())).build();
        Jdbc.Row<Inspection.SetAsideRow> row = rs -> new Inspection.SetAsideRow(rs.getString(1), rs.getString(2),
                rs.getString(3), rs.getString(4), time(rs, 5));
        return limit > 0 ? jdbc.query(s, limit, row) : jdbc.query(s, row);
    }

    // ---------------------------------------------------------------- fingerprint formats

    /** The model's fingerprint formats: each signature with its definition ({@link Fingerprints#definition}). */
    Map<String, String> formats() {
        if (readsNothing) {
            return Map.of();
        }
        MetadataSchema.Formats f = schema.formats();
        Map<String, String> out = new LinkedHashMap<>();
        jdbc.query(select("read fingerprint formats", f.spec(), List.of(f.signature(), f.definition()), f.model()),
                rs -> {
                    out.put(rs.getString(1), rs.getString(2));
                    return null;
                });
        return out;
    }

    /** Records what {@code prints}' signature stands for, unless it is recorded (one MERGE). */
    void recordFormat(Fingerprints prints) {
        MetadataSchema.Formats f = schema.formats();
        var p = SqlSteps.of(dialect).primitives();
        String text = p.typeName(dev.itersnap.spi.TableSpec.ColumnType.text(128));
        String sig = p.typeName(dev.itersnap.spi.TableSpec.ColumnType.text(64));
        String def = p.typeName(dev.itersnap.spi.TableSpec.ColumnType.longText());
        jdbc.update(Statement.builder("record fingerprint format").sql("MERGE INTO " + name(f.spec().name())
                + " t USING (SELECT CAST(").bind(model).sql(" AS " + text + ") AS " + q(f.model()) + ", CAST(")
                .bind(prints.signature()).sql(" AS " + sig + ") AS " + q(f.signature()) + ", CAST(")
                .bind(prints.definition()).sql(" AS " + def + ") AS " + q(f.definition()) + ") s ON t." + q(f.model())
                        + " = s." + q(f.model()) + " AND t." + q(f.signature()) + " = s." + q(f.signature())
                        + " WHEN NOT MATCHED THEN INSERT (" + list(f.model(), f.signature(), f.definition())
                        + ") VALUES (s." + q(f.model()) + ", s." + q(f.signature()) + ", s." + q(f.definition()) + ")")
                .build());
    }

    // ---------------------------------------------------------------- column registry

    /** The column registry, keyed by column name. */
    Map<String, Column> columns() {
        ReadAll all = valid();
        if (all != null) {
            return new LinkedHashMap<>(all.columns());
        }
        MetadataSchema.Columns c = schema.columns();
        Map<String, Column> out = new LinkedHashMap<>();
        jdbc.query(select("read column registry", c.spec(), List.of(c.column(), c.introduced(), c.inSource(),
                c.droppedAfter()), c.model()), rs -> {
                    out.put(rs.getString(1), new Column(rs.getString(1), rs.getString(2), rs.getBoolean(3),
                            rs.getString(4)));
                    return null;
                });
        return out;
    }

    /**
     * Registers columns, each with the batch that introduced it (null: there from the start), in as few statements as
     * the bound values allow (on Delta Lake a statement per column cost a commit each): {@value #COLUMNS_PER_STATEMENT}
     * columns a statement, four values each ({@link dev.itersnap.spi.SqlValues#MAX_PARAMETERS}).
     */
    void registerColumns(Map<String, String> introducedTextByColumn) {
        List<Map.Entry<String, String>> columns = new ArrayList<>(introducedTextByColumn.entrySet());
        MetadataSchema.Columns c = schema.columns();
        for (int from = 0; from < columns.size(); from += COLUMNS_PER_STATEMENT) {
            Statement.Builder b = Statement.builder("register column").sql("INSERT INTO " + name(c.spec().name())
                    + " (" + list(c.model(), c.column(), c.introduced(), c.inSource()) + ") VALUES ");
            String sep = "(";
            for (Map.Entry<String, String> e : columns.subList(from, Math.min(columns.size(),
                    from + COLUMNS_PER_STATEMENT))) {
                b.sql(sep).bind(model).sql(", ").bind(e.getKey()).sql(", ").bind(e.getValue()).sql(", ").bind(true)
                        .sql(")");
                sep = ", (";
            }
            jdbc.update(b.build());
        }
    }

    /** Columns one registering statement carries: four bound values each. */
    static final int COLUMNS_PER_STATEMENT = dev.itersnap.spi.SqlValues.MAX_PARAMETERS / 4;

    /**
     * Records whether the source has {@code column}; a column that left it with the last batch applied while the
     * source had it ({@code droppedAfterText}; null when it comes back, or when no batch was applied with it).
     */
    void markInSource(String column, boolean inSource, String droppedAfterText) {
        MetadataSchema.Columns c = schema.columns();
        jdbc.update(Statement.builder("register column").sql("UPDATE " + name(c.spec().name()) + " SET "
                + q(c.inSource()) + " = ").bind(inSource).sql(", " + q(c.droppedAfter()) + " = ")
                .bind(inSource ? null : droppedAfterText).sql(" WHERE " + q(c.model()) + " = ").bind(model)
                .sql(" AND " + q(c.column()) + " = ").bind(column).build());
    }

    // ---------------------------------------------------------------- run log

    static String holder() {
        String jvm = ManagementFactory.getRuntimeMXBean().getName();
        return jvm + " thread " + Thread.currentThread().getName();
    }

    /**
     * What a run needs from the run log before it starts, in one read: the status of the model's most recent run
     * before this one (null if none), the logic of the last successful run that recorded one (run id, start, logic
     * text; null if none), the batch the restatement sweep of the last successful run that swept stopped at (its
     * text; null if none), whether any other run of the model is still shown running (under the lock: dead), and how
     * many rows the model's other runs have: with the other fields, what tells that no run started or ended between
     * two reads ({@link #unchangedSince}).
     */
    record RunLogHead(String previousStatus, LoggedLogic lastLogic, String checkedThrough, boolean unfinished,
                      long runs) {
        /** Whether the last run succeeded and no run is shown running: nothing for a run to recover. */
        boolean settled() {
            return "success".equals(previousStatus) && !unfinished;
        }
    }

    /** The logic a successful run recorded: its run id, its start (as text) and the logic text. */
    record LoggedLogic(String runId, String startedAt, String logic) {
    }

    RunLogHead runLogHead(String runId) {
        ReadAll all = valid();
        if (all != null && all.runId().equals(runId)) {
            return all.head();
        }
        HeadReader reader = new HeadReader();
        jdbc.query(Statement.builder("read run log").sql("SELECT itersnap_run, itersnap_logic, itersnap_status, "
                + "itersnap_checked, itersnap_latest, itersnap_logged, itersnap_latest_logged, itersnap_swept, "
                + "itersnap_latest_swept, itersnap_runs, itersnap_start FROM ").sql(headRows(runId)).build(), rs -> {
                    reader.row(rs, 1, 5, 11);
                    return null;
                });
        return reader.head();
    }

    /**
     * The run log's rows that say the previous run's status, the last logged logic and the last sweep's end, and those
     * of runs still shown running, as a derived table {@code x} of the columns {@link HeadReader#row} reads (the
     * model's runs but {@code runId}).
     */
    private Statement headRows(String runId) {
        MetadataSchema.Runs r = schema.runs();
        String logged = "CASE WHEN " + q(r.status()) + " = 'success' AND " + q(r.logic()) + " IS NOT NULL THEN 1 "
                + "ELSE 0 END";
        String swept = "CASE WHEN " + q(r.status()) + " = 'success' AND " + q(r.checkedThrough()) + " IS NOT NULL "
                + "THEN 1 ELSE 0 END";
        return Statement.builder("read run log").sql("(SELECT " + q(r.runId()) + " AS itersnap_run, "
                + q(r.startedAt()) + " AS itersnap_start, " + q(r.logic()) + " AS itersnap_logic, " + q(r.status())
                + " AS itersnap_status, " + logged + " AS itersnap_logged, " + q(r.checkedThrough())
                + " AS itersnap_checked, " + swept + " AS itersnap_swept, ROW_NUMBER() OVER (ORDER BY "
                + q(r.startedAt()) + " DESC) AS itersnap_latest, ROW_NUMBER() OVER (PARTITION BY " + logged
                + " ORDER BY " + q(r.startedAt()) + " DESC) AS itersnap_latest_logged, ROW_NUMBER() OVER (PARTITION BY "
                + swept + " ORDER BY " + q(r.startedAt()) + " DESC) AS itersnap_latest_swept, COUNT(*) OVER () AS "
                + "itersnap_runs FROM "
                + name(r.spec().name()) + " WHERE " + q(r.model()) + " = ").bind(model).sql(" AND " + q(r.runId())
                + " <> ").bind(runId).sql(") x WHERE itersnap_latest = 1 OR (itersnap_logged = 1 AND "
                + "itersnap_latest_logged = 1) OR (itersnap_swept = 1 AND itersnap_latest_swept = 1) OR "
                + "itersnap_status = 'running'").build();
    }

    /**
     * Reads rows of {@link #headRows} into a {@link RunLogHead}: run id, logic, status and checked through from column
     * {@code text} on, the six numbers (latest, logged, latest logged, swept, latest swept, the model's other runs) from
     * {@code numbers} on, the start at {@code start}.
     */
    private static final class HeadReader {
        private String previous;
        private LoggedLogic logic;
        private String checked;
        private boolean unfinished;
        private long runs;

        void row(java.sql.ResultSet rs, int text, int numbers, int start) throws SQLException {
            runs = rs.getLong(numbers + 5);
            if (rs.getLong(numbers) == 1) {
                previous = rs.getString(text + 2);
            }
            if ("running".equals(rs.getString(text + 2))) {
                unfinished = true;
            }
            if (rs.getLong(numbers + 1) == 1 && rs.getLong(numbers + 2) == 1) {
                logic = new LoggedLogic(rs.getString(text), String.valueOf(rs.getObject(start)),
                        rs.getString(text + 1));
            }
            if (rs.getLong(numbers + 3) == 1 && rs.getLong(numbers + 4) == 1) {
                checked = rs.getString(text + 3);
            }
        }

        RunLogHead head() {
            return new RunLogHead(previous, logic, checked, unfinished, runs);
        }
    }

    /**
     * The model's latest successful adoption ({@code adopt}): its run id and the sequence it adopted through, or null.
     * Only the caller can tell whether it still holds (the ledger entry of that sequence written by that run).
     */
    Inspection.Adoption adoption() {
        MetadataSchema.Runs r = schema.runs();
        List<Inspection.Adoption> s = jdbc.queryFirst(Statement.builder("read run log").sql("SELECT " + q(r.runId()) + ", "
                + q(r.replayPoint()) + " FROM " + name(r.spec().name()) + " WHERE " + q(r.model()) + " = ").bind(model)
                .sql(" AND " + q(r.operation()) + " = 'adopt' AND " + q(r.replayPoint()) + " IS NOT NULL ORDER BY "
                        + q(r.startedAt()) + " DESC").build(),
                rs -> new Inspection.Adoption(rs.getString(1), rs.getString(2)));
        return s.isEmpty() ? null : s.get(0);
    }

    /**
     * The logic the model's last successful run that recorded one recorded: run id, start and logic, or null (the
     * start read as a time, for {@link MetadataInspection}).
     */
    Inspection.RecordedLogic recordedLogic(String current) {
        MetadataSchema.Runs r = schema.runs();
        List<Inspection.RecordedLogic> s = jdbc.queryFirst(Statement.builder("read run log").sql("SELECT "
                + list(r.runId(), r.startedAt(), r.logic()) + " FROM " + name(r.spec().name()) + " WHERE "
                + q(r.model()) + " = ").bind(model).sql(" AND " + q(r.status()) + " = 'success' AND " + q(r.logic())
                + " IS NOT NULL ORDER BY " + q(r.startedAt()) + " DESC").build(),
                rs -> new Inspection.RecordedLogic(rs.getString(1), time(rs, 2), rs.getString(3),
                        rs.getString(3).equals(current)));
        return s.isEmpty() ? null : s.get(0);
    }

    /** The model's runs, newest first (at most {@code limit}; all when 0). */
    List<Inspection.Run> runs(int limit) {
        MetadataSchema.Runs r = schema.runs();
        Statement s = Statement.builder("read run log").sql("SELECT " + list(r.runId(), r.operation(), r.status(),
                r.startedAt(), r.finishedAt(), r.batchesApplied(), r.lateBatch(), r.replayPoint(), r.errorMessage(),
                r.holder()) + " FROM " + name(r.spec().name()) + " WHERE " + q(r.model()) + " = ").bind(model)
                .sql(" ORDER BY " + q(r.startedAt()) + " DESC").build();
        Jdbc.Row<Inspection.Run> row = rs -> new Inspection.Run(rs.getString(1), rs.getString(2),
                status(rs.getString(3)), time(rs, 4), time(rs, 5), intOrNull(rs, 6), booleanOrNull(rs, 7),
                rs.getString(8), dev.itersnap.core.Secrets.mask(rs.getString(9)), rs.getString(10));
        return limit > 0 ? jdbc.query(s, limit, row) : jdbc.query(s, row);
    }

    private static Inspection.RunStatus status(String text) {
        return switch (text) {
            case "success" -> Inspection.RunStatus.SUCCESS;
            case "failed" -> Inspection.RunStatus.FAILED;
            default -> Inspection.RunStatus.RUNNING;
        };
    }

    /** A timestamp column as the local date-time it was written as (null stays null). */
    private static LocalDateTime time(java.sql.ResultSet rs, int i) throws SQLException {
        java.sql.Timestamp t = rs.getTimestamp(i);
        return t == null ? null : t.toLocalDateTime();
    }

    private static Integer intOrNull(java.sql.ResultSet rs, int i) throws SQLException {
        int v = rs.getInt(i);
        return rs.wasNull() ? null : v;
    }

    private static Boolean booleanOrNull(java.sql.ResultSet rs, int i) throws SQLException {
        boolean v = rs.getBoolean(i);
        return rs.wasNull() ? null : v;
    }

    /** Describes the run holding the lock, from the log (best effort: used in a lock-timeout message). */
    String describeRunning() {
        try {
            MetadataSchema.Runs r = schema.runs();
            List<String> s = jdbc.query(Statement.builder("read run log").sql("SELECT " + q(r.runId()) + ", "
                    + q(r.holder()) + ", " + q(r.startedAt()) + " FROM " + name(r.spec().name()) + " WHERE "
                    + q(r.model()) + " = ").bind(model).sql(" AND " + q(r.status()) + " = 'running' ORDER BY "
                    + q(r.startedAt()) + " DESC").build(),
                    rs -> "run " + rs.getString(1) + " by " + rs.getString(2) + " since " + rs.getObject(3));
            return s.isEmpty() ? "holder unknown" : s.get(0);
        } catch (RuntimeException e) {
            return "holder unknown";
        }
    }

    /**
     * Whether the run log's head, read again now for run {@code runId} (whose own row is not counted), is the head
     * {@code before} that {@link #readAll} read before the run took the lock: the same number of other runs, the same
     * status of the last one, none running. Then no run wrote to the model's metadata in between (every run adds its
     * row before its first write, and a run that failed before its row adds one), and what {@code readAll} read
     * answers for this run again, as though read now; one statement.
     */
    boolean unchangedSince(String runId, RunLogHead before) {
        ReadAll all = read;
        RunLogHead now = runLogHead(runId);
        if (all == null || now.runs() != before.runs() || now.unfinished()
                || !java.util.Objects.equals(now.previousStatus(), before.previousStatus())) {
            return false;
        }
        holdsAgain(all, runId, now);
        return true;
    }

    /**
     * What {@link #readAll} read ({@code all}) answers for run {@code runId} again, with the run log's head
     * {@code head}: no run started or ended since it was read.
     */
    private void holdsAgain(ReadAll all, String runId, RunLogHead head) {
        read = new ReadAll(runId, all.target(), head, all.owners(), all.ledger(), all.columns(), all.errorSequences());
        readAt = jdbc.writes();
    }

    /**
     * Adds the row of a run that found nothing to write and wrote nothing (no lock, no row while it ran): one row,
     * complete, started at {@code startedAt} (before it read the run log's head, so that a run that started after that
     * read is later than it), its sweep's end {@code checkedThrough} (null: it swept nothing).
     */
    void ranWithoutWriting(String runId, String operation, String logic, LocalDateTime startedAt,
                           String checkedThrough) {
        MetadataSchema.Runs r = schema.runs();
        jdbc.update(insert("log run", r.spec(), values(r.runId(), runId, r.model(), model, r.operation(), operation,
                r.holder(), holder(), r.startedAt(), startedAt, r.finishedAt(), LocalDateTime.now(), r.status(),
                "success", r.batchesApplied(), 0, r.lateBatch(), false, r.checkedThrough(), checkedThrough,
                r.logic(), logic)));
        jdbc.commit("log run");
    }

    /**
     * {@link #started} and {@link #unchangedSince} in one statement where the database counts the rows an
     * {@code INSERT} adds: the run's row is added only when the run log's head, read by the same statement, is still
     * {@code before} (the same number of other runs, the last one a success, none running: what a run that decided
     * before the lock saw). Returns the start time when it was added (and what {@link #readAll} read answers for this
     * run again), or null when nothing was added: the head changed, and the caller adds the row with {@link #started}
     * and decides again. A run that decided before the lock makes one round trip here where it made two.
     */
    LocalDateTime startedIfUnchanged(String runId, String operation, String logic, RunLogHead before) {
        ReadAll all = read;
        if (all == null || !dialect.capabilities().insertRowCounts() || !before.settled()) {
            return null;
        }
        MetadataSchema.Runs r = schema.runs();
        LocalDateTime now = LocalDateTime.now();
        List<Object> pairs = runningRow(runId, operation, logic, now);
        var p = SqlSteps.of(dialect).primitives();
        List<String> columns = new ArrayList<>();
        Statement.Builder b = Statement.builder("log run");
        b.sql("SELECT ");
        for (int i = 0; i < pairs.size(); i += 2) {
            String column = (String) pairs.get(i);
            columns.add(column);
            TableSpec.ColumnType type = r.spec().columns().stream().filter(c -> c.name().equals(column))
                    .findFirst().orElseThrow().type();
            b.sql(i == 0 ? "CAST(" : ", CAST(").bind(pairs.get(i + 1)).sql(" AS " + p.typeName(type) + ")");
        }
        // the head as runLogHead reads it: the other runs counted, the latest one's status, the running ones
        b.sql(" FROM (SELECT MAX(itersnap_runs) AS itersnap_n, SUM(CASE WHEN itersnap_status = 'running' THEN 1 "
                + "ELSE 0 END) AS itersnap_r, MAX(CASE WHEN itersnap_latest = 1 THEN itersnap_status END) AS "
                + "itersnap_s FROM ")
                .sql(headRows(runId)).sql(") itersnap_h WHERE itersnap_h.itersnap_n > 0 AND itersnap_h.itersnap_r = 0"
                        + " AND itersnap_h.itersnap_s = 'success' AND itersnap_h.itersnap_n = ").bind(before.runs());
        Statement insert = Statement.builder("log run").sql("INSERT INTO " + name(r.spec().name()) + " ("
                + list(columns.toArray(String[]::new)) + ") ").sql(b.build()).build();
        if (jdbc.update(insert) != 1) {
            return null;
        }
        jdbc.commit("log run");
        holdsAgain(all, runId, before);
        return now;
    }

    /** Adds the run's row, running; returns its start time as recorded. */
    LocalDateTime started(String runId, String operation, String logic) {
        MetadataSchema.Runs r = schema.runs();
        LocalDateTime now = LocalDateTime.now();
        jdbc.update(insert("log run", r.spec(), runningRow(runId, operation, logic, now)));
        jdbc.commit("log run");
        return now;
    }

    /** The columns and values of a run's row while it runs, as {@link #insert} takes them. */
    private List<Object> runningRow(String runId, String operation, String logic, LocalDateTime now) {
        MetadataSchema.Runs r = schema.runs();
        return values(r.runId(), runId, r.model(), model, r.operation(), operation, r.holder(), holder(),
                r.startedAt(), now, r.status(), "running", r.logic(), logic);
    }

    /**
     * Closes the rows of runs that died (the run log shows them running; this run, which holds the lock and is about
     * to record its success, found them so): failed, finished at {@code foundAt} (this run's start: whatever they
     * committed was in the tables by then), so that what they wrote counts from that moment in a known-at read and
     * their superseded versions fall under the retention like those of any run that finished. Not committed here: with
     * transactions, it commits with the run's end ({@link #finished}).
     */
    void closeUnfinished(String runId, LocalDateTime foundAt) {
        MetadataSchema.Runs r = schema.runs();
        jdbc.update(Statement.builder("log run").sql("UPDATE " + name(r.spec().name()) + " SET " + q(r.status())
                + " = 'failed', " + q(r.finishedAt()) + " = ").bind(foundAt).sql(", " + q(r.errorMessage()) + " = ")
                .bind("did not finish: run " + runId + " found it so and recovered what it left")
                .sql(" WHERE " + q(r.model()) + " = ").bind(model).sql(" AND " + q(r.status()) + " = 'running' AND "
                        + q(r.runId()) + " <> ").bind(runId).sql(" AND " + q(r.startedAt()) + " <= ").bind(foundAt)
                .build());
    }

    /**
     * Records an adoption's point in its run's row (its replay point), with the adoption's writes: whatever the run's
     * end, the row keeps it ({@link #finished} never clears a replay point).
     */
    void markAdoption(String runId, String point) {
        MetadataSchema.Runs r = schema.runs();
        jdbc.update(Statement.builder("adopt").sql("UPDATE " + name(r.spec().name()) + " SET " + q(r.replayPoint())
                + " = ").bind(point).sql(" WHERE " + q(r.runId()) + " = ").bind(runId).build());
    }

    void finished(String runId, String status, int batches, boolean late, String replayPoint, String error) {
        finished(runId, status, batches, late, replayPoint, error, null);
    }

    /**
     * Marks the run finished; {@code checkedThrough}: the last batch the run's restatement sweep compared (null: it
     * swept nothing, and the next run takes up where the last one that swept stopped). Only a row still shown
     * running: a run that stalled past its lease and finds its row closed by the run that took over
     * ({@link #closeUnfinished}) leaves that end, which is when what it committed was known.
     */
    void finished(String runId, String status, int batches, boolean late, String replayPoint, String error,
                  String checkedThrough) {
        MetadataSchema.Runs r = schema.runs();
        Statement.Builder b = Statement.builder("log run").sql("UPDATE " + name(r.spec().name()) + " SET "
                + q(r.finishedAt()) + " = ").bind(LocalDateTime.now()).sql(", " + q(r.status()) + " = ").bind(status)
                .sql(", " + q(r.batchesApplied()) + " = ").bind(batches).sql(", " + q(r.lateBatch()) + " = ")
                .bind(late);
        if (checkedThrough != null) {
            b.sql(", " + q(r.checkedThrough()) + " = ").bind(checkedThrough);
        }
        if (replayPoint != null) { // never cleared: an adoption's point stays when its run fails afterwards
            b.sql(", " + q(r.replayPoint()) + " = ").bind(replayPoint);
        }
        jdbc.update(b.sql(", " + q(r.errorMessage()) + " = ")
                .bind(error == null ? null : error.substring(0, Math.min(3900, error.length())))
                .sql(" WHERE " + q(r.runId()) + " = ").bind(runId).sql(" AND " + q(r.status()) + " = 'running'")
                .build());
        jdbc.commit("log run");
    }

    // ---------------------------------------------------------------- SQL

    /** {@code SELECT columns FROM table WHERE modelColumn = <model>}. */
    private Statement select(String step, TableSpec table, List<String> columns, String modelColumn) {
        return Statement.builder(step).sql("SELECT " + list(columns.toArray(String[]::new)) + " FROM "
                + name(table.name()) + " WHERE " + q(modelColumn) + " = ").bind(model).build();
    }

    /** {@code INSERT INTO table (columns) VALUES (values)}, columns and values alternating in {@code pairs}. */
    private Statement insert(String step, TableSpec table, List<Object> pairs) {
        List<String> columns = new ArrayList<>();
        Statement.Builder values = Statement.builder(step);
        for (int i = 0; i < pairs.size(); i += 2) {
            columns.add((String) pairs.get(i));
            values.sql(i == 0 ? "" : ", ").bind(pairs.get(i + 1));
        }
        return Statement.builder(step).sql("INSERT INTO " + name(table.name()) + " ("
                + list(columns.toArray(String[]::new)) + ") VALUES (").sql(values.build()).sql(")").build();
    }

    private static List<Object> values(Object... pairs) {
        return java.util.Arrays.asList(pairs);
    }

    private String q(String identifier) {
        return dialect.quote(identifier);
    }

    private String list(String... columns) {
        return java.util.Arrays.stream(columns).map(this::q).collect(Collectors.joining(", "));
    }

    private String name(TableName table) {
        return table.parts().stream().map(this::q).collect(Collectors.joining("."));
    }
}
