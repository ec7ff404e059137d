package dev.itersnap.testing;

import dev.itersnap.IterativeSnapshot;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.RunResult;
import dev.itersnap.core.TableName;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A test fixture for one model: a database (in-memory H2 by default, or any data source), the model's raw source
 * table, batches loaded into it, runs of the model, and what the runs left behind (history, ledger, error log).
 *
 * <pre>{@code
 * try (SnapshotTestKit kit = SnapshotTestKit.onH2(customers)
 *         .sourceTable("raw_customers", "customer_id INT", "tier VARCHAR(10)",
 *                      "updated_at TIMESTAMP", "file_date DATE")) {
 *     kit.load(Batch.csv("""
 *             customer_id, tier, updated_at,       file_date
 *             1,           gold, 2024-03-01 09:00, 2024-03-01
 *             """));
 *     kit.run();
 *     assertThat(kit.history()).hasCurrentVersion(1, "tier", "gold");
 *     kit.assertOrderIndependent(batches);     // the model's history does not depend on arrival order
 * }
 * }</pre>
 *
 * <p>The source table's definition and names come from the test's author and are written into DDL as given; row
 * values are always bound as parameters. The kit drops and recreates the source table, the model's history table
 * and the model's metadata schema (with everything in it), so point it at a database used only for tests.
 *
 * <p>Not thread-safe: one kit per test.
 */
public final class SnapshotTestKit implements AutoCloseable {
    private static final AtomicInteger H2_DATABASES = new AtomicInteger();

    private final FailingDataSource database;
    private final ModelSettings model;
    private final IterativeSnapshot snapshots;
    private final boolean ownsDatabase;
    private String sourceTable;
    private List<String> sourceColumns;
    private final Map<String, Integer> sourceTypes = new LinkedHashMap<>();

    private SnapshotTestKit(DataSource dataSource, ModelSettings model, boolean ownsDatabase) {
        this.database = new FailingDataSource(Objects.requireNonNull(dataSource, "dataSource"));
        this.model = Objects.requireNonNull(model, "model");
        this.ownsDatabase = ownsDatabase;
        this.snapshots = IterativeSnapshot.builder().dataSource(database.dataSource()).listener(event -> { }).build();
    }

    /** A kit on a new, empty in-memory H2 database, dropped by {@link #close()}. */
    public static SnapshotTestKit onH2(ModelSettings model) {
        org.h2.jdbcx.JdbcDataSource h2 = new org.h2.jdbcx.JdbcDataSource();
        h2.setURL("jdbc:h2:mem:itersnap_testkit_" + H2_DATABASES.incrementAndGet() + ";DB_CLOSE_DELAY=-1");
        return new SnapshotTestKit(h2, model, true);
    }

    /**
     * A kit on the given data source (PostgreSQL, for example), whose dialect is found as in
     * {@link IterativeSnapshot.Builder#dataSource}. A run uses two connections at once, so a pool needs at least two.
     */
    public static SnapshotTestKit on(DataSource dataSource, ModelSettings model) {
        return new SnapshotTestKit(dataSource, model, false);
    }

    /**
     * Creates (or recreates, empty) the raw table the model's source query reads, drops the model's history table
     * and metadata schema, and checks the model against the new table ({@link IterativeSnapshot#validate}).
     *
     * @param table   the table name, optionally schema-qualified (the schema is created when missing)
     * @param columns one column definition each, as in CREATE TABLE: {@code "customer_id INT"},
     *                {@code "amount DECIMAL(10,2)"}
     * @return this kit
     * @throws ItersnapException when the model does not fit the table (a key, {@code updated_at} or
     *                           {@code sequence_by} column missing, ...)
     */
    public SnapshotTestKit sourceTable(String table, String... columns) {
        if (columns.length == 0) {
            throw new IllegalArgumentException("source table " + table + " needs at least one column");
        }
        this.sourceTable = table;
        this.sourceColumns = List.of(columns);
        reset();
        snapshots.validate(model);
        return this;
    }

    /** Inserts the rows of each batch into the source table, in the order given. Nothing runs. */
    public SnapshotTestKit load(Batch... batches) {
        requireSource();
        for (Batch batch : batches) {
            insert(batch);
        }
        return this;
    }

