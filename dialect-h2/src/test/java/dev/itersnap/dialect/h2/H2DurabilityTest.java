package dev.itersnap.dialect.h2;

import dev.itersnap.IterativeSnapshot;
import dev.itersnap.core.Check;
import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.core.ModelSettings;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Decision 0007: a run on an H2 file database commits durably ({@code WRITE_DELAY} 0), set by the run when the user
 * may, and refused before anything is written when not.
 */
class H2DurabilityTest {
    @TempDir
    Path dir;
    private String url;
    private final ModelSettings model = ModelSettings.builder("customers").target("customers_history")
            .source("SELECT * FROM raw_customers").uniqueKey("customer_id").updatedAt("updated_at")
            .sequenceBy("file_date").build();

    @BeforeEach
    void database() throws SQLException {
        url = "jdbc:h2:" + dir.resolve("warehouse").toAbsolutePath();
        try (Connection c = java.sql.DriverManager.getConnection(url); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE raw_customers (customer_id INT, tier VARCHAR(20), updated_at TIMESTAMP, "
                    + "file_date DATE)");
            s.execute("INSERT INTO raw_customers VALUES (1, 'silver', TIMESTAMP '2024-01-01 08:00:00', "
                    + "DATE '2024-01-01')");
            s.execute("CREATE USER analyst PASSWORD 'x'");
        }
    }

    @Test
    void aRunSetsTheWriteDelayOfTheOpenDatabaseToZero() throws SQLException {
        try (Connection held = java.sql.DriverManager.getConnection(url)) { // keeps the database open
            assertThat(H2Durability.writeDelay(held)).as("H2's default").isEqualTo(500);
            assertThat(new H2Dialect().environmentChecks(held)).singleElement().satisfies(c -> {
                assertThat(c.passed()).isTrue();
                assertThat(c.detail()).contains("WRITE_DELAY 500 ms; each run sets it to 0");
            });

            IterativeSnapshot.builder().dataSource(dataSource("", "")).build().run(model);

            assertThat(H2Durability.writeDelay(held)).isZero();
            assertThat(new H2Dialect().environmentChecks(held)).extracting(Check::passed).containsExactly(true);
        }
    }

    /**
     * H2 2.5.252 can lose a commit to a kill when the file reuses space (docs/dev/h2-kill9-repro.md): {@code doctor}'s
     * line says so on H2's default, and not with {@code ;REUSE_SPACE=FALSE} or in memory.
     */
    @Test
    void doctorTellsWhetherTheFileReusesSpace() throws SQLException {
        try (Connection c = java.sql.DriverManager.getConnection(url)) {
            assertThat(H2Durability.reusesSpace(c)).isTrue();
            assertThat(new H2Dialect().environmentChecks(c)).singleElement().satisfies(check -> {
                assertThat(check.passed()).isTrue();
                assertThat(check.detail()).contains("; REUSE_SPACE TRUE: H2 (2.2.220 to 2.5.252 at least) can reopen a "
                        + "file whose process was killed right after a commit without that commit",
                        ";REUSE_SPACE=FALSE in the URL");
            });
        }
        try (Connection c = java.sql.DriverManager.getConnection(url + ";REUSE_SPACE=FALSE")) {
            assertThat(H2Durability.reusesSpace(c)).isFalse();
            assertThat(new H2Dialect().environmentChecks(c)).singleElement()
                    .satisfies(check -> assertThat(check.detail()).doesNotContain("REUSE_SPACE"));
        }
        try (Connection c = java.sql.DriverManager.getConnection("jdbc:h2:mem:durability")) {
            assertThat(H2Durability.reusesSpace(c)).isFalse();
        }
    }

    /**
     * As a user without admin rights (a run on H2 needs them for its metadata DDL already, so this is the dialect's
     * own guard), the setting cannot be made: refused naming it and the ways out, and {@code doctor} says so.
     */
    @Test
    void aUserWhoMayNotSetItIsRefusedNamingTheSetting() throws SQLException {
        try (Connection c = dataSource("analyst", "x").getConnection()) {
            assertThat(new H2Dialect().environmentChecks(c)).singleElement().satisfies(check -> {
                assertThat(check.passed()).isFalse();
                assertThat(check.detail()).contains("WRITE_DELAY 500 ms", ";WRITE_DELAY=0");
            });
            assertThatThrownBy(() -> H2Durability.requireDurableCommits(c, "customers"))
                    .isInstanceOfSatisfying(ItersnapException.class, e -> {
                        assertThat(e.code()).isEqualTo(ErrorCode.DATABASE_ERROR);
                        assertThat(e.getMessage()).contains("model 'customers': H2's WRITE_DELAY is 500 ms",
                                "admin rights", "Nothing was written", "jdbc:h2:/path/db;WRITE_DELAY=0");
                    });
            assertThat(H2Durability.writeDelay(c)).isEqualTo(500);
        }
    }

    private JdbcDataSource dataSource(String user, String password) {
        JdbcDataSource ds = new JdbcDataSource();
        ds.setURL(url);
        ds.setUser(user);
        ds.setPassword(password);
        return ds;
    }
}
