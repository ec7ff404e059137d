package dev.itersnap.dialect.h2;

import dev.itersnap.IterativeSnapshot;
import dev.itersnap.conformance.ChildJvm;
import dev.itersnap.core.SnapshotEvent;
import org.h2.api.Trigger;
import org.h2.jdbcx.JdbcDataSource;

import java.sql.Connection;

/**
 * The process {@link H2CrashTest} kills: runs the model once on the H2 file database named by its argument and, at
 * the kill point named by the system property {@code itersnap.crash}, prints {@code KILL-POINT <point>} and stops
 * making progress until it is killed. The points: {@code write} (inside the statement that inserts the history's
 * versions, half-way, by {@link KillPoint} as a row trigger), {@code commit} (the moment the run's batches are
 * committed: its first {@code BatchApplied} event, which comes right after the commit) and {@code run-log} (every
 * commit of the run done, the run log not yet finished: {@link KillPoint} on the run log's update to success).
 */
public final class CrashingRun {
    private CrashingRun() {
    }

    public static void main(String[] args) {
        JdbcDataSource ds = new JdbcDataSource();
        ds.setURL(args[0]);
        String point = System.getProperty("itersnap.crash");
        IterativeSnapshot snapshots = IterativeSnapshot.builder().dataSource(ds).listener(e -> {
            if (e instanceof SnapshotEvent.BatchApplied && "commit".equals(point)) {
                killPoint("commit");
            }
        }).build();
        snapshots.run(H2CrashTest.model());
        System.out.println("FINISHED without reaching kill point " + point);
        System.out.flush();
    }

    /** Tells the parent to kill this process now, and waits for it. */
    static void killPoint(String point) {
        ChildJvm.reached(point);
    }

    /**
     * A row trigger that reaches a kill point in the killed process only ({@code itersnap.crash} set): on the history
     * ({@code write}) at the {@value #WRITE_AT}th version inserted, on the run log ({@code run-log}) at the update that
     * finishes a run with success.
     */
    public static final class KillPoint implements Trigger {
        static final int WRITE_AT = 2_000;
        private static final java.util.concurrent.atomic.AtomicLong INSERTED =
                new java.util.concurrent.atomic.AtomicLong();
        private String table;

        @Override
        public void init(Connection conn, String schemaName, String triggerName, String tableName, boolean before,
                         int type) {
            this.table = tableName;
        }

        @Override
        public void fire(Connection conn, Object[] oldRow, Object[] newRow) {
            String point = System.getProperty("itersnap.crash");
            if ("write".equals(point) && table.equalsIgnoreCase("customers_history")
                    && INSERTED.incrementAndGet() == WRITE_AT) {
                killPoint("write");
            }
            if ("run-log".equals(point) && table.equalsIgnoreCase("itersnap_runs") && newRow != null
                    && java.util.Arrays.asList(newRow).contains("success")) {
                killPoint("run-log");
            }
        }
    }
}
