package dev.itersnap.dialect.postgres;

import dev.itersnap.IterativeSnapshot;
import dev.itersnap.conformance.ChildJvm;
import dev.itersnap.core.SnapshotEvent;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The process {@link PostgresCrashTest} kills: runs the model once on the PostgreSQL database named by its argument
 * (user and password from {@code ITERSNAP_PG_USER} / {@code ITERSNAP_PG_PASSWORD}, as the tests' server takes them,
 * never on the command line). At the kill point {@code commit} (named by the system property {@code itersnap.crash}:
 * the moment the run's batches are committed, its first {@code BatchApplied} event) it prints
 * {@code KILL-POINT commit} and waits to be killed. The points {@code write} and {@code run-log} are reached inside
 * the server, by triggers the test creates, which the test watches for.
 *
 * <p>Its sessions ask the server to check the client every 100 ms while a statement runs
 * ({@code client_connection_check_interval}): a backend the test holds inside a statement (a trigger sleeping) then
 * notices the killed client as it would at the statement's end, and rolls back.
 */
public final class PostgresCrashingRun {
    private PostgresCrashingRun() {
    }

    public static void main(String[] args) {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setURL(args[0]);
        ds.setUser(System.getenv().getOrDefault("ITERSNAP_PG_USER", "postgres"));
        ds.setPassword(System.getenv().getOrDefault("ITERSNAP_PG_PASSWORD", ""));
        ds.setOptions("-c client_connection_check_interval=100");
        String point = System.getProperty("itersnap.crash");
        IterativeSnapshot snapshots = IterativeSnapshot.builder().dataSource(ds).listener(e -> {
            if (e instanceof SnapshotEvent.BatchApplied && "commit".equals(point)) {
                killPoint("commit");
            }
        }).build();
        System.out.println("RUNNING");
        System.out.flush();
        snapshots.run(PostgresCrashTest.model());
        System.out.println("FINISHED without reaching kill point " + point);
        System.out.flush();
    }

    /** Tells the parent to kill this process now, and waits for it. */
    static void killPoint(String point) {
        ChildJvm.reached(point);
    }
}
