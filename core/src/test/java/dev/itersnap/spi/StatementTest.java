package dev.itersnap.spi;

import org.junit.jupiter.api.Test;

import java.time.LocalDate;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Statements as values: text and values appended together, rendered with either kind of marker. */
class StatementTest {
    private static final LocalDate DAY = LocalDate.of(2024, 3, 1);

    @Test
    void valuesFollowTheirMarkersInOrder() {
        Statement s = Statement.builder("merge batch").sql("UPDATE t SET a = ").bind(1).sql(" WHERE d = ").bind(DAY)
                .sql(" AND n IS ").bind(null).build();
        assertThat(s.sql()).isEqualTo("UPDATE t SET a = ? WHERE d = ? AND n IS ?");
        assertThat(s.values()).containsExactly(1, DAY, null);
        assertThat(s.step()).isEqualTo("merge batch");
    }

    @Test
    void namedMarkersAreNumberedFromOneWithoutLookingAtTheText() {
        Statement s = Statement.builder("x").sql("SELECT '?', ").bind("a").sql(" -- ?\n, ").bind("b").build();
        assertThat(s.sql(NamedMarkers::marker)).isEqualTo("SELECT '?', :_p1 -- ?\n, :_p2");
        assertThat(NamedMarkers.name(2)).isEqualTo("_p2");
    }

    @Test
    void aStatementEmbedsAnotherWithItsValues() {
        Statement inner = Statement.builder("q").sql("SELECT * FROM t WHERE a = ").bind(7).build();
        Statement outer = Statement.builder("view").sql("CREATE VIEW v AS ").sql(inner).sql(" AND b = ").bind(8)
                .build();
        assertThat(outer.sql()).isEqualTo("CREATE VIEW v AS SELECT * FROM t WHERE a = ? AND b = ?");
        assertThat(outer.values()).containsExactly(7, 8);
        assertThat(outer.inStep("other").step()).isEqualTo("other");
        assertThat(outer.inStep("other").values()).isEqualTo(outer.values());
    }

    @Test
    void aStatementIsAValue() {
        Statement a = Statement.builder("s").sql("SELECT ").bind(1).build();
        assertThat(a).isEqualTo(Statement.builder("s").sql("SELECT ").bind(1).build())
                .isNotEqualTo(Statement.builder("s").sql("SELECT ").bind(2).build())
                .hasSameHashCodeAs(Statement.builder("s").sql("SELECT ").bind(1).build());
        assertThat(Statement.of("s", "SELECT 1").values()).isEmpty();
        List<Object> values = Arrays.asList(1, null);
        assertThat(Statement.builder("s").sql("").bind(values.get(0)).bind(values.get(1)).build().values())
                .containsExactly(1, null);
    }

    @Test
    void capabilitiesAreSwitchedOffOneByOne() {
        Capabilities delta = Capabilities.STANDARD.transactionalDml(false).indexes(false);
        assertThat(delta.transactionalDml()).isFalse();
        assertThat(delta.indexes()).isFalse();
        assertThat(delta.primaryKeys()).isTrue();
        assertThat(Capabilities.STANDARD.transactionalDml()).isTrue();
        assertThat(Capabilities.STANDARD.createOrReplaceTable()).isFalse();
    }
}
