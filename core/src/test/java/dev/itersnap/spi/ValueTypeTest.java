package dev.itersnap.spi;

import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.sql.Types;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ValueTypeTest {
    @Test
    void integerSequencesCompareAsNumbersNotText() {
        assertThat(ValueType.INTEGER.compare(9L, 10L)).isNegative();
        assertThat(ValueType.INTEGER.compare(ValueType.INTEGER.coerce("10"), ValueType.INTEGER.coerce("9")))
                .isPositive();
    }

    @Test
    void stringSequencesCompareByCodePoint() {
        assertThat(ValueType.STRING.compare("10", "9")).isNegative();
        assertThat(ValueType.STRING.compare("B", "a")).isNegative();
        // a supplementary character sorts after every BMP character, as in UTF-8 byte order
        assertThat(ValueType.STRING.compare("\uD83D\uDE00", "\uFFFF")).isPositive();
        assertThat(ValueType.STRING.compare("ab", "abc")).isNegative();
    }

    @Test
    void canonicalTextRoundTrips() {
        for (ValueType t : new ValueType[] {ValueType.DATE, ValueType.TIMESTAMP, ValueType.TIMESTAMP_TZ,
                ValueType.INTEGER, ValueType.DECIMAL, ValueType.STRING}) {
            Object v = switch (t) {
                case DATE -> LocalDate.of(2024, 2, 29);
                case TIMESTAMP -> LocalDateTime.of(2024, 1, 2, 3, 4, 5, 600_000_000);
                case TIMESTAMP_TZ -> OffsetDateTime.of(2024, 1, 2, 3, 4, 5, 0, ZoneOffset.ofHours(2));
                case INTEGER -> 42L;
                case DECIMAL -> new BigDecimal("12.500");
                default -> "O'Brien";
            };
            Object normalized = t.normalize(v);
            assertThat(t.coerce(t.format(normalized))).as(t.name()).isEqualTo(normalized);
        }
    }

    @Test
    void equalValuesAreEqualAfterNormalizing() {
        assertThat(ValueType.DECIMAL.normalize(new BigDecimal("1.50")))
                .isEqualTo(ValueType.DECIMAL.normalize(new BigDecimal("1.5")));
        assertThat(ValueType.TIMESTAMP_TZ.normalize(OffsetDateTime.of(2024, 1, 1, 2, 0, 0, 0, ZoneOffset.ofHours(2))))
                .isEqualTo(ValueType.TIMESTAMP_TZ.normalize(OffsetDateTime.of(2024, 1, 1, 0, 0, 0, 0, ZoneOffset.UTC)));
    }

    @Test
    void badTextNamesTheType() {
        assertThatThrownBy(() -> ValueType.DATE.coerce("yesterday")).hasMessageContaining("date");
        assertThatThrownBy(() -> ValueType.INTEGER.coerce("1.5")).hasMessageContaining("integer");
    }

    @Test
    void classifiesJdbcTypes() {
        assertThat(ValueType.of(Types.DATE, "DATE")).isEqualTo(ValueType.DATE);
        assertThat(ValueType.of(Types.BIGINT, "BIGINT")).isEqualTo(ValueType.INTEGER);
        assertThat(ValueType.of(Types.OTHER, "timestamptz")).isEqualTo(ValueType.TIMESTAMP_TZ);
        assertThat(ValueType.of(Types.DOUBLE, "DOUBLE PRECISION").orderable()).isFalse();
    }

    @Test
    void deletionTimesConvertBetweenTemporalTypes() {
        assertThat(ValueType.TIMESTAMP.convertTemporal(ValueType.DATE, LocalDate.of(2024, 1, 2)))
                .isEqualTo(LocalDateTime.of(2024, 1, 2, 0, 0));
        assertThat(ValueType.DATE.convertTemporal(ValueType.TIMESTAMP, LocalDateTime.of(2024, 1, 2, 10, 0)))
                .isEqualTo(LocalDate.of(2024, 1, 2));
        assertThat(ValueType.INTEGER.convertTemporal(ValueType.DATE, LocalDate.of(2024, 1, 2))).isNull();
    }
}
