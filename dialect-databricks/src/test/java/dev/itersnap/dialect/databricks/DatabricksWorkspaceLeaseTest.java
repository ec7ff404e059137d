package dev.itersnap.dialect.databricks;

import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.ItersnapException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Locale;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * DeltaLease itself over the Databricks JDBC driver on a real workspace: the driver's update count of MERGE and
 * UPDATE is what the lease reads (num_affected_rows). Runs only when ITERSNAP_DATABRICKS_URL and
 * ITERSNAP_DATABRICKS_CATALOG are set; works in a schema of its own, dropped afterwards.
 */
@EnabledIfEnvironmentVariable(named = DatabricksWorkspace.URL, matches = ".+")
@EnabledIfEnvironmentVariable(named = DatabricksWorkspace.CATALOG, matches = ".+")
class DatabricksWorkspaceLeaseTest {
    private static final DatabricksWorkspace WORKSPACE = new DatabricksWorkspace();
    private static final String SCHEMA = "itersnap_lease_" + UUID.randomUUID().toString().substring(0, 8);
    private static DataSource ds;
    private static LeaseSql sql;

    @BeforeAll
    static void schema() {
        ds = WORKSPACE.dataSource(null);
        sql = new LeaseSql(LeaseFixture.BACKTICKS, LeaseFixture.model("customers", SCHEMA,
                x -> x.toLowerCase(Locale.ROOT)), LeaseSql.DELTA);
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
        try (DeltaLease held = DeltaLease.acquire(ds, sql, Duration.ZERO, () -> "held by the test", ttl,
                DeltaLease.newOwner())) {
            assertThat(held.fence()).isEqualTo(1);
            assertThatThrownBy(() -> DeltaLease.acquire(ds, sql, Duration.ofSeconds(3), () -> "x", ttl,
                    DeltaLease.newOwner())).isInstanceOfSatisfying(ItersnapException.class,
                            e -> assertThat(e.code()).isEqualTo(ErrorCode.LOCK_TIMEOUT))
                    .hasMessageContaining("lease owner " + held.owner());
            try (Connection c = ds.getConnection()) {
                long before = DeltaLease.read(c, sql).expiresMillis();
                var renew = sql.renew(held.owner(), 1, before + 5_000);
                try (var ps = c.prepareStatement(renew.sql())) {
                    ps.setLong(1, (Long) renew.binds().get(0));
                    ps.setString(2, (String) renew.binds().get(1));
                    ps.setString(3, (String) renew.binds().get(2));
                    ps.setLong(4, (Long) renew.binds().get(3));
                    assertThat(ps.executeUpdate()).as("UPDATE count over JDBC").isEqualTo(1);
                }
                assertThat(DeltaLease.read(c, sql).expiresMillis()).isEqualTo(before + 5_000);
            }
            held.verifyHeld();
        }
        try (Connection c = ds.getConnection()) {
            assertThat(DeltaLease.read(c, sql)).isEqualTo(new DeltaLease.Row(null, null, 1));
        }
        try (DeltaLease next = DeltaLease.acquire(ds, sql, Duration.ZERO, () -> "", ttl, DeltaLease.newOwner())) {
            assertThat(next.fence()).isEqualTo(2);
        }
    }
}
