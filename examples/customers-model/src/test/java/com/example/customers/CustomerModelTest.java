package com.example.customers;

import dev.itersnap.core.ModelSettings;
import dev.itersnap.testing.Batch;
import dev.itersnap.testing.SnapshotTestKit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.List;

import static dev.itersnap.testing.ItersnapAssertions.assertThat;
import static dev.itersnap.testing.Version.version;

class CustomerModelTest {
    /** The rule under test; -Dcustomers.sequenceBy=loaded_at tries the wrong one. */
    static final ModelSettings MODEL = CustomerModel.customers(System.getProperty("customers.sequenceBy", "file_date"));

    // loaded_at is the time the loader wrote the file into the raw table: the order files happened to arrive in
    static final Batch MONDAY = Batch.csv("""
            customer_id, tier,   updated_at,       file_date,  loaded_at
            1,           silver, 2024-03-04 08:00, 2024-03-04, 2024-03-04 23:00
            2,           gold,   2024-03-04 08:00, 2024-03-04, 2024-03-04 23:00
            3,           bronze, 2024-03-04 08:00, 2024-03-04, 2024-03-04 23:00
            """);
    static final Batch TUESDAY = Batch.csv("""
            customer_id, tier,   updated_at,       file_date,  loaded_at
            1,           gold,   2024-03-05 09:30, 2024-03-05, 2024-03-07 06:00
            2,           gold,   2024-03-04 08:00, 2024-03-05, 2024-03-07 06:00
            """);
    static final Batch WEDNESDAY = Batch.csv("""
            customer_id, tier,   updated_at,       file_date,  loaded_at
            1,           gold,   2024-03-05 09:30, 2024-03-06, 2024-03-06 23:00
            2,           silver, 2024-03-06 11:00, 2024-03-06, 2024-03-06 23:00
            3,           bronze, 2024-03-06 07:00, 2024-03-06, 2024-03-06 23:00
            """);

    SnapshotTestKit kit;

    @BeforeEach
    void rawTable() {
        kit = SnapshotTestKit.onH2(MODEL).sourceTable("raw.customer_exports", "customer_id INT",
                "tier VARCHAR(10)", "updated_at TIMESTAMP", "file_date DATE", "loaded_at TIMESTAMP");
    }

    @AfterEach
    void drop() {
        kit.close();
    }

    @Test
    void tuesdays_file_loaded_after_wednesdays_still_gives_the_business_history() {
        kit.load(MONDAY, WEDNESDAY).run();
        kit.load(TUESDAY).run();

        assertThat(kit.history())
                .hasVersions(1,
                        version().with("tier", "silver").validTo("2024-03-05 09:30").changedAttributes("tier"),
                        version().with("tier", "gold").validFrom("2024-03-05 09:30").validTo(null))
                .hasVersions(3,
                        version().with("tier", "bronze").changeType("delete"),
                        version().with("tier", "bronze").validFrom("2024-03-06 07:00").validTo(null))
                .hasCurrentVersion(2, "tier", "silver");
    }

    @Test
    void the_history_does_not_depend_on_how_the_files_arrive() {
        kit.assertOrderIndependent(List.of(MONDAY, TUESDAY, WEDNESDAY));
    }
}
