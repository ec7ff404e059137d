package dev.itersnap.conformance;

import dev.itersnap.IterativeSnapshot;
import dev.itersnap.core.HardDeletes;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.RunResult;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import javax.sql.DataSource;
import java.io.IOException;
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
 * A run killed with {@code kill -9} at each phase of a large late run, and then run again, ends in the history and
 * ledger of one clean run (issue 29). A database module subclasses it with how to make, copy and fill its database and
 * how to start and stop the run it kills. The case: {@code keys} keys in four daily full pictures of {@code
 * raw_customers} (every key changes every day, one in eleven absent a day, {@code hard_deletes: invalidate}); days 1, 2
 * and 4 applied, day 3 delivered late, so the killed run rolls back days 3 and 4 of every key and writes them again in
 * one transaction. The run is a JVM of its own ({@link #startRun}, {@link ChildJvm}) killed by SIGKILL at:
 * <ul>
 *   <li>{@code write}: inside (or right after) the statement inserting the replayed versions (an INSERT, or the MERGE
 *   that also closes versions), nothing committed;</li>
 *   <li>{@code commit}: the moment the run's batches are committed (its first batch-applied event);</li>
 *   <li>{@code run-log}: every commit of the run done, the run log's update to success not done.</li>
 * </ul>
 * Then, in this JVM: the run log shows the killed run without an end; after {@code write} the history is as before the
 * run, after the others the ledger is the one the killed run committed; the rerun gives the clean run's history and
 * ledger (compared row by row with a copy of the database that ran once, unkilled), and a further run applies nothing.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class CrashTests {
    private final int keys;
    private final List<DataSource> made = new ArrayList<>();
    private DataSource base;
    private List<List<Object>> baseHistory;
    private List<List<Object>> cleanHistory;
    private List<List<Object>> cleanLedger;

    /** @param keys the number of keys of each day (thousands: the write must take a while) */
    protected CrashTests(int keys) {
        this.keys = keys;
    }

    /** The model every run uses, the killed one included (its process calls this too). */
    public static ModelSettings model() {
        return ModelSettings.builder("customers")
                .target("customers_history")
                .source("SELECT * FROM raw_customers")
                .uniqueKey("customer_id")
                .updatedAt("updated_at")
                .sequenceBy("file_date")
                .hardDeletes(HardDeletes.INVALIDATE)
                .build();
    }

    // ------------------------------------------------------------------ what a database module supplies

    /** A fresh, empty database; no connection of this JVM may stay open on it (the killed run opens it). */
    protected abstract DataSource newDatabase() throws Exception;

    /** A copy of {@code from} (no connection is open on it), called {@code name} where the database names copies. */
    protected abstract DataSource copy(DataSource from, String name) throws Exception;

    /**
     * Day {@code d} of {@code raw_customers}: every key from 1 to {@code keys} but those with {@code key % 11 = d},
     * tier {@code 'tier<d>'}, updated_at {@code 2024-01-0<d> 08:00:00}, file_date {@code 2024-01-0<d>}.
     */
    protected abstract String day(int d, int keys);

    /** Starts the run to kill, in a JVM of its own, on {@code db}; it prints {@link ChildJvm#killPoint} at {@code point}. */
    protected abstract ChildJvm startRun(DataSource db, String point) throws IOException;

    /** The raw table's DDL. */
    protected String rawTable() {
        return "CREATE TABLE raw_customers (customer_id INT, tier VARCHAR(20), updated_at TIMESTAMP, file_date DATE)";
    }

    /** Prepares {@code db} for the kill at {@code point} (a trigger that stops the run there); default nothing. */
    protected void arm(DataSource db, String point) throws Exception {
    }

    /** Undoes {@link #arm} after the kill; default nothing. */
    protected void disarm(DataSource db) throws Exception {
    }

    /** A statement run on the connection before each comparison's read (a short lock timeout), or null. */
    protected String beforeReading() {
        return null;
    }

    /** Releases a database after the class (drop it); default nothing (files go with the temporary folder). */
    protected void discard(DataSource db) {
    }

    /** How the test knows the killed run reached its point, and what it waits for after the kill. */
    protected interface KillWatch extends AutoCloseable {
        /** Whether the run reached the point; {@code line} is its latest line of output, or null. */
        boolean reached(String line) throws Exception;

        /** Called once the run is dead (wait until the server has ended its sessions, say). */
        default void afterKill() throws Exception {
        }

        @Override
        default void close() throws java.sql.SQLException {
        }
    }

    /** Default: the run says it reached {@code point} ({@link ChildJvm#reached}). */
    protected KillWatch watch(DataSource db, String point) throws Exception {
        String said = ChildJvm.killPoint(point);
        return said::equals;
    }

    // ------------------------------------------------------------------ the test

    @BeforeAll
    final void applyThreeDaysAndDeliverTheThird() throws Exception {
        base = made(newDatabase());
        execute(base, rawTable());
        for (int d : new int[] {1, 2, 4}) {
            execute(base, day(d, keys));
        }
        run(base);
        baseHistory = history(base);
        execute(base, day(3, keys));
        DataSource clean = made(copy(base, "clean"));
        RunResult r = run(clean);
        assertThat(r.lateBatchFound()).isTrue();
        cleanHistory = history(clean);
        cleanLedger = ledger(clean);
        assertThat(cleanHistory).hasSizeGreaterThan(3 * keys);
    }

    @AfterAll
    final void discardDatabases() {
        for (DataSource ds : made) {
            try {
                discard(ds);
            } catch (RuntimeException ignored) {
                // a database that cannot be discarded must not fail the test
            }
        }
    }

    @ParameterizedTest(name = "killed at {0}")
    @ValueSource(strings = {"write", "commit", "run-log"})
    void aRunKilledAndRunAgainEndsInTheHistoryOfOneCleanRun(String point) throws Exception {
        DataSource db = made(copy(base, point));
        arm(db, point);

        killAt(db, point);

        disarm(db);
        assertThat(rows(db, "SELECT COUNT(*) FROM itersnap_metadata.itersnap_runs WHERE status = 'running'"))
                .as("the run log shows the killed run without an end").containsExactly(List.of(1L));
        if (point.equals("write")) {
            assertThat(history(db)).as("nothing of the killed run's write is left").isEqualTo(baseHistory);
        } else {
            assertThat(ledger(db)).as("the ledger the killed run committed").isEqualTo(cleanLedger);
        }
        run(db);

        assertThat(history(db)).as("the history after the rerun").isEqualTo(cleanHistory);
        assertThat(ledger(db)).as("the ledger after the rerun").isEqualTo(cleanLedger);
        assertThat(run(db).batchesApplied()).as("a further run").isZero();
        assertThat(history(db)).isEqualTo(cleanHistory);
    }

    /** Starts the run in a JVM of its own and kills it (SIGKILL) as soon as it reaches {@code point}. */
    private void killAt(DataSource db, String point) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        try (ChildJvm child = startRun(db, point); KillWatch watch = watch(db, point)) {
            while (true) {
                String line = child.nextLine(50);
                if (ChildJvm.END.equals(line) || System.nanoTime() > deadline) {
                    fail("the run did not reach kill point " + point + "; its output:\n" + child.output());
                }
                if (watch.reached(line)) {
                    break;
                }
            }
            // SIGKILL: no shutdown hook, no connection closed by the client, no database closed
            assertThat(child.kill()).as("killed").isEqualTo(137);
            watch.afterKill();
        }
    }

    private DataSource made(DataSource db) {
        made.add(db);
        return db;
    }

    private static RunResult run(DataSource db) {
        return IterativeSnapshot.builder().dataSource(db).build().run(model());
    }

    /** Runs one statement on a connection of its own. */
    protected static void execute(DataSource db, String sql) throws SQLException {
        try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    /** Every version, ordered. */
    private List<List<Object>> history(DataSource db) throws SQLException {
        return rows(db, "SELECT * FROM customers_history ORDER BY customer_id, dbt_valid_from");
    }

    private List<List<Object>> ledger(DataSource db) throws SQLException {
        return rows(db, "SELECT sequence_value, source_rows, inserted_rows, updated_rows, deleted_rows, rejected_rows, "
                + "deletion_time, content_hash FROM itersnap_metadata.itersnap_ledger ORDER BY sequence_value");
    }

    private List<List<Object>> rows(DataSource db, String sql) throws SQLException {
        try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
            if (beforeReading() != null) {
                s.execute(beforeReading());
            }
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
