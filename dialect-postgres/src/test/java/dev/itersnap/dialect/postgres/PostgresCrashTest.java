package dev.itersnap.dialect.postgres;

import dev.itersnap.conformance.ChildJvm;
import dev.itersnap.conformance.CrashTests;
import org.postgresql.ds.PGSimpleDataSource;

import javax.sql.DataSource;
import java.io.IOException;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 29 on PostgreSQL ({@link CrashTests}: a large late run killed with {@code kill -9} at each phase, then run
 * again, ends in the history and ledger of one clean run), {@value #KEYS} keys. The server runs in this JVM's process
 * tree and stays up; the run is a separate JVM ({@link PostgresCrashingRun}) given the database's JDBC URL, killed at:
 * <ul>
 *   <li>{@code write}: inside the statement inserting the replayed versions, at the {@value #WRITE_AT}th (a row
 *       trigger sleeps there; the test sees the sleep in {@code pg_stat_activity}; nothing is committed);</li>
 *   <li>{@code commit}: the moment the run's batches are committed (its first batch-applied event);</li>
 *   <li>{@code run-log}: every commit of the run done, the run log's update to success under way (a trigger sleeps
 *       in it).</li>
 * </ul>
 * The server notices the dead client (the killed run's sessions check it every 100 ms) and rolls back what it had
 * open; the test waits until it has ended them before the rerun, in this JVM.
 */
class PostgresCrashTest extends CrashTests {
    static final int KEYS = 3_000;
    static final int WRITE_AT = 1_500;

    PostgresCrashTest() {
        super(KEYS);
    }

    @Override
    protected DataSource newDatabase() {
        return PostgresServer.get().newDatabase();
    }

    @Override
    protected DataSource copy(DataSource from, String name) {
        return PostgresServer.get().copy(from);
    }

    @Override
    protected void discard(DataSource db) {
        PostgresServer.get().drop(db);
    }

    @Override
    protected String day(int d, int keys) {
        return "INSERT INTO raw_customers SELECT x, 'tier" + d + "', TIMESTAMP '2024-01-0" + d + " 08:00:00', DATE "
                + "'2024-01-0" + d + "' FROM generate_series(1, " + keys + ") x WHERE x % 11 <> " + d;
    }

    @Override
    protected ChildJvm startRun(DataSource db, String point) throws IOException {
        return ChildJvm.start(PostgresCrashingRun.class, "256m", List.of("itersnap.crash=" + point),
                ((PGSimpleDataSource) db).getURL());
    }

    /** A trigger that sleeps where the run is to be killed: at the {@value #WRITE_AT}th version, or in the run log. */
    @Override
    protected void arm(DataSource db, String point) throws Exception {
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
    }

    @Override
    protected void disarm(DataSource db) throws Exception {
        execute(db, "DROP TRIGGER IF EXISTS crash_write ON customers_history");
        execute(db, "DROP TRIGGER IF EXISTS crash_run_log ON itersnap_metadata.itersnap_runs");
    }

    @Override
    protected String beforeReading() {
        return "SET lock_timeout = '2s'";
    }

    /**
     * The run reached its point by its own word ({@code commit}) or by a session of it sleeping in a trigger ({@code
     * write}, {@code run-log}); after the kill, the server has ended the killed run's sessions.
     */
    @Override
    protected KillWatch watch(DataSource db, String point) throws SQLException {
        Connection watch = db.getConnection();
        Statement s = watch.createStatement();
        return new KillWatch() {
            @Override
            public boolean reached(String line) throws SQLException {
                return point.equals("commit") ? ChildJvm.killPoint(point).equals(line)
                        : count(s, "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() "
                                + "AND wait_event = 'PgSleep'") > 0;
            }

            @Override
            public void afterKill() throws Exception {
                long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (count(s, "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() "
                        + "AND pid <> pg_backend_pid() AND backend_type = 'client backend'") > 0) {
                    assertThat(System.nanoTime()).as("the server ends the killed run's sessions").isLessThan(until);
                    Thread.sleep(50);
                }
            }

            @Override
            public void close() throws SQLException {
                watch.close();
            }
        };
    }

    private static long count(Statement s, String sql) throws SQLException {
        try (ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
