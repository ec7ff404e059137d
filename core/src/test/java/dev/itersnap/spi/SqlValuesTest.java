package dev.itersnap.spi;

import org.junit.jupiter.api.Test;

import java.time.LocalDateTime;

import static org.assertj.core.api.Assertions.assertThat;

/** The text forms a driver may answer a TIMESTAMP with (the Databricks driver 3.4.x answers getObject(i, LocalDateTime.class) with text). */
class SqlValuesTest {
    @Test
    void timestampTextIsReadWithoutAnyTimeZone() {
        assertThat(SqlValues.parseLocalDateTime("2024-03-10 02:30:00.123456"))
                .isEqualTo(LocalDateTime.of(2024, 3, 10, 2, 30, 0, 123_456_000));
        assertThat(SqlValues.parseLocalDateTime("2024-03-10T02:30")).isEqualTo(LocalDateTime.of(2024, 3, 10, 2, 30));
        assertThat(SqlValues.parseLocalDateTime(" 2024-03-10 02:30:05 ")).isEqualTo(LocalDateTime.of(2024, 3, 10, 2,
                30, 5));
    }
}
