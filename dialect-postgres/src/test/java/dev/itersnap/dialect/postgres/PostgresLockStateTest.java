package dev.itersnap.dialect.postgres;

import dev.itersnap.spi.LockState;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code status} on PostgreSQL (issue 29): the model lock is a session's advisory lock, so it is held exactly while
 * the session that took it lives; {@link PostgresAdvisoryLock#observe} reads {@code pg_locks} without taking it.
 */
class PostgresLockStateTest {
    private static final PostgresServer SERVER = PostgresServer.get();
    private static DataSource db;

    @BeforeAll
    static void database() {
        db = SERVER.newDatabase();
    }

    @AfterAll
    static void drop() {
        SERVER.drop(db);
    }

    @Test
    void heldOnlyWhileTheHoldingSessionLives() throws Exception {
        try (Connection status = db.getConnection()) {
            assertThat(PostgresAdvisoryLock.observe(status, "itersnap_metadata", "customers").held())
                    .isEqualTo(LockState.Held.FREE);
            try (Connection run = db.getConnection(); PreparedStatement ps = run.prepareStatement(
                    "SELECT pg_advisory_lock(?)")) {
                ps.setLong(1, PostgresAdvisoryLock.key("itersnap_metadata", "customers")); // as a run takes it
                ps.executeQuery().close();

                LockState held = PostgresAdvisoryLock.observe(status, "itersnap_metadata", "customers");
                assertThat(held.held()).isEqualTo(LockState.Held.HELD);
                assertThat(held.holder()).startsWith("session pid ");
                // another model's lock, or the same model in another metadata schema, is not this one
                assertThat(PostgresAdvisoryLock.observe(status, "itersnap_metadata", "orders").held())
                        .isEqualTo(LockState.Held.FREE);
                assertThat(PostgresAdvisoryLock.observe(status, "other_meta", "customers").held())
                        .isEqualTo(LockState.Held.FREE);
            }
            // the session ended (as when its process is killed): the server released the lock
            for (int i = 0; i < 50 && PostgresAdvisoryLock.observe(status, "itersnap_metadata", "customers").held()
                    == LockState.Held.HELD; i++) {
                Thread.sleep(100); // the backend exits a moment after the client closes
            }
            assertThat(PostgresAdvisoryLock.observe(status, "itersnap_metadata", "customers").held())
                    .isEqualTo(LockState.Held.FREE);
        }
    }
}
