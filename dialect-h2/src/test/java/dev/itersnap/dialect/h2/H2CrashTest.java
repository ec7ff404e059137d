package dev.itersnap.dialect.h2;

import dev.itersnap.IterativeSnapshot;
import dev.itersnap.conformance.ChildJvm;
import dev.itersnap.core.HardDeletes;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.RunResult;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * Issue 29: a run killed with {@code kill -9} on an H2 file database, at each phase of a large late run, and then run
 * again ends in the history of one clean run. {@value #KEYS} keys in four daily full pictures (every key changes every
 * day, one in eleven absent a day, {@code hard_deletes: invalidate}); days 1, 2 and 4 applied, day 3 delivered late, so
 * the killed run rolls back days 3 and 4 of every key and writes them again in one transaction. The run is a separate
 * JVM ({@link CrashingRun}) killed by {@link Process#destroyForcibly()} (SIGKILL) at:
 * <ul>
 *   <li>{@code write}: half-way through the statement inserting the replayed versions (nothing committed);</li>
 *   <li>{@code commit}: the moment the run's batches are committed (its first batch-applied event). Before decision
 *       0007, with H2's default {@code WRITE_DELAY} of 500 ms, the reopened database held the ledger's entries and a
 *       fraction of their versions (33 and 19 of 5,000), the rerun said "up to date", and reading the history ran
 *       into "Timeout trying to lock table";</li>
 *   <li>{@code run-log}: every commit of the run done, its run log entry not yet finished.</li>
 * </ul>
 * The rerun is in this JVM on the same URL, without any setting added to it.
 */
class H2CrashTest {
    static final int KEYS = 5_000;

    @TempDir
    static Path dir;

    /** The database with days 1, 2 and 4 applied and day 3 delivered, and the history one clean late run gives. */
    private static Path base;
    private static List<List<Object>> cleanHistory;
    private static List<List<Object>> cleanLedger;

    static ModelSettings model() {
        return ModelSettings.builder("customers")
                .target("customers_history")
                .source("SELECT * FROM raw_customers")
                .uniqueKey("customer_id")
                .updatedAt("updated_at")
                .sequenceBy("file_date")
                .hardDeletes(HardDeletes.INVALIDATE)
                .build();
    }

    @BeforeAll
    static void applyThreeDaysAndDeliverTheFourth() throws Exception {
        base = dir.resolve("base");
        Files.createDirectories(base);
        try (Connection c = open(base); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE raw_customers (customer_id INT, tier VARCHAR(20), updated_at TIMESTAMP, "
                    + "file_date DATE)");
            for (int day : new int[] {1, 2, 4}) {
                s.execute(day(day));
            }
        }
        run(base);
        try (Connection c = open(base); Statement s = c.createStatement()) {
            s.execute(day(3));
        }
        Path clean = copy(base, "clean");
        RunResult r = run(clean);
        assertThat(r.lateBatchFound()).isTrue();
        cleanHistory = history(clean);
        cleanLedger = ledger(clean);
        assertThat(cleanHistory).hasSizeGreaterThan(3 * KEYS);
    }

    @ParameterizedTest(name = "killed at {0}")
    @ValueSource(strings = {"write", "commit", "run-log"})
    void aRunKilledAndRunAgainEndsInTheHistoryOfOneCleanRun(String point) throws Exception {
        Path db = copy(base, point);
        try (Connection c = open(db); Statement s = c.createStatement()) {
            s.execute("CREATE TRIGGER crash_write AFTER INSERT ON customers_history FOR EACH ROW CALL \""
                    + CrashingRun.KillPoint.class.getName() + "\"");
            s.execute("CREATE TRIGGER itersnap_metadata.crash_run_log BEFORE UPDATE ON itersnap_metadata.itersnap_runs "
                    + "FOR EACH ROW CALL \"" + CrashingRun.KillPoint.class.getName() + "\"");
        }

        killAt(db, point);

        try (Connection c = open(db); Statement s = c.createStatement()) {
            s.execute("DROP TRIGGER crash_write");
            s.execute("DROP TRIGGER itersnap_metadata.crash_run_log");
            // the run log shows the killed run without an end
            try (ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM itersnap_metadata.itersnap_runs "
                    + "WHERE status = 'running'")) {
                rs.next();
                assertThat(rs.getLong(1)).isEqualTo(1);
            }
        }
        run(db);

        assertThat(history(db)).as("the history after the rerun").isEqualTo(cleanHistory);
        assertThat(ledger(db)).as("the ledger after the rerun").isEqualTo(cleanLedger);
        RunResult again = run(db);
        assertThat(again.batchesApplied()).isZero();
        assertThat(history(db)).isEqualTo(cleanHistory);
    }

    /** Starts the run in a JVM of its own and kills it (SIGKILL) as soon as it reports reaching {@code point}. */
    private static void killAt(Path db, String point) throws Exception {
        try (ChildJvm child = ChildJvm.start(CrashingRun.class, "512m", List.of("itersnap.crash=" + point), url(db))) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (true) {
                String line = child.nextLine(TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
                if (line == null || line.equals(ChildJvm.END)) {
                    fail("the run did not reach kill point " + point + "; its output:\n" + child.output());
                }
                if (line.equals(ChildJvm.killPoint(point))) {
                    break;
                }
            }
            assertThat(child.kill()).as("killed").isEqualTo(137); // SIGKILL: no shutdown hook, no H2 close
        }
    }

    /** Day {@code d}: every key but one in eleven, each with a value of its own that day. */
    private static String day(int d) {
        return "INSERT INTO raw_customers SELECT X, 'tier" + d + "', TIMESTAMP '2024-01-0" + d + " 08:00:00', DATE "
                + "'2024-01-0" + d + "' FROM SYSTEM_RANGE(1, " + KEYS + ") WHERE MOD(X, 11) <> " + d;
    }

    private static RunResult run(Path db) {
        JdbcDataSource ds = new JdbcDataSource();
        ds.setURL(url(db));
        return IterativeSnapshot.builder().dataSource(ds).build().run(model());
    }

    private static String url(Path db) {
        return "jdbc:h2:" + db.resolve("warehouse").toAbsolutePath();
    }

    private static Connection open(Path db) throws SQLException {
        return java.sql.DriverManager.getConnection(url(db));
    }

    private static Path copy(Path from, String name) throws IOException {
        Path to = dir.resolve(name);
        Files.createDirectories(to);
        Files.copy(from.resolve("warehouse.mv.db"), to.resolve("warehouse.mv.db"));
        return to;
    }

    /**
     * Every version, ordered, read with a short lock timeout: rows a dead transaction still held made a plain read
     * fail with "Timeout trying to lock table".
     */
    private static List<List<Object>> history(Path db) throws SQLException {
        return rows(db, "SELECT * FROM customers_history ORDER BY customer_id, dbt_valid_from");
    }

    private static List<List<Object>> ledger(Path db) throws SQLException {
        return rows(db, "SELECT sequence_value, source_rows, inserted_rows, updated_rows, deleted_rows, rejected_rows, "
                + "deletion_time, content_hash FROM itersnap_metadata.itersnap_ledger ORDER BY sequence_value");
    }

    private static List<List<Object>> rows(Path db, String sql) throws SQLException {
        try (Connection c = open(db); Statement s = c.createStatement()) {
            s.execute("SET LOCK_TIMEOUT 2000");
            List<List<Object>> out = new ArrayList<>();
            try (ResultSet rs = s.executeQuery(sql)) {
                int n = rs.getMetaData().getColumnCount();
                while (rs.next()) {
                    List<Object> row = new ArrayList<>(n);
                    for (int i = 1; i <= n; i++) {
                        row.add(rs.getObject(i));
                    }
                    out.add(row);
                }
            }
            return out;
        }
    }
}
