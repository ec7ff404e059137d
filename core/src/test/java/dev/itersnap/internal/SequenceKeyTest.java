package dev.itersnap.internal;

import dev.itersnap.spi.SourceColumn;
import dev.itersnap.spi.ValueType;

import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.sql.Types;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The key of a sequence_by list: its text order is the tuples' order, and it reads back as the values. */
class SequenceKeyTest {
    private static final SequenceKey KEY = SequenceKey.of(List.of(
            new SourceColumn("s", Types.VARCHAR, "VARCHAR", 20, 0),
            new SourceColumn("i", Types.BIGINT, "BIGINT", 19, 0),
            new SourceColumn("d", Types.DECIMAL, "DECIMAL", 12, 3),
            new SourceColumn("dt", Types.DATE, "DATE", 10, 0),
            new SourceColumn("t", Types.TIMESTAMP, "TIMESTAMP", 26, 6),
            new SourceColumn("tz", Types.TIMESTAMP_WITH_TIMEZONE, "TIMESTAMP WITH TIME ZONE", 32, 6)));

    private static final List<String> STRINGS = List.of("", "a", "a\u0000", "a\u0001", "a\u0001b", "a\u0002", "ab",
            "b", "\u00e9", "\ud83d\ude00", "a,b", "it's", "(x)");
    private static final List<Long> LONGS = List.of(Long.MIN_VALUE, -10L, -9L, -1L, 0L, 1L, 9L, 10L, Long.MAX_VALUE);

    private static List<Object> random(SplittableRandom r) {
        BigDecimal d = BigDecimal.valueOf(r.nextLong(-999_999_999_999L, 999_999_999_999L), 3);
        LocalDateTime t = LocalDateTime.of(1960, 1, 1, 0, 0).plusNanos(r.nextLong(0, 4_000_000_000_000_000L) * 1000);
        return List.of(STRINGS.get(r.nextInt(STRINGS.size())), LONGS.get(r.nextInt(LONGS.size())),
                r.nextInt(4) == 0 ? BigDecimal.ZERO : d, LocalDate.ofEpochDay(r.nextLong(-100_000, 100_000)), t,
                t.atOffset(ZoneOffset.ofHours(r.nextInt(-12, 13))));
    }

    @Test
    void keysSortLikeTheTuplesAndReadBackAsTheValues() {
        SplittableRandom r = new SplittableRandom(42);
        List<List<Object>> tuples = new ArrayList<>();
        for (int i = 0; i < 3_000; i++) {
            tuples.add(random(r));
        }
        for (List<Object> a : tuples) {
            String key = KEY.encode(a);
            List<Object> back = KEY.decode(key);
            assertThat(KEY.compare(back, a)).as("%s", a).isZero();
            assertThat(KEY.parse(KEY.text(a))).isEqualTo(back);
            assertThat(KEY.parse(a)).isEqualTo(back);
        }
        for (int i = 0; i + 1 < tuples.size(); i++) {
            List<Object> a = tuples.get(i);
            List<Object> b = tuples.get(i + 1);
            int byKey = Integer.signum(ValueType.STRING.compare(KEY.encode(a), KEY.encode(b)));
            assertThat(byKey).as("%s vs %s", a, b).isEqualTo(Integer.signum(KEY.compare(a, b)));
        }
    }

    @Test
    void tiesOnTheFirstColumnAreBrokenByTheNextInItsOwnType() {
        SequenceKey key = SequenceKey.of(List.of(new SourceColumn("file_date", Types.DATE, "DATE", 10, 0),
                new SourceColumn("file_no", Types.INTEGER, "INTEGER", 10, 0)));
        LocalDate day = LocalDate.of(2024, 1, 5);
        String nine = key.encode(List.of(day, 9L));
        String ten = key.encode(List.of(day, 10L));
        String nextDay = key.encode(List.of(day.plusDays(1), 1L));
        assertThat(ValueType.STRING.compare(nine, ten)).isNegative(); // 9 < 10 as numbers, not as text
        assertThat(ValueType.STRING.compare(ten, nextDay)).isNegative();
        assertThat(key.text(List.of(day, 10L))).isEqualTo("(2024-01-05, 10)");
        assertThat(key.parse("2024-01-05,10")).isEqualTo(List.of(day, 10L));
        assertThat(key.parse(" ( 2024-01-05 , 10 ) ")).isEqualTo(List.of(day, 10L));
        assertThat(ValueType.text(List.of(day, 10L))).isEqualTo(key.text(List.of(day, 10L)));
    }

    @Test
    void stringsAreQuotedInTheReadableFormAndReadBackWhateverTheyHold() {
        SequenceKey key = SequenceKey.of(List.of(new SourceColumn("f", Types.VARCHAR, "VARCHAR", 20, 0),
                new SourceColumn("n", Types.INTEGER, "INTEGER", 10, 0)));
        for (String s : STRINGS) {
            List<Object> tuple = List.of(s, 3L);
            assertThat(key.parse(key.text(tuple))).as(s).isEqualTo(tuple);
        }
        assertThat(key.text(List.of("it's, here", 3L))).isEqualTo("('it''s, here', 3)");
    }

    @Test
    void aValueThatIsNoComponentOfTheListIsRefusedNamingTheColumn() {
        assertThatThrownBy(() -> KEY.parse("(a, 1)")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("needs 6");
        SequenceKey key = SequenceKey.of(List.of(new SourceColumn("file_date", Types.DATE, "DATE", 10, 0),
                new SourceColumn("file_no", Types.INTEGER, "INTEGER", 10, 0)));
        assertThatThrownBy(() -> key.parse("(2024-01-05, x)")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("file_no");
        assertThatThrownBy(() -> key.parse("(2024-13-05, 1)")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("file_date");
        assertThatThrownBy(() -> key.decode("p12")).isInstanceOf(IllegalArgumentException.class);
        SequenceKey decimal = SequenceKey.of(List.of(new SourceColumn("d", Types.DECIMAL, "DECIMAL", 10, 2)));
        assertThatThrownBy(() -> decimal.encode(List.of(new BigDecimal("1.005"))))
                .isInstanceOf(ArithmeticException.class);
        SequenceKey ts = SequenceKey.of(List.of(new SourceColumn("t", Types.TIMESTAMP, "TIMESTAMP", 26, 6)));
        assertThatThrownBy(() -> ts.encode(List.of(LocalDateTime.of(2024, 1, 1, 0, 0, 0, 1))))
                .hasMessageContaining("microsecond");
        assertThat(KEY.encode(java.util.Arrays.asList(null, 1L, BigDecimal.ONE, LocalDate.EPOCH,
                LocalDateTime.MIN.withYear(2000), OffsetDateTime.MIN.withYear(2000)))).isNull();
    }

    @Test
    void aColumnTypeAListCannotOrderIsRefusedNamingTheColumn() {
        assertThatThrownBy(() -> SequenceKey.of(List.of(new SourceColumn("x", Types.DOUBLE, "DOUBLE", 17, 0))))
                .hasMessageContaining("'x'");
        assertThatThrownBy(() -> SequenceKey.of(List.of(new SourceColumn("x", Types.NUMERIC, "NUMERIC", 0, 0))))
                .hasMessageContaining("precision");
        assertThatThrownBy(() -> SequenceKey.of(List.of(new SourceColumn("x", Types.NUMERIC, "NUMERIC", 30, 2))))
                .hasMessageContaining("at most 18");
        assertThatThrownBy(() -> SequenceKey.of(List.of(new SourceColumn("x", Types.TIMESTAMP, "TIMESTAMP", 29, 9))))
                .hasMessageContaining("TIMESTAMP(6)");
    }
}
