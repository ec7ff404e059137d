package dev.itersnap.internal;

import dev.itersnap.spi.SourceColumn;
import org.junit.jupiter.api.Test;

import java.sql.Types;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The history, its archive and its pending table described by one statement are split at the marker columns between
 * them; where a table has a column named like a marker, the split is refused (the run describes them one by one).
 */
class DescribeTogetherTest {
    private static List<SourceColumn> columns(String... names) {
        return Arrays.stream(names).map(n -> new SourceColumn(n, Types.INTEGER, "INTEGER", 10, 0)).toList();
    }

    private static List<List<String>> names(List<List<SourceColumn>> split) {
        return split.stream().map(t -> t.stream().map(SourceColumn::name).toList()).toList();
    }

    @Test
    void theColumnsOfEachTableAreThoseBetweenTheMarkers() {
        assertThat(names(ModelResolver.split(columns("id", "status", "ITERSNAP_TABLE_1", "id", "itersnap_del",
                "itersnap_table_2", "id", "itersnap_deltime"), 3))).containsExactly(List.of("id", "status"),
                List.of("id", "itersnap_del"), List.of("id", "itersnap_deltime"));
        assertThat(names(ModelResolver.split(columns("id", "itersnap_table_1", "id"), 2)))
                .containsExactly(List.of("id"), List.of("id"));
    }

    @Test
    void aTableWithAColumnNamedLikeAMarkerIsNotSplit() {
        // the history has a column named like the first marker: which one is the marker cannot be told
        assertThat(ModelResolver.split(columns("id", "itersnap_table_1", "itersnap_table_1", "id"), 2)).isNull();
        // the archive has one named like the first marker, after the real one
        assertThat(ModelResolver.split(columns("id", "itersnap_table_1", "itersnap_table_1", "itersnap_table_2",
                "id"), 3)).isNull();
        // the history has one named like the second: it stands before the first marker
        assertThat(ModelResolver.split(columns("id", "itersnap_table_2", "itersnap_table_1", "id", "id"), 3))
                .isNull();
        // a marker missing
        assertThat(ModelResolver.split(columns("id", "id"), 2)).isNull();
    }
}
