package dev.itersnap.core;

import dev.itersnap.internal.sql.ModelTables;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Catalog, schema and table names as Unity Catalog allows them: plain, or in backticks with hyphens and non-ASCII. */
class QuotedNamesTest {
    private static ModelSettings.Builder model() {
        return ModelSettings.builder("customers").target("customers_history").source("SELECT * FROM raw")
                .uniqueKey("id").updatedAt("updated_at").sequenceBy("file_date");
    }

    @Test
    void partsInBackticksMayHoldHyphensAndNonAsciiLetters() {
        assertThat(TableName.parse("target", "`my-catalog`.`sales-eu`.`kunden_ü`").parts())
                .containsExactly("my-catalog", "sales-eu", "kunden_ü");
        assertThat(TableName.parse("target", "main.`sales-eu`.customers").parts())
                .containsExactly("main", "sales-eu", "customers");
        assertThat(model().metadataSchema("`my-catalog`.`itersnap-meta`").build().metadataSchema())
                .isEqualTo("my-catalog.itersnap-meta");
        assertThat(model().metadataSchema("`main`.itersnap_meta").build().metadataSchema())
                .isEqualTo("main.itersnap_meta");
    }

    @Test
    void whatUnityCatalogRefusesOrACommentCannotHoldIsRefusedNamingTheSetting() {
        for (String bad : new String[] {"`a b`.t", "`a/b`.t", "`it's`.t", "`a\\b`.t", "``.t", "`open.t", "sales-eu.t",
                "`a\u0001`.t"}) {
            assertThatThrownBy(() -> TableName.parse("target", bad)).as(bad).isInstanceOf(ItersnapException.class)
                    .hasMessageStartingWith("setting 'target'");
        }
        assertThatThrownBy(() -> model().metadataSchema("`itersnap meta`").build())
                .isInstanceOf(ItersnapException.class).hasMessageContaining("metadata_schema")
                .hasMessageContaining("backticks");
    }

    /**
     * Issue 36: a refused part was the whole message ({@code got 'sales-eu'} for {@code sales-eu.customers}, {@code got
     * '`sales'} for {@code `sales.eu`.customers}): the name looked cut at its first period. The message quotes the
     * part and the whole name as it was given.
     */
    @Test
    void aRefusedPartIsReportedWithTheWholeName() {
        for (String[] bad : new String[][] {{"sales-eu.customers", "'sales-eu'"}, {"analytics.customer-history",
                "'customer-history'"}, {"`sales.eu`.customers", "'`sales'"}, {"main.1st.t", "'1st'"}}) {
            assertThatThrownBy(() -> model().target(bad[0]).build()).as(bad[0])
                    .isInstanceOf(ItersnapException.class).hasMessageStartingWith("setting 'target'")
                    .hasMessageContaining(bad[1]).hasMessageContaining("'" + bad[0] + "'");
        }
        assertThatThrownBy(() -> model().metadataSchema("itersnap-meta.x").build()).isInstanceOf(ItersnapException.class)
                .hasMessageStartingWith("setting 'metadata_schema'").hasMessageContaining("'itersnap-meta.x'");
        assertThatThrownBy(() -> model().target("customers-history").build()).isInstanceOf(ItersnapException.class)
                .hasMessageEndingWith("got 'customers-history'"); // one part: said once
    }

    /** The owner's comment on a history names its metadata schema, also catalog-qualified or with a hyphen. */
    @Test
    void theOwnersCommentNamesAQualifiedMetadataSchema() {
        assertThat(ModelTables.parseOwnerComment("itersnap history of model customers with metadata in "
                + "main.itersnap_meta")).isEqualTo(new ModelTables.OwnerMark("customers", "main.itersnap_meta", null));
        assertThat(ModelTables.parseOwnerComment("itersnap history of model customers with metadata in "
                + "my-catalog.itersnap-méta; open versions end at 9999-12-31 00:00:00"))
                .isEqualTo(new ModelTables.OwnerMark("customers", "my-catalog.itersnap-méta", "9999-12-31 00:00:00"));
    }
}
