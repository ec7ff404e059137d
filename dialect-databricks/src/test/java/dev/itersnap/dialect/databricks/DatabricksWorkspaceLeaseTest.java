package dev.itersnap.dialect.databricks;

import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.spi.lease.LeaseLock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * LeaseLock itself over the Databricks JDBC driver on a real workspace: the driver's update count of MERGE and
 * UPDATE is what the lease reads (num_affected_rows). Runs only when ITERSNAP_DATABRICKS_URL and
 * ITERSNAP_DATABRICKS_CATALOG are set; works in a schema of its own, dropped afterwards.
 */
@EnabledIfEnvironmentVariable(named = DatabricksWorkspace.URL, matches = ".+")
@EnabledIfEnvironmentVariable(named = DatabricksWorkspace.CATALOG, matches = ".+")
class DatabricksWorkspaceLeaseTest {
    private static final DatabricksWorkspace WORKSPACE = new DatabricksWorkspace();
    private static final String SCHEMA = "itersnap_lease_" + UUID.randomUUID().toString().substring(0, 8);
    private static DataSource ds;
    private static LeaseLock.Statements sql;

    @BeforeAll
    static void schema() {
        ds = WORKSPACE.dataSource(null);
        sql = LeaseFixture.deltaLease("customers", SCHEMA);
    }

    @AfterAll
    static void drop() throws SQLException {
        try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
            st.execute("DROP SCHEMA IF EXISTS " + WORKSPACE.qualified(SCHEMA) + " CASCADE");
        }
    }

    @Test
    void theLeaseIsExclusiveRenewsAndIsReleasedOverJdbc() throws SQLException {
        Duration ttl = Duration.ofSeconds(30);
        try (LeaseLock held = LeaseLock.acquire(ds, sql, Duration.ZERO, () -> "held by the test", ttl,
                LeaseLock.newOwner())) {
            assertThat(held.fence()).isEqualTo(1);
            assertThatThrownBy(() -> LeaseLock.acquire(ds, sql, Duration.ofSeconds(3), () -> "x", ttl,
                    LeaseLock.newOwner())).isInstanceOfSatisfying(ItersnapException.class,
                            e -> assertThat(e.code()).isEqualTo(ErrorCode.LOCK_TIMEOUT))
                    .hasMessageContaining("lease owner " + held.owner());
            try (Connection c = ds.getConnection()) {
                long before = LeaseLock.read(c, sql).expiresMillis();
                var renew = sql.renew(held.owner(), 1, before + 5_000);
                try (var ps = renew.prepare(c)) {
                    assertThat(ps.executeUpdate()).as("UPDATE count over JDBC").isEqualTo(1);
                }
                assertThat(LeaseLock.read(c, sql).expiresMillis()).isEqualTo(before + 5_000);
            }
            held.verifyHeld();
        }
        try (Connection c = ds.getConnection()) {
            assertThat(LeaseLock.read(c, sql)).isEqualTo(new LeaseLock.Row(null, null, 1));
        }
        try (LeaseLock next = LeaseLock.acquire(ds, sql, Duration.ZERO, () -> "", ttl, LeaseLock.newOwner())) {
            assertThat(next.fence()).isEqualTo(2);
        }
    }
}
