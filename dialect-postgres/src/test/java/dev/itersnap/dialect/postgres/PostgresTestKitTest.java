package dev.itersnap.dialect.postgres;

import dev.itersnap.core.HardDeletes;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.testing.Batch;
import dev.itersnap.testing.SnapshotTestKit;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.util.List;

import static dev.itersnap.testing.ItersnapAssertions.assertThat;
import static dev.itersnap.testing.Version.version;

/** itersnap-testing on a caller's PostgreSQL data source: the same user test as on H2 runs unchanged. */
class PostgresTestKitTest {
    static final ModelSettings CUSTOMERS = ModelSettings.builder("customers")
            .target("analytics.customers_history").source("SELECT * FROM raw.customer_exports")
            .uniqueKey("customer_id").updatedAt("updated_at").sequenceBy("file_date")
            .hardDeletes(HardDeletes.INVALIDATE).build();

    static final List<Batch> FILES = List.of(
            Batch.csv("""
                    customer_id, tier,   updated_at,       file_date
                    1,           silver, 2024-03-04 08:00, 2024-03-04
                    2,           gold,   2024-03-04 08:00, 2024-03-04
                    """),
            Batch.csv("""
                    customer_id, tier,   updated_at,       file_date
                    1,           gold,   2024-03-05 09:30, 2024-03-05
                    2,           gold,   2024-03-04 08:00, 2024-03-05
                    2,           silver, 2024-03-05 10:00, 2024-03-05
                    """),
            Batch.csv("""
                    customer_id, tier,   updated_at,       file_date
                    1,           gold,   2024-03-05 09:30, 2024-03-06
                    3,           bronze, 2024-03-06 07:00, 2024-03-06
                    """));

    @Test
    void a_users_model_test_runs_unchanged_on_postgresql() {
        PostgresServer server = PostgresServer.get();
        DataSource database = server.newDatabase();
        try {
            SnapshotTestKit kit = SnapshotTestKit.on(database, CUSTOMERS).sourceTable("raw.customer_exports",
                    "customer_id INT", "tier VARCHAR(10)", "updated_at TIMESTAMP", "file_date DATE");
            kit.assertOrderIndependent(FILES);

            kit.reset().load(FILES.get(0), FILES.get(2)).run();
            kit.load(FILES.get(1)).run();                               // a day late
            assertThat(kit.history())
                    .hasVersions(1,
                            version().with("tier", "silver").validTo("2024-03-05 09:30").changeType("update")
                                    .changedAttributes("tier"),
                            version().with("tier", "gold").validFrom("2024-03-05 09:30").validTo(null))
                    .hasVersions(2,                                     // left Wednesday's full file
                            version().with("tier", "gold").validTo("2024-03-06").changeType("delete"))
                    .hasNoCurrentVersion(2)
                    .hasVersions(3, version().with("tier", "bronze").validTo(null));
            assertThat(kit.errorLog()).hasSetAside("duplicate_key", "customer_id", 2)
                    .hasSetAsideCount("duplicate_key", 2);
        } finally {
            server.drop(database);
        }
    }
}
