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
 * The rerun is in this JVM on the same URL, without any setting added to it.
 */
class H2CrashTest extends CrashTests {
    static final int KEYS = 5_000;

    @TempDir
    static Path dir;

    H2CrashTest() {
        super(KEYS);
    }

    @Override
    protected DataSource newDatabase() throws IOException {
        return database(Files.createDirectories(dir.resolve("base")));
    }

    @Override
    protected DataSource copy(DataSource from, String name) throws IOException {
        Path to = Files.createDirectories(dir.resolve(name));
        Files.copy(Path.of(url(from).substring("jdbc:h2:".length()) + ".mv.db"), to.resolve("warehouse.mv.db"));
        return database(to);
    }

    private static DataSource database(Path folder) {
        JdbcDataSource ds = new JdbcDataSource();
        ds.setURL("jdbc:h2:" + folder.resolve("warehouse").toAbsolutePath());
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
