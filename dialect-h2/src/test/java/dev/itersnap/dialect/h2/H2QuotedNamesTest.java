package dev.itersnap.dialect.h2;

import dev.itersnap.IterativeSnapshot;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.RunResult;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Names as Unity Catalog allows them in backticks (hyphens, non-ASCII letters) for the target's schema and table and
 * for the metadata schema: two runs on H2 (which quotes every part, as each dialect does), the second finding the
 * history it owns by the owner's comment on the table, which names the metadata schema, here catalog-qualified as on
 * Unity Catalog (the comment used to be read only up to the first period). (H2 folds the names to upper
 * case, as it does unquoted identifiers.)
 */
class H2QuotedNamesTest {
    @Test
    void targetAndMetadataSchemaNamesInBackticksWithHyphensAndNonAsciiLetters() throws SQLException {
        JdbcDataSource ds = new JdbcDataSource();
        ds.setURL("jdbc:h2:mem:quoted_names;DB_CLOSE_DELAY=-1");
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE raw_customers (customer_id INT, tier VARCHAR(20), updated_at TIMESTAMP, "
                    + "file_date DATE)");
            s.execute("INSERT INTO raw_customers VALUES (1, 'silver', TIMESTAMP '2024-01-01 08:00:00', "
                    + "DATE '2024-01-01')");
        }
        ModelSettings model = ModelSettings.builder("customers").target("`sales-eu`.`kunden_historie-ü`")
                .metadataSchema("quoted_names.`itersnap-méta`").source("SELECT * FROM raw_customers").uniqueKey("customer_id")
                .updatedAt("updated_at").sequenceBy("file_date").build();
        assertThat(model.target().parts()).containsExactly("sales-eu", "kunden_historie-ü");
        assertThat(model.metadataSchema()).isEqualTo("quoted_names.itersnap-méta");
        IterativeSnapshot snapshots = IterativeSnapshot.builder().dataSource(ds).build();

        assertThat(snapshots.run(model).batchesApplied()).isEqualTo(1);
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute("INSERT INTO raw_customers VALUES (1, 'gold', TIMESTAMP '2024-01-02 08:00:00', "
                    + "DATE '2024-01-02')");
        }
        RunResult second = snapshots.run(model);

        assertThat(second.batchesApplied()).isEqualTo(1);
        try (Connection c = ds.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT tier, dbt_valid_to FROM \"SALES-EU\".\"KUNDEN_HISTORIE-Ü\" "
                     + "ORDER BY dbt_valid_from")) {
            List<String> rows = new ArrayList<>();
            while (rs.next()) {
                rows.add(rs.getString(1) + " " + (rs.getObject(2) == null ? "current" : "closed"));
            }
            assertThat(rows).containsExactly("silver closed", "gold current");
            assertThat(s.executeQuery("SELECT COUNT(*) FROM \"ITERSNAP-MÉTA\".itersnap_ledger")).satisfies(r -> {
                r.next();
                assertThat(r.getInt(1)).isEqualTo(2);
            });
        }
    }
}