    /** Runs the model once ({@link IterativeSnapshot#run(ModelSettings)}): applies every batch not yet applied. */
    public RunResult run() {
        database.failAt(0);
        return snapshots.run(model);
    }

    /** The history table; empty before the first batch is applied. */
    public History history() {
        List<Map<String, Object>> rows = queryOrNull("SELECT * FROM " + model.target());
        return new History(rows == null ? List.of() : rows, model.uniqueKey(), model.columnNames());
    }

    /**
     * The ledger: one row per applied batch, in the order they were applied, column names in lower case
     * ({@code sequence_value}, {@code source_rows}, {@code duplicate_rows}, {@code inserted_rows},
     * {@code updated_rows}, {@code deleted_rows}, {@code rejected_rows}, {@code run_id}, ...); empty before the first run.
     */
    public List<Map<String, Object>> ledger() {
        List<Map<String, Object>> rows = queryOrNull("SELECT * FROM " + model.metadataSchema()
                + ".itersnap_ledger WHERE LOWER(model) = LOWER(?) ORDER BY applied_at, sequence_value", model.name());
        return rows == null ? List.of() : rows;
    }

    /** The rows the model set aside instead of applying, with the reason; assert with {@link ItersnapAssertions}. */
    public ErrorLog errorLog() {
        List<Map<String, Object>> rows = queryOrNull("SELECT sequence_value, reason, record FROM "
                + model.metadataSchema() + ".itersnap_errors WHERE LOWER(model) = LOWER(?)", model.name());
        List<SetAsideRow> out = new ArrayList<>();
        for (Map<String, Object> r : rows == null ? List.<Map<String, Object>>of() : rows) {
            Object record = r.get("record");
            @SuppressWarnings("unchecked")
            Map<String, Object> values = record == null ? Map.of()
                    : (Map<String, Object>) Values.parseJson(String.valueOf(record));
            out.add(new SetAsideRow(r.get("sequence_value") == null ? null : String.valueOf(r.get("sequence_value")),
                    String.valueOf(r.get("reason")), Collections.unmodifiableMap(values)));
        }
        return new ErrorLog(out);
    }

    /** The model under test. */
    public ModelSettings model() {
        return model;
    }

    /** The engine the kit runs the model with (a failure can be injected into its connections). */
    public IterativeSnapshot snapshots() {
        return snapshots;
    }

    /**
     * Empties the source table and drops the model's history table and metadata schema: the database as before the
     * model's first run.
     */
    public SnapshotTestKit reset() {
        requireSource();
        TableName target = model.target();
        TableName source = TableName.parse("source table", sourceTable);
        try (Connection c = database.dataSource().getConnection(); Statement s = c.createStatement()) {
            c.setAutoCommit(true);
            for (String schema : new String[] {target.schema(), source.schema()}) {
                if (schema != null) {
                    s.execute("CREATE SCHEMA IF NOT EXISTS " + schema);
                }
            }
            s.execute("DROP TABLE IF EXISTS " + target);
            s.execute("DROP SCHEMA IF EXISTS " + model.metadataSchema() + " CASCADE");
            s.execute("DROP TABLE IF EXISTS " + sourceTable);
            s.execute("CREATE TABLE " + sourceTable + " (" + String.join(", ", sourceColumns) + ")");
            sourceTypes.clear();
            try (ResultSet rs = s.executeQuery("SELECT * FROM " + sourceTable + " WHERE 1 = 0")) {
                ResultSetMetaData md = rs.getMetaData();
                for (int i = 1; i <= md.getColumnCount(); i++) {
                    sourceTypes.put(md.getColumnLabel(i).toLowerCase(Locale.ROOT), md.getColumnType(i));
                }
            }
        } catch (SQLException e) {
            throw new IllegalStateException("cannot create source table " + sourceTable + ": " + e.getMessage(), e);
        }
        return this;
    }

