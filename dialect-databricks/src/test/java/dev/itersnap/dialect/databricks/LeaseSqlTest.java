package dev.itersnap.dialect.databricks;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Locale;

import static org.assertj.core.api.Assertions.assertThat;

/** Expected Spark SQL of the lease statements: backtick quoting, no values in the text, binds in order. */
class LeaseSqlTest {
    private final LeaseSql sql = new LeaseSql(LeaseFixture.BACKTICKS,
            LeaseFixture.model("customers", "itersnap_metadata", x -> x.toLowerCase(Locale.ROOT)), LeaseSql.DELTA);
    private static final String LEASE = "`itersnap_metadata`.`itersnap_lease`";

    @Test
    void tableIsADeltaTableWithoutConstraints() {
        assertThat(sql.createSchema().sql()).isEqualTo("CREATE SCHEMA IF NOT EXISTS `itersnap_metadata`");
        assertThat(sql.createTable().sql()).isEqualTo("CREATE TABLE IF NOT EXISTS " + LEASE + " (`model` STRING "
                + "NOT NULL, `owner` STRING, `expires_at` TIMESTAMP, `fence` BIGINT) USING DELTA");
    }

    @Test
    void acquireIsOneMergeThatTakesAMissingFreeExpiredOrOwnRowAndRaisesTheFence() {
        LeaseSql.Statement s = sql.acquire("host/42/u", 1_000L, 301_000L);
        assertThat(s.sql()).isEqualTo("MERGE INTO " + LEASE + " l USING (SELECT CAST(? AS STRING) AS `model`, "
                + "CAST(? AS STRING) AS `owner`, timestamp_millis(?) AS `now`, timestamp_millis(?) AS `expires_at`) r "
                + "ON l.`model` = r.`model` WHEN MATCHED AND (l.`owner` IS NULL OR l.`expires_at` IS NULL OR "
                + "l.`expires_at` < r.`now` OR l.`owner` = r.`owner`) THEN UPDATE SET `owner` = r.`owner`, "
                + "`expires_at` = r.`expires_at`, `fence` = COALESCE(l.`fence`, 0) + 1 WHEN NOT MATCHED THEN INSERT "
                + "(`model`, `owner`, `expires_at`, `fence`) VALUES (r.`model`, r.`owner`, r.`expires_at`, 1)");
        assertThat(s.binds()).containsExactly("customers", "host/42/u", 1_000L, 301_000L);
    }

    @Test
    void renewReleaseAndReadMatchOwnerAndFence() {
        assertThat(sql.renew("o", 7, 5L)).isEqualTo(new LeaseSql.Statement("UPDATE " + LEASE + " SET `expires_at` = "
                + "timestamp_millis(?) WHERE `model` = ? AND `owner` = ? AND `fence` = ?", List.of(5L, "customers", "o",
                7L)));
        assertThat(sql.release("o", 7)).isEqualTo(new LeaseSql.Statement("UPDATE " + LEASE + " SET `owner` = NULL, "
                + "`expires_at` = NULL WHERE `model` = ? AND `owner` = ? AND `fence` = ?", List.of("customers", "o",
                7L)));
        assertThat(sql.read()).isEqualTo(new LeaseSql.Statement("SELECT `owner`, unix_millis(`expires_at`), `fence` "
                + "FROM " + LEASE + " WHERE `model` = ?", List.of("customers")));
    }
}
