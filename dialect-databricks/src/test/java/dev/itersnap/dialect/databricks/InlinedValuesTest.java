package dev.itersnap.dialect.databricks;

import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.sql.SQLException;
import java.time.LocalDate;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Values inlined as literals for statements outside the statement window (the lease's, SparkConnection) and on a
 * session that binds no parameters (a Spark Connect server of open-source Delta 4.x): markers in quotes, backticks
 * and comments stay, every literal is one the parser reads the same whatever the session's settings.
 * No Spark session needed.
 */
class InlinedValuesTest {
    @Test
    void markersBecomeLiteralsOutsideQuotesAndComments() throws SQLException {
        String sql = "UPDATE `m`.`t:_p1` SET e = timestamp_millis(:_p1) WHERE m = :_p2 AND o = ':_p2' AND f = :_p3"
                + " -- :_p1\n AND g = :_p10 /* :_p2 */ AND h = :_p2x";
        List<Object> values = Arrays.asList(1700000000123L, "customers", 7L, null, null, null, null, null, null,
                new BigDecimal("1.50"));
        assertThat(SparkSql.inline(sql, values)).isEqualTo("UPDATE `m`.`t:_p1` SET e = timestamp_millis("
                + "1700000000123L) WHERE m = 'customers' AND o = ':_p2' AND f = 7L -- :_p1\n AND g = 1.50BD /* :_p2 */"
                + " AND h = :_p2x");
    }

    @Test
    void textWithQuotesBackslashesOrOtherCharactersGoesAsUtf8Bytes() throws SQLException {
        assertThat(SparkSql.literal("host-1/4242/0e9f6c1e-6bd4-4b4e-9d6e-3a0c2f0b7d11"))
                .isEqualTo("'host-1/4242/0e9f6c1e-6bd4-4b4e-9d6e-3a0c2f0b7d11'");
        assertThat(SparkSql.literal("it's \\ é")).isEqualTo("CAST(X'69742773205c20c3a9' AS STRING)");
        assertThat(SparkSql.literal(null)).isEqualTo("NULL");
        assertThat(SparkSql.literal(3)).isEqualTo("3");
        assertThat(SparkSql.literal(true)).isEqualTo("TRUE");
        assertThat(SparkSql.literal(LocalDate.parse("2024-01-02"))).isEqualTo("DATE'2024-01-02'");
        assertThat(SparkSql.literal(java.time.LocalDateTime.parse("2024-01-02T09:00:00.000001")))
                .isEqualTo("TIMESTAMP_NTZ'2024-01-02T09:00:00.000001'");
        // an instant as microseconds since the epoch: no time zone involved
        assertThat(SparkSql.literal(java.time.Instant.parse("1970-01-01T00:00:01.000002Z")))
                .isEqualTo("timestamp_micros(1000002L)");
        assertThat(SparkSql.literal(Long.MIN_VALUE)).isEqualTo("(-9223372036854775807L - 1L)");
        assertThat(SparkSql.literal(Integer.MIN_VALUE)).isEqualTo("(-2147483647 - 1)");
        assertThat(SparkSql.literal(0.1d)).isEqualTo("CAST('0.1' AS DOUBLE)");
        assertThat(SparkSql.literal(Double.NaN)).isEqualTo("CAST('NaN' AS DOUBLE)");
        assertThat(SparkSql.literal(1.5f)).isEqualTo("CAST('1.5' AS FLOAT)");
        assertThat(SparkSql.literal(new byte[] {0, (byte) 0xff, 0x1a})).isEqualTo("X'00ff1a'");
    }

    @Test
    void aMissingValueOrAnUnknownTypeIsRefused() {
        assertThatThrownBy(() -> SparkSql.inline("SELECT :_p2", List.of(1))).isInstanceOf(SQLException.class)
                .hasMessageContaining(":_p2 has no value");
        assertThatThrownBy(() -> SparkSql.literal(new java.util.ArrayList<>())).isInstanceOf(SQLException.class)
                .hasMessageContaining("java.util.ArrayList");
    }
}