    /**
     * Proves the model's history does not depend on how its batches arrive: {@code batches}, given in business
     * order, are applied one run each in that order (the expected history), then again from an empty database
     * <ul>
     *   <li>in three random arrival orders, one run per batch;</li>
     *   <li>in three random arrival orders split into random runs (several batches loaded, then one run);</li>
     *   <li>in order with one random batch loaded a second time, later, as exact copies;</li>
     *   <li>twice in order with a failure injected at a random statement of a random run, followed by a rerun;</li>
     * </ul>
     * and every history must equal the expected one. The seed is the system property {@code itersnap.seed} when
     * set, otherwise random; a failure names the variant, the seed and the differing versions, and the same seed
     * reproduces it. The kit is left as after the last variant.
     *
     * @throws AssertionError when a variant gives another history or a run fails
     */
    public void assertOrderIndependent(List<Batch> batches) {
        Long fixed = Long.getLong("itersnap.seed");
        assertOrderIndependent(batches, fixed != null ? fixed : new Random().nextLong());
    }

    /** {@link #assertOrderIndependent(List)} with the given seed. */
    public void assertOrderIndependent(List<Batch> batches, long seed) {
        if (batches.isEmpty()) {
            throw new IllegalArgumentException("order independence needs at least one batch");
        }
        Random random = new Random(seed);
        List<Integer> inOrder = new ArrayList<>();
        for (int i = 0; i < batches.size(); i++) {
            inOrder.add(i);
        }
        List<Integer> statements = new ArrayList<>();
        History expected = play(batches, runs(inOrder, 1), seed, "in order", statements, -1, 0);

        for (int t = 1; t <= 3; t++) {
            List<Integer> order = shuffled(inOrder, random);
            check(expected, play(batches, runs(order, 1), seed, "arrival order " + order, null, -1, 0),
                    "arrival order " + order + ", one run per batch", seed);
        }
        for (int t = 1; t <= 3; t++) {
            List<List<Integer>> runs = randomRuns(shuffled(inOrder, random), random);
            check(expected, play(batches, runs, seed, "runs " + runs, null, -1, 0),
                    "arrival in runs " + runs, seed);
        }
        int twice = random.nextInt(batches.size());
        List<Integer> withCopy = new ArrayList<>(inOrder);
        withCopy.add(twice + 1 + random.nextInt(batches.size() - twice), twice);
        check(expected, play(batches, runs(withCopy, 1), seed, "arrival order " + withCopy, null, -1, 0),
                "batch " + twice + " loaded twice, arrival order " + withCopy, seed);
        for (int t = 1; t <= 2; t++) {
            int run = random.nextInt(batches.size());
            int statement = 1 + random.nextInt(Math.max(1, statements.get(run)));
            String variant = "in order, failure injected at statement " + statement + " of run " + (run + 1)
                    + " (of " + statements.get(run) + "), then a rerun";
            check(expected, play(batches, runs(inOrder, 1), seed, variant, null, run, statement), variant, seed);
        }
    }

    // ------------------------------------------------------------------ implementation

    /** Loads each run's batches and runs; fails statement {@code failStatement} of run {@code failRun}, reruns. */
    private History play(List<Batch> batches, List<List<Integer>> runs, long seed, String variant,
                         List<Integer> statementsPerRun, int failRun, int failStatement) {
        reset();
        for (int r = 0; r < runs.size(); r++) {
            for (int b : runs.get(r)) {
                insert(batches.get(b));
            }
            database.failAt(r == failRun ? failStatement : 0);
            try {
                snapshots.run(model);
            } catch (ItersnapException e) {
                if (r != failRun || database.failed() == null) {
                    throw new AssertionError(variant + ": run " + (r + 1) + " failed (seed " + seed
                            + "; rerun with -Ditersnap.seed=" + seed + "): " + e.getMessage(), e);
                }
                database.failAt(0);
                try {
                    snapshots.run(model);
                } catch (ItersnapException again) {
                    throw new AssertionError(variant + ": the rerun after the injected failure failed (seed " + seed
                            + "; rerun with -Ditersnap.seed=" + seed + "): " + again.getMessage(), again);
                }
            }
            if (statementsPerRun != null) {
                statementsPerRun.add(database.count());
            }
        }
        database.failAt(0);
        return history();
    }

