package dev.itersnap.dialect.h2;

import dev.itersnap.conformance.ChildJvm;
import dev.itersnap.conformance.CrashTests;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.io.TempDir;

import javax.sql.DataSource;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Issue 29 on an H2 file database ({@link CrashTests}: a large late run killed with {@code kill -9} at each phase,
 * then run again, ends in the history of one clean run), {@value #KEYS} keys. The run ({@link CrashingRun}) stops at:
 * <ul>
 *   <li>{@code write}: half-way through the statement inserting the replayed versions (a row trigger);</li>
 *   <li>{@code commit}: its first batch-applied event. Before decision 0007, with H2's default {@code WRITE_DELAY} of
 *       500 ms, the reopened database held the ledger's entries and a fraction of their versions (33 and 19 of
 *       5,000), the rerun said "up to date", and reading the history ran into "Timeout trying to lock table";</li>
 *   <li>{@code run-log}: the run log's update to success (a row trigger).</li>
 * </ul>
 * The database's URL has {@code ;REUSE_SPACE=FALSE} ({@link #URL_SETTINGS}, decision 0007): with H2 2.5.252's default
 * a commit written into space H2 freed since the previous one is missing after the kill (the store header names the
 * chunk before it), and when what H2 reopens instead is a version stored half-way through the run's large commit, H2
 * 2.5 no longer finishes that commit: {@code commit} and {@code run-log} ended in "Row not found in primary index" and
 * "Timeout trying to lock table" about one time in two once the file's chunks were older than H2's 45 s retention
 * time (docs/dev/h2-kill9-repro.md). The kills after the commit therefore wait until the base file is that old, so
 * that H2 would reuse its space. The rerun is in this JVM on the same URL.
 */
class H2CrashTest extends CrashTests {
    static final int KEYS = 5_000;
    /**
     * Appends every chunk to the file: H2 2.5.252 loses the last commits of a killed process that reused space.
     * {@code -Ditersnap.h2CrashUrlSettings=} (empty) runs the test on H2's defaults, to see the defect.
     */
    static final String URL_SETTINGS = System.getProperty("itersnap.h2CrashUrlSettings", ";REUSE_SPACE=FALSE");
    /** H2 reuses a dead chunk's space once the chunk is older than this (its RETENTION_TIME, 45 s), and 1 s. */
    private static final long SEASONED_MILLIS = 46_000;

    @TempDir
    static Path dir;

    H2CrashTest() {
        super(KEYS);
    }

    @Override
    protected DataSource newDatabase() throws IOException {
        return database(Files.createDirectories(dir.resolve("base")));
    }

    /**
     * A copy of the file; for a kill after the commit not before the base's last write is {@link #SEASONED_MILLIS} old,
     * so that the killed run may write into space of the base's chunks (the window of decision 0007).
     */
    @Override
    protected DataSource copy(DataSource from, String name) throws IOException, InterruptedException {
        String path = url(from).substring("jdbc:h2:".length()).split(";", 2)[0];
        Path file = Path.of(path + ".mv.db");
        if (name.equals("commit") || name.equals("run-log")) {
            long age = System.currentTimeMillis() - Files.getLastModifiedTime(file).toMillis();
            Thread.sleep(Math.max(0, SEASONED_MILLIS - age));
        }
        Path to = Files.createDirectories(dir.resolve(name));
        Files.copy(file, to.resolve("warehouse.mv.db"));
        return database(to);
    }

    private static DataSource database(Path folder) {
        JdbcDataSource ds = new JdbcDataSource();
        ds.setURL("jdbc:h2:" + folder.resolve("warehouse").toAbsolutePath() + URL_SETTINGS);
        return ds;
    }

    private static String url(DataSource db) {
        return ((JdbcDataSource) db).getURL();
    }

    @Override
    protected String day(int d, int keys) {
        return "INSERT INTO raw_customers SELECT X, 'tier" + d + "', TIMESTAMP '2024-01-0" + d + " 08:00:00', DATE "
                + "'2024-01-0" + d + "' FROM SYSTEM_RANGE(1, " + keys + ") WHERE MOD(X, 11) <> " + d;
    }

    @Override
    protected ChildJvm startRun(DataSource db, String point) throws IOException {
        return ChildJvm.start(CrashingRun.class, "512m", List.of("itersnap.crash=" + point), url(db));
    }

    /** Row triggers on the history and the run log that stop the killed run (only there) at its point. */
    @Override
    protected void arm(DataSource db, String point) throws Exception {
        execute(db, "CREATE TRIGGER crash_write AFTER INSERT ON customers_history FOR EACH ROW CALL \""
                + CrashingRun.KillPoint.class.getName() + "\"");
        execute(db, "CREATE TRIGGER itersnap_metadata.crash_run_log BEFORE UPDATE ON itersnap_metadata.itersnap_runs "
                + "FOR EACH ROW CALL \"" + CrashingRun.KillPoint.class.getName() + "\"");
    }

    @Override
    protected void disarm(DataSource db) throws Exception {
        execute(db, "DROP TRIGGER crash_write");
        execute(db, "DROP TRIGGER itersnap_metadata.crash_run_log");
    }

    /** Rows a dead transaction still held made a plain read fail with "Timeout trying to lock table". */
    @Override
    protected String beforeReading() {
        return "SET LOCK_TIMEOUT 2000";
    }
}
