package dev.itersnap.dialect.postgres;

import dev.itersnap.core.HardDeletes;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.internal.ResolvedModel;
import dev.itersnap.spi.SourceColumn;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Discovery of a plain table source: through a loose index scan when the sequence leads a usable B-tree index, by
 * {@code GROUP BY} otherwise; the same sequences and row counts either way, a NULL sequence included.
 */
class PostgresDiscoveryTest {
    private static final PostgresServer SERVER = PostgresServer.get();
    private static DataSource db;
    private final PostgresDialect dialect = new PostgresDialect();

    @BeforeAll
    static void createRaw() throws SQLException {
        db = SERVER.newDatabase();
        exec("CREATE TABLE raw (id INT, upd INT, batch VARCHAR(10))");
        exec("INSERT INTO raw SELECT g, g, CASE WHEN g % 7 = 0 THEN NULL WHEN g % 5 = 0 THEN 'b' || (g % 3) "
                + "WHEN g % 2 = 0 THEN 'B' || (g % 4) ELSE 'a' END FROM generate_series(1, 2000) g");
    }

    @AfterAll
    static void drop() {
        SERVER.drop(db);
    }

    private static void exec(String sql) throws SQLException {
        try (Connection c = db.getConnection(); Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }

    private static List<String> read(String sql) throws SQLException {
        List<String> out = new ArrayList<>();
        try (Connection c = db.getConnection(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            while (rs.next()) {
                StringBuilder row = new StringBuilder(String.valueOf(rs.getString(1)));
                for (int i = 2; i <= rs.getMetaData().getColumnCount(); i++) {
                    row.append('|').append(rs.getString(i));
                }
                out.add(row.toString());
            }
        }
        return out;
    }

    private ResolvedModel model(String source) {
        ModelSettings s = ModelSettings.builder("customers").target("customers").source(source).uniqueKey("id")
                .updatedAt("upd").sequenceBy("batch").hardDeletes(HardDeletes.IGNORE).build();
        SourceColumn id = new SourceColumn("id", Types.INTEGER, "int4", 10, 0);
        SourceColumn upd = new SourceColumn("upd", Types.INTEGER, "int4", 10, 0);
        SourceColumn seq = new SourceColumn("batch", Types.VARCHAR, "varchar", 10, 0);
        return ResolvedModel.builder(s, x -> x.toLowerCase(Locale.ROOT)).sourceColumns(List.of(id, upd, seq))
                .keys(List.of("id")).updatedAt("upd").sequenceBy("batch").build();
    }

    private void assertSameAsDistinct(String source, boolean throughIndex) throws SQLException {
        String sql = dev.itersnap.internal.sql.SqlSteps.of(dialect).discoverSequences(model(source)).sql();
        List<String> expected = read("SELECT DISTINCT batch FROM raw");
        assertThat(expected).anyMatch(r -> r.startsWith("null")).hasSizeGreaterThan(5);
        assertThat(read(sql)).containsExactlyInAnyOrderElementsOf(expected);
        String plan = String.join("\n", read("EXPLAIN (ANALYZE, COSTS OFF) " + sql));
        if (throughIndex) {
            assertThat(plan).doesNotContainPattern("Seq Scan on raw s \\(actual[^\\n]*rows=[1-9]");
        } else {
            assertThat(plan).contains("never executed");
        }
    }

    @Test
    void everySequenceOnceWithOrWithoutAUsableIndex() throws SQLException {
        // no index: SELECT DISTINCT
        assertSameAsDistinct("SELECT * FROM raw", false);
        // an index in another collation than the column's, or a partial one, does not serve the recursion
        exec("CREATE INDEX raw_c ON raw (batch COLLATE \"C\")");
        exec("CREATE INDEX raw_partial ON raw (batch) WHERE id > 0");
        assertSameAsDistinct("SELECT * FROM raw", false);
        // the sequence leading a B-tree index: one probe per sequence
        exec("CREATE INDEX raw_batch ON raw (batch, id)");
        assertSameAsDistinct("SELECT * FROM raw", true);
        assertSameAsDistinct("select * from public.\"raw\"", true);
        // any other source reads the query as a derived table
        assertThat(dev.itersnap.internal.sql.SqlSteps.of(dialect).discoverSequences(model("SELECT * FROM raw WHERE id > 0")).sql())
                .isEqualTo("SELECT DISTINCT s.\"batch\" FROM (SELECT * FROM raw WHERE id > 0) s");
    }
}