    private static void check(History expected, History actual, String variant, long seed) {
        if (expected.equals(actual)) {
            return;
        }
        List<String> want = new ArrayList<>(expected.lines());
        List<String> got = new ArrayList<>(actual.lines());
        List<String> onlyWant = new ArrayList<>(want);
        got.forEach(onlyWant::remove);
        List<String> onlyGot = new ArrayList<>(got);
        want.forEach(onlyGot::remove);
        StringBuilder m = new StringBuilder("history depends on how the batches arrive: " + variant
                + " gives another history than applying them in order (seed " + seed
                + "; rerun with -Ditersnap.seed=" + seed + ")");
        onlyWant.forEach(l -> m.append("\n  - in order only:  ").append(l));
        onlyGot.forEach(l -> m.append("\n  + this variant only: ").append(l));
        throw new AssertionError(m.toString());
    }

    private static List<List<Integer>> runs(List<Integer> order, int size) {
        List<List<Integer>> out = new ArrayList<>();
        for (int i = 0; i < order.size(); i += size) {
            out.add(List.copyOf(order.subList(i, Math.min(order.size(), i + size))));
        }
        return out;
    }

    private static List<List<Integer>> randomRuns(List<Integer> order, Random random) {
        List<List<Integer>> out = new ArrayList<>();
        int i = 0;
        while (i < order.size()) {
            int size = 1 + random.nextInt(Math.min(3, order.size() - i));
            out.add(List.copyOf(order.subList(i, i + size)));
            i += size;
        }
        return out;
    }

    private static List<Integer> shuffled(List<Integer> order, Random random) {
        List<Integer> copy = new ArrayList<>(order);
        Collections.shuffle(copy, random);
        return copy;
    }

    private void insert(Batch batch) {
        requireSource();
        for (String column : batch.columns()) {
            if (!sourceTypes.containsKey(column)) {
                throw new IllegalArgumentException("batch column " + column + " is not a column of source table "
                        + sourceTable + " " + sourceTypes.keySet());
            }
        }
        String sql = "INSERT INTO " + sourceTable + " (" + String.join(", ", batch.columns()) + ") VALUES ("
                + String.join(", ", Collections.nCopies(batch.columns().size(), "?")) + ")";
        try (Connection c = database.dataSource().getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            c.setAutoCommit(true);
            for (List<Object> row : batch.rows()) {
                for (int i = 0; i < row.size(); i++) {
                    String column = batch.columns().get(i);
                    int type = sourceTypes.get(column);
                    Object v = row.get(i);
                    if (v == null) {
                        ps.setNull(i + 1, type);
                    } else {
                        ps.setObject(i + 1, v instanceof String text ? Values.fromText(text, type, column) : v);
                    }
                }
                ps.addBatch();
            }
            ps.executeBatch();
        } catch (SQLException e) {
            throw new IllegalStateException("cannot load a batch into " + sourceTable + ": " + e.getMessage(), e);
        }
    }

    private List<Map<String, Object>> queryOrNull(String sql, Object... binds) {
        try (Connection c = database.dataSource().getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < binds.length; i++) {
                ps.setObject(i + 1, binds[i]);
            }
            List<Map<String, Object>> out = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                ResultSetMetaData md = rs.getMetaData();
                while (rs.next()) {
                    Map<String, Object> row = new LinkedHashMap<>();
                    for (int i = 1; i <= md.getColumnCount(); i++) {
                        row.put(md.getColumnLabel(i).toLowerCase(Locale.ROOT), Values.normalize(rs.getObject(i)));
                    }
                    out.add(row);
                }
            }
            return out;
        } catch (SQLException e) {
            return null;
        }
    }

    private void requireSource() {
        if (sourceTable == null) {
            throw new IllegalStateException("declare the source table first: kit.sourceTable(name, columns...)");
        }
    }

    /** Drops the in-memory H2 database of {@link #onH2}; a kit on a caller's data source leaves it as it is. */
    @Override
    public void close() {
        if (!ownsDatabase) {
            return;
        }
        try (Connection c = database.dataSource().getConnection(); Statement s = c.createStatement()) {
            s.execute("SHUTDOWN");
        } catch (SQLException e) {
            throw new IllegalStateException("cannot drop the in-memory database: " + e.getMessage(), e);
        }
    }
}
