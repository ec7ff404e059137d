package dev.itersnap.dialect.duckdb;

import dev.itersnap.IterativeSnapshot;
import dev.itersnap.conformance.ChildJvm;
import dev.itersnap.conformance.CrashTests;
import dev.itersnap.conformance.FaultInjectingDataSource;
import dev.itersnap.core.DriverDataSource;
import dev.itersnap.core.SnapshotEvent;
import org.junit.jupiter.api.io.TempDir;

import javax.sql.DataSource;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * A run on a DuckDB file killed with {@code kill -9} at each phase of a large late run, and then run again, ends in
 * the history and ledger of one clean run ({@link CrashTests}, as on H2 and PostgreSQL), {@value #KEYS} keys. The run
 * ({@link CrashingRun}) works on a copy of the file and stops at:
 * <ul>
 *   <li>{@code write}: right after its statement inserting the replayed versions ran (nothing committed);</li>
 *   <li>{@code commit}: the moment the run's batches are committed (its first batch-applied event);</li>
 *   <li>{@code run-log}: every commit of the run done, right before the run log's update to success.</li>
 * </ul>
 * DuckDB lets one process open the file for writing, so the rerun opens it only once the killed process is gone, and
 * replays its write-ahead log.
 */
class DuckDbCrashTest extends CrashTests {
    static final int KEYS = 3_000;

    @TempDir
    static Path dir;

    DuckDbCrashTest() {
        super(KEYS);
    }

    @Override
    protected DataSource newDatabase() {
        return database(dir.resolve("base.duckdb"));
    }

    /** A copy of the database file (no connection is open on it: DuckDB checkpointed it when the last one closed). */
    @Override
    protected DataSource copy(DataSource from, String name) throws IOException {
        Path file = file(from);
        Path to = dir.resolve(name + ".duckdb");
        Files.copy(file, to);
        Path wal = Path.of(file + ".wal");
        if (Files.exists(wal)) {
            Files.copy(wal, Path.of(to + ".wal"));
        }
        return database(to);
    }

    @Override
    protected String rawTable() {
        return "CREATE TABLE raw_customers (customer_id INT, tier VARCHAR, updated_at TIMESTAMP, file_date DATE)";
    }

    @Override
    protected String day(int d, int keys) {
        return "INSERT INTO raw_customers SELECT x, 'tier" + d + "', TIMESTAMP '2024-01-0" + d + " 08:00:00', DATE "
                + "'2024-01-0" + d + "' FROM range(1, " + (keys + 1) + ") r(x) WHERE x % 11 <> " + d;
    }

    @Override
    protected ChildJvm startRun(DataSource db, String point) throws IOException {
        return ChildJvm.start(CrashingRun.class, "256m", List.of("itersnap.crash=" + point), file(db).toString());
    }

    /** The process the test kills: runs the model on the DuckDB file named by its argument. */
    public static final class CrashingRun {
        public static void main(String[] args) {
            String point = System.getProperty("itersnap.crash");
            FaultInjectingDataSource source = new FaultInjectingDataSource(database(Path.of(args[0])));
            source.hook((sql, after) -> {
                String s = sql == null ? "" : sql.toLowerCase(Locale.ROOT);
                // the statement writing the replayed versions: their INSERT, or the MERGE that closes and opens them
                if (point.equals("write") && after && (s.startsWith("insert into \"customers_history\"")
                        || s.startsWith("merge into \"customers_history\"") && s.contains("\"itersnap_w_kind\""))) {
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

    private static Path file(DataSource db) {
        return Path.of(((DriverDataSource) db).url().substring("jdbc:duckdb:".length()));
    }
}
