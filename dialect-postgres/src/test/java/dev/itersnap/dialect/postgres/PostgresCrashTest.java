package dev.itersnap.dialect.postgres;

import dev.itersnap.IterativeSnapshot;
import dev.itersnap.conformance.ChildJvm;
import dev.itersnap.core.HardDeletes;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.RunResult;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.postgresql.ds.PGSimpleDataSource;

import javax.sql.DataSource;
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
 * Issue 29 on PostgreSQL: a run killed with {@code kill -9} at each phase of a large late run, and then run again,
 * ends in the history and ledger of one clean run. {@value #KEYS} keys in four daily full pictures (every key changes
 * every day, one in eleven absent a day, {@code hard_deletes: invalidate}); days 1, 2 and 4 applied, day 3 delivered
 * late, so the killed run rolls back days 3 and 4 of every key and writes them again in one transaction. The server
 * runs in this JVM's process tree and stays up; the run is a separate JVM ({@link PostgresCrashingRun}) given the
 * database's JDBC URL, killed by {@link Process#destroyForcibly()} (SIGKILL) at:
 * <ul>
 *   <li>{@code write}: inside the statement inserting the replayed versions, at the {@value #WRITE_AT}th (a row
 *       trigger sleeps there; the test sees the sleep in {@code pg_stat_activity}; nothing is committed);</li>
 *   <li>{@code commit}: the moment the run's batches are committed (its first batch-applied event);</li>
 *   <li>{@code run-log}: every commit of the run done, the run log's update to success under way (a trigger sleeps
 *       in it).</li>
 * </ul>
 * The server notices the dead client (the killed run's sessions check it every 100 ms) and rolls back what it had
 * open; the rerun is in this JVM.
 */
class PostgresCrashTest {
    static final int KEYS = 3_000;
    static final int WRITE_AT = 1_500;

    private static DataSource base;
    private static List<List<Object>> baseHistory;
    private static List<List<Object>> cleanHistory;
    private static List<List<Object>> cleanLedger;
    private static final List<DataSource> made = new ArrayList<>();

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
        base = PostgresServer.get().newDatabase();
        made.add(base);
        execute(base, "CREATE TABLE raw_customers (customer_id INT, tier VARCHAR(20), updated_at TIMESTAMP, "
                + "file_date DATE)");
        for (int day : new int[] {1, 2, 4}) {
            execute(base, day(day));
        }
        run(base);
        baseHistory = history(base);
        execute(base, day(3));
        DataSource clean = copy(base);
        RunResult r = run(clean);
        assertThat(r.lateBatchFound()).isTrue();
        cleanHistory = history(clean);
        cleanLedger = ledger(clean);
        assertThat(cleanHistory).hasSizeGreaterThan(3 * KEYS);
    }

    @AfterAll
    static void dropDatabases() {
        for (DataSource ds : made) {
            try {
                PostgresServer.get().drop(ds);
            } catch (RuntimeException ignored) {
                // a database that cannot be dropped must not fail the test
            }
        }
    }

    @ParameterizedTest(name = "killed at {0}")
    @ValueSource(strings = {"write", "commit", "run-log"})
    void aRunKilledAndRunAgainEndsInTheHistoryOfOneCleanRun(String point) throws Exception {
        DataSource db = copy(base);
        execute(db, "CREATE SEQUENCE crash_rows");
        if (point.equals("write")) {
            execute(db, "CREATE FUNCTION crash_write() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                    + "IF nextval('crash_rows') = " + WRITE_AT + " THEN PERFORM pg_sleep(600); END IF; "
                    + "RETURN NULL; END $$");
            execute(db, "CREATE TRIGGER crash_write AFTER INSERT ON customers_history FOR EACH ROW "
                    + "EXECUTE FUNCTION crash_write()");
        } else if (point.equals("run-log")) {
            execute(db, "CREATE FUNCTION crash_run_log() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                    + "PERFORM pg_sleep(600); RETURN NEW; END $$");
            execute(db, "CREATE TRIGGER crash_run_log BEFORE UPDATE ON itersnap_metadata.itersnap_runs FOR EACH ROW "
                    + "WHEN (NEW.status = 'success') EXECUTE FUNCTION crash_run_log()");
        }

        killAt(db, point);

        execute(db, "DROP TRIGGER IF EXISTS crash_write ON customers_history");
        execute(db, "DROP TRIGGER IF EXISTS crash_run_log ON itersnap_metadata.itersnap_runs");
        // the run log shows the killed run without an end
        assertThat(rows(db, "SELECT COUNT(*) FROM itersnap_metadata.itersnap_runs WHERE status = 'running'"))
                .isEqualTo(List.of(List.of(1L)));
        if (point.equals("write")) {
            assertThat(history(db)).as("nothing of the killed run's write is left").isEqualTo(baseHistory);
        } else {
            // the ledger holds what the killed run committed
            assertThat(ledger(db)).as("the ledger the killed run committed").isEqualTo(cleanLedger);
        }
        run(db);

        assertThat(history(db)).as("the history after the rerun").isEqualTo(cleanHistory);
        assertThat(ledger(db)).as("the ledger after the rerun").isEqualTo(cleanLedger);
        RunResult again = run(db);
        assertThat(again.batchesApplied()).isZero();
        assertThat(history(db)).isEqualTo(cleanHistory);
    }

    /**
     * Starts the run in a JVM of its own and kills it (SIGKILL) as soon as it reaches {@code point}: by its own word
     * ({@code commit}) or by a session of it sleeping in a trigger ({@code write}, {@code run-log}). Then waits until the
     * server has ended the killed run's sessions.
     */
    private static void killAt(DataSource db, String point) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        try (ChildJvm child = ChildJvm.start(PostgresCrashingRun.class, "256m", List.of("itersnap.crash=" + point),
                ((PGSimpleDataSource) db).getURL());
             Connection watch = db.getConnection(); Statement s = watch.createStatement()) {
            while (true) {
                String line = child.nextLine(50);
                if (ChildJvm.END.equals(line) || System.nanoTime() > deadline) {
                    fail("the run did not reach kill point " + point + "; its output:\n" + child.output());
                }
                boolean reached = point.equals("commit") ? ChildJvm.killPoint(point).equals(line)
                        : count(s, "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() "
                                + "AND wait_event = 'PgSleep'") > 0;
                if (reached) {
                    break;
                }
            }
            // SIGKILL: no shutdown hook, no connection closed by the client
            assertThat(child.kill()).as("killed").isEqualTo(137);
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (count(s, "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() "
                    + "AND pid <> pg_backend_pid() AND backend_type = 'client backend'") > 0) {
                assertThat(System.nanoTime()).as("the server ends the killed run's sessions").isLessThan(until);
                Thread.sleep(50);
            }
        }
    }

    private static long count(Statement s, String sql) throws SQLException {
        try (ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** Day {@code d}: every key but one in eleven, each with a value of its own that day. */
    private static String day(int d) {
        return "INSERT INTO raw_customers SELECT x, 'tier" + d + "', TIMESTAMP '2024-01-0" + d + " 08:00:00', DATE "
                + "'2024-01-0" + d + "' FROM generate_series(1, " + KEYS + ") x WHERE x % 11 <> " + d;
    }

    private static RunResult run(DataSource db) {
        return IterativeSnapshot.builder().dataSource(db).build().run(model());
    }

    private static DataSource copy(DataSource from) {
        DataSource to = PostgresServer.get().copy(from);
        made.add(to);
        return to;
    }

    private static void execute(DataSource db, String sql) throws SQLException {
        try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    /** Every version, ordered. */
    private static List<List<Object>> history(DataSource db) throws SQLException {
        return rows(db, "SELECT * FROM customers_history ORDER BY customer_id, dbt_valid_from");
    }

    private static List<List<Object>> ledger(DataSource db) throws SQLException {
        return rows(db, "SELECT sequence_value, source_rows, inserted_rows, updated_rows, deleted_rows, rejected_rows, "
                + "deletion_time, content_hash FROM itersnap_metadata.itersnap_ledger ORDER BY sequence_value");
    }

    private static List<List<Object>> rows(DataSource db, String sql) throws SQLException {
        try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
            s.execute("SET lock_timeout = '2s'");
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
