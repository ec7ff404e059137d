package dev.itersnap.testing;

import dev.itersnap.core.HardDeletes;
import dev.itersnap.core.ModelSettings;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.List;

import static dev.itersnap.testing.ItersnapAssertions.assertThat;
import static dev.itersnap.testing.Version.version;

/**
 * How to test your own model with itersnap-testing: a customer export that arrives as one full file a day, with
 * customers who leave the file closed (hard_deletes: invalidate). Each test states a business rule.
 */
class CustomerHistoryExampleTest {

    /** The model under test, as the application defines it. */
    static final ModelSettings CUSTOMERS = ModelSettings.builder("customers")
            .target("analytics.customers_history")
            .source("SELECT * FROM raw.customer_exports")
            .uniqueKey("customer_id")
            .updatedAt("updated_at")
            .sequenceBy("file_date")
            .hardDeletes(HardDeletes.INVALIDATE)
            .build();

    /** Three daily files, in business order. */
    static final Batch MONDAY = Batch.csv("""
            customer_id, tier,   updated_at,       file_date
            1,           silver, 2024-03-04 08:00, 2024-03-04
            2,           gold,   2024-03-04 08:00, 2024-03-04
            3,           bronze, 2024-03-04 08:00, 2024-03-04
            """);
    static final Batch TUESDAY = Batch.csv("""
            customer_id, tier,   updated_at,       file_date
            1,           gold,   2024-03-05 09:30, 2024-03-05
            2,           gold,   2024-03-04 08:00, 2024-03-05
            """);
    /** Java rows work as well as CSV; the tier change of customer 2 comes with a row for 3 again. */
    static final Batch WEDNESDAY = Batch.of("customer_id", "tier", "updated_at", "file_date")
            .row(1, "gold", LocalDateTime.parse("2024-03-05T09:30"), LocalDate.parse("2024-03-06"))
            .row(2, "silver", LocalDateTime.parse("2024-03-06T11:00"), LocalDate.parse("2024-03-06"))
            .row(3, "bronze", LocalDateTime.parse("2024-03-06T07:00"), LocalDate.parse("2024-03-06"));

    SnapshotTestKit kit;

    @BeforeEach
    void createRawTable() {
        kit = SnapshotTestKit.onH2(CUSTOMERS).sourceTable("raw.customer_exports",
                "customer_id INT", "tier VARCHAR(10)", "updated_at TIMESTAMP", "file_date DATE");
    }

    @AfterEach
    void dropDatabase() {
        kit.close();
    }

    @Test
    void an_upgrade_closes_the_old_tier_and_opens_the_new_one() {
        kit.load(MONDAY, TUESDAY).run();

        assertThat(kit.history())
                .hasCurrentVersion(1, "tier", "gold")
                .hasVersions(1,
                        version().with("tier", "silver").validFrom("2024-03-04 08:00").validTo("2024-03-05 09:30")
                                .changeType("update").changedAttributes("tier"),
                        version().with("tier", "gold").validFrom("2024-03-05 09:30").validTo(null));
    }

    @Test
    void a_customer_missing_from_a_full_file_is_closed_and_comes_back_as_a_new_version() {
        kit.load(MONDAY, TUESDAY).run();
        assertThat(kit.history()).hasNoCurrentVersion(3);

        kit.load(WEDNESDAY).run();
        assertThat(kit.history())
                .hasVersions(3,
                        version().with("tier", "bronze").changeType("delete"),
                        version().with("tier", "bronze").validFrom("2024-03-06 07:00").validTo(null));
    }

    @Test
    void tuesdays_file_arriving_after_wednesdays_gives_the_same_history() {
        kit.load(MONDAY, WEDNESDAY).run();
        kit.load(TUESDAY).run();                           // a day late: detected and replayed

        assertThat(kit.history()).hasCurrentVersion(2, "tier", "silver").hasNoCurrentVersion(4)
                .hasVersions(1,
                        version().with("tier", "silver").changeType("update"),
                        version().with("tier", "gold").validTo(null));
        assertThat(kit.errorLog()).isEmpty();
    }

    @Test
    void two_rows_for_one_customer_in_one_file_are_set_aside_not_guessed() {
        kit.load(MONDAY, Batch.csv("""
                customer_id, tier,   updated_at,       file_date
                1,           gold,   2024-03-05 09:30, 2024-03-05
                1,           bronze, 2024-03-05 09:30, 2024-03-05
                2,           gold,   2024-03-04 08:00, 2024-03-05
                """)).run();

        assertThat(kit.errorLog()).hasSetAside("duplicate_key", "customer_id", 1).hasSetAsideCount("duplicate_key", 2);
        assertThat(kit.history()).hasCurrentVersion(1, "tier", "silver");
    }

    @Test
    void the_model_gives_one_history_however_its_files_arrive() {
        kit.assertOrderIndependent(List.of(MONDAY, TUESDAY, WEDNESDAY));
    }
}
