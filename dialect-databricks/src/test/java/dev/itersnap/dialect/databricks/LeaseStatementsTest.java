package dev.itersnap.dialect.databricks;

import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.spi.lease.LeaseLock;
import dev.itersnap.spi.Statement;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Expected Spark SQL of the lease statements: backtick quoting, no values in the text, values in order. */
class LeaseStatementsTest {
    private final LeaseLock.Statements sql = LeaseFixture.deltaLease("customers", "itersnap_metadata");
    private static final String LEASE = "`itersnap_metadata`.`itersnap_lease`";

    @Test
    void tableIsADeltaTableWithoutConstraints() {
        assertThat(sql.createTable()).map(Statement::sql).containsExactly(
                "CREATE SCHEMA IF NOT EXISTS `itersnap_metadata`",
                "CREATE TABLE IF NOT EXISTS " + LEASE + " (`model` STRING NOT NULL, `owner` STRING, `expires_at` "
                        + "TIMESTAMP, `fence` BIGINT) USING DELTA TBLPROPERTIES ("
                        + "'delta.enableDeletionVectors' = 'false', 'delta.enableRowTracking' = 'false')");
    }

    @Test
    void acquireIsOneMergeThatTakesAMissingFreeExpiredOrOwnRowAndRaisesTheFence() {
        Statement s = sql.acquire("host/42/u", 1_000L, 301_000L);
        assertThat(s.sql()).isEqualTo("MERGE INTO " + LEASE + " l USING (SELECT CAST(? AS STRING) AS `model`, "
                + "CAST(? AS STRING) AS `owner`, timestamp_millis(?) AS `now`, timestamp_millis(?) AS `expires_at`) r "
                + "ON l.`model` = r.`model` WHEN MATCHED AND (l.`owner` IS NULL OR l.`expires_at` IS NULL OR "
                + "l.`expires_at` < r.`now` OR l.`owner` = r.`owner`) THEN UPDATE SET `owner` = r.`owner`, "
                + "`expires_at` = r.`expires_at`, `fence` = COALESCE(l.`fence`, 0) + 1 WHEN NOT MATCHED THEN INSERT "
                + "(`model`, `owner`, `expires_at`, `fence`) VALUES (r.`model`, r.`owner`, r.`expires_at`, 1)");
        assertThat(s.values()).containsExactly("customers", "host/42/u", 1_000L, 301_000L);
    }

    @Test
    void renewReleaseAndReadMatchOwnerAndFence() {
        assertThat(sql.renew("o", 7, 5L).sql()).isEqualTo("UPDATE " + LEASE + " SET `expires_at` = "
                + "timestamp_millis(?) WHERE `model` = ? AND `owner` = ? AND `fence` = ?");
        assertThat(sql.renew("o", 7, 5L).values()).containsExactly(5L, "customers", "o", 7L);
        assertThat(sql.release("o", 7).sql()).isEqualTo("UPDATE " + LEASE + " SET `owner` = NULL, "
                + "`expires_at` = NULL WHERE `model` = ? AND `owner` = ? AND `fence` = ?");
        assertThat(sql.release("o", 7).values()).containsExactly("customers", "o", 7L);
        assertThat(sql.read().sql()).isEqualTo("SELECT `owner`, unix_millis(`expires_at`), `fence` "
                + "FROM " + LEASE + " WHERE `model` = ?");
        assertThat(sql.read().values()).containsExactly("customers");
    }

    @Test
    void ttlComesFromTheSystemPropertyAndIsValidated() {
        assertThat(LeaseLock.parseDuration("5m")).isEqualTo(Duration.ofMinutes(5));
        assertThat(LeaseLock.parseDuration("1h30m")).isEqualTo(Duration.ofMinutes(90));
        assertThat(LeaseLock.parseDuration("90s")).isEqualTo(Duration.ofSeconds(90));
        assertThat(LeaseLock.parseDuration("PT10M")).isEqualTo(Duration.ofMinutes(10));
        assertThat(LeaseLock.parseDuration("500ms")).isEqualTo(Duration.ofMillis(500));
        assertThat(LeaseLock.parseDuration("five")).isNull();
        String property = DatabricksDialect.TTL_PROPERTY;
        assertThat(LeaseLock.ttl(property)).isEqualTo(LeaseLock.DEFAULT_TTL);
        try {
            System.setProperty(property, "2m");
            assertThat(LeaseLock.ttl(property)).isEqualTo(Duration.ofMinutes(2));
            System.setProperty(property, "5s");
            assertThatThrownBy(() -> LeaseLock.ttl(property)).isInstanceOfSatisfying(ItersnapException.class,
                            e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_SETTING))
                    .hasMessage("system property itersnap.databricks.leaseTtl is '5s': expected a duration of at "
                            + "least 15s such as 5m, 90s or PT10M");
        } finally {
            System.clearProperty(property);
        }
    }
}
