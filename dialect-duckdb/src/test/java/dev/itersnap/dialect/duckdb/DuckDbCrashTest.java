package dev.itersnap.dialect.duckdb;

import dev.itersnap.IterativeSnapshot;
import dev.itersnap.conformance.ChildJvm;
import dev.itersnap.conformance.FaultInjectingDataSource;
import dev.itersnap.core.DriverDataSource;
import dev.itersnap.core.HardDeletes;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.RunResult;
import dev.itersnap.core.SnapshotEvent;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import javax.sql.DataSource;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * A run on a DuckDB file killed with {@code kill -9} at each phase of a large late run, and then run again, ends in
 * the history and ledger of one clean run (as {@code PostgresCrashTest} and {@code H2CrashTest}). {@value #KEYS} keys
 * in four daily full pictures (every key changes every day, one in eleven absent a day, {@code hard_deletes:
 * invalidate}); days 1, 2 and 4 applied, day 3 delivered late, so the killed run rolls back days 3 and 4 of every key
 * and writes them again in one transaction. The run is a separate JVM ({@link CrashingRun}) on a copy of the file,
 * killed by SIGKILL at:
 * <ul>
 *   <li>{@code write}: right after its statement inserting the replayed versions ran (nothing committed);</li>
 *   <li>{@code commit}: the moment the run's batches are committed (its first batch-applied event);</li>
 *   <li>{@code run-log}: every commit of the run done, right before the run log's update to success.</li>
 * </ul>
 * DuckDB lets one process open the file for writing, so the rerun opens it only once the killed process is gone, and
 * replays its write-ahead log.
 */
class DuckDbCrashTest {
    static final int KEYS = 3_000;

    @TempDir
    static Path dir;

    private static Path base;
    private static List<List<Object>> baseHistory;
    private static List<List<Object>> cleanHistory;
    private static List<List<Object>> cleanLedger;

    static ModelSettings model() {
        return ModelSettings.builder("customers").target("customers_history").source("SELECT * FROM raw_customers")
                .uniqueKey("customer_id").updatedAt("updated_at").sequenceBy("file_date")
                .hardDeletes(HardDeletes.INVALIDATE).build();
    }

    @BeforeAll
    static void applyThreeDaysAndDeliverTheFourth() throws Exception {
        base = dir.resolve("base.duckdb");
        DataSource db = database(base);
        execute(db, "CREATE TABLE raw_customers (customer_id INT, tier VARCHAR, updated_at TIMESTAMP, file_date DATE)");
        for (int day : new int[] {1, 2, 4}) {
            execute(db, day(day));
        }
        run(db);
        baseHistory = history(db);
        execute(db, day(3));
        DataSource clean = database(copy(base, "clean"));
        RunResult r = run(clean);
        assertThat(r.lateBatchFound()).isTrue();
        cleanHistory = history(clean);
        cleanLedger = ledger(clean);
        assertThat(cleanHistory).hasSizeGreaterThan(3 * KEYS);
    }

    @ParameterizedTest(name = "killed at {0}")
    @ValueSource(strings = {"write", "commit", "run-log"})
    void aRunKilledAndRunAgainEndsInTheHistoryOfOneCleanRun(String point) throws Exception {
        Path file = copy(base, point);

        killAt(file, point);

        DataSource db = database(file);
        assertThat(rows(db, "SELECT COUNT(*) FROM itersnap_metadata.itersnap_runs WHERE status = 'running'"))
                .as("the run log shows the killed run without an end").isEqualTo(List.of(List.of(1L)));
        if (point.equals("write")) {
            assertThat(history(db)).as("nothing of the killed run's write is left").isEqualTo(baseHistory);
        } else {
            assertThat(ledger(db)).as("the ledger the killed run committed").isEqualTo(cleanLedger);
        }
        run(db);

        assertThat(history(db)).as("the history after the rerun").isEqualTo(cleanHistory);
        assertThat(ledger(db)).as("the ledger after the rerun").isEqualTo(cleanLedger);
        assertThat(run(db).batchesApplied()).isZero();
        assertThat(history(db)).isEqualTo(cleanHistory);
    }

    /** Starts the run in a JVM of its own and kills it (SIGKILL) as soon as it says it reached {@code point}. */
    private static void killAt(Path file, String point) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        try (ChildJvm child = ChildJvm.start(CrashingRun.class, "256m", List.of("itersnap.crash=" + point),
                file.toString())) {
            while (true) {
                String line = child.nextLine(50);
                if (ChildJvm.END.equals(line) || System.nanoTime() > deadline) {
                    fail("the run did not reach kill point " + point + "; its output:\n" + child.output());
                }
                if (ChildJvm.killPoint(point).equals(line)) {
                    break;
                }
            }
            assertThat(child.kill()).as("killed").isEqualTo(137);
        }
    }

    /** The process the test kills: runs the model on the DuckDB file named by its argument. */
    public static final class CrashingRun {
        public static void main(String[] args) {
            String point = System.getProperty("itersnap.crash");
            FaultInjectingDataSource source = new FaultInjectingDataSource(database(Path.of(args[0])));
            source.hook((sql, after) -> {
                String s = sql == null ? "" : sql.toLowerCase(Locale.ROOT);
                if (point.equals("write") && after && s.startsWith("insert into \"customers_history\"")) {
                    ChildJvm.reached(point);
                }
                if (point.equals("run-log") && !after && s.startsWith("update \"itersnap_metadata\".\"itersnap_runs\"")
                        && s.contains("\"finished_at\"")) {
                    ChildJvm.reached(point);
                }
            });
            IterativeSnapshot snapshots = IterativeSnapshot.builder().dataSource(source.dataSource()).listener(e -> {
                if (e instanceof SnapshotEvent.BatchApplied && point.equals("commit")) {
                    ChildJvm.reached(point);
                }
            }).build();
            snapshots.run(model());
            System.out.println("FINISHED without reaching kill point " + point);
            System.out.flush();
        }
    }

    private static DataSource database(Path file) {
        return DriverDataSource.of("jdbc:duckdb:" + file);
    }

    /** A copy of the database file (no connection is open on it: DuckDB checkpointed it when the last one closed). */
    private static Path copy(Path from, String name) throws Exception {
        Path to = dir.resolve(name + ".duckdb");
        Files.copy(from, to);
        Path wal = Path.of(from + ".wal");
        if (Files.exists(wal)) {
            Files.copy(wal, Path.of(to + ".wal"));
        }
        return to;
    }

    /** Day {@code d}: every key but one in eleven, each with a value of its own that day. */
    private static String day(int d) {
        return "INSERT INTO raw_customers SELECT x, 'tier" + d + "', TIMESTAMP '2024-01-0" + d + " 08:00:00', DATE "
                + "'2024-01-0" + d + "' FROM range(1, " + (KEYS + 1) + ") r(x) WHERE x % 11 <> " + d;
    }

    private static RunResult run(DataSource db) {
        return IterativeSnapshot.builder().dataSource(db).build().run(model());
    }

    private static void execute(DataSource db, String sql) throws SQLException {
        try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    private static List<List<Object>> history(DataSource db) throws SQLException {
        return rows(db, "SELECT * FROM customers_history ORDER BY customer_id, dbt_valid_from");
    }

    private static List<List<Object>> ledger(DataSource db) throws SQLException {
        return rows(db, "SELECT sequence_value, source_rows, inserted_rows, updated_rows, deleted_rows, rejected_rows, "
                + "deletion_time, content_hash FROM itersnap_metadata.itersnap_ledger ORDER BY sequence_value");
    }

    private static List<List<Object>> rows(DataSource db, String sql) throws SQLException {
        try (Connection c = db.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            List<List<Object>> out = new ArrayList<>();
            int n = rs.getMetaData().getColumnCount();
            while (rs.next()) {
                List<Object> row = new ArrayList<>(n);
                for (int i = 1; i <= n; i++) {
                    row.add(rs.getObject(i));
                }
                out.add(row);
            }
            return out;
        }
    }
}
