package com.example.sparkjob;

import dev.itersnap.models.Project;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The job on a local Spark session with Delta Lake, over the example's own project folder ({@code models/}): the
 * model file the command line reads runs in the session, with the project's defaults; a late file replays.
 */
class SnapshotJobTest {
    private static final Path MODELS = Path.of("models");
    private static SparkSession spark;
    private static Path warehouse;

    @BeforeAll
    static void session() throws IOException {
        warehouse = Files.createTempDirectory("spark-job-test");
        spark = SparkSession.builder()
                .master("local[2]")
                .appName("spark-job-test")
                .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
                .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
                .config("spark.sql.warehouse.dir", warehouse.resolve("warehouse").toString())
                .config("spark.sql.sources.default", "delta")
                .config("spark.sql.session.timeZone", "UTC")
                // a test's tables hold a few rows: one partition, nothing compiled, no UI
                .config("spark.sql.shuffle.partitions", "1")
                .config("spark.sql.codegen.wholeStage", "false")
                .config("spark.sql.codegen.factoryMode", "NO_CODEGEN")
                .config("spark.sql.adaptive.enabled", "false")
                .config("spark.ui.enabled", "false")
                .config("spark.driver.host", "127.0.0.1")
                .config("spark.driver.bindAddress", "127.0.0.1")
                .getOrCreate();
    }

    @AfterAll
    static void stop() throws IOException {
        spark.stop();
        try (Stream<Path> files = Files.walk(warehouse)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }

    @Test
    void theProjectsModelRunsInTheJobsSessionAndALateFileReplays() {
        assertThat(Project.load(MODELS).models()).singleElement().satisfies(m -> {
            assertThat(m.name()).isEqualTo("customers");
            assertThat(m.settings().metadataSchema()).as("the project's default").isEqualTo("snap_meta");
        });
        spark.sql("CREATE TABLE raw_customers (customer_id INT, tier STRING, updated_at TIMESTAMP, file_date DATE)");
        spark.sql("INSERT INTO raw_customers VALUES (1, 'silver', TIMESTAMP '2024-03-05 09:00:00', DATE '2024-03-05'),"
                + " (2, 'bronze', TIMESTAMP '2024-03-05 09:00:00', DATE '2024-03-05')");

        List<SnapshotJob.Outcome> first = SnapshotJob.run(spark, MODELS, List.of("tag:daily"));

        assertThat(first).singleElement().satisfies(o -> {
            assertThat(o.error()).isNull();
            assertThat(o.result().batchesApplied()).isEqualTo(1);
        });

        // Monday's file arrives after Tuesday's: customer 1 was gold on Monday
        spark.sql("INSERT INTO raw_customers VALUES (1, 'gold', TIMESTAMP '2024-03-04 09:00:00', DATE '2024-03-04')");
        List<SnapshotJob.Outcome> late = SnapshotJob.run(spark, MODELS, List.of());

        assertThat(late).singleElement().satisfies(o -> {
            assertThat(o.error()).isNull();
            assertThat(o.result().lateBatchFound()).isTrue();
        });
        List<String> versions = spark.sql("SELECT customer_id, tier, dbt_valid_to IS NULL FROM customers_history "
                + "ORDER BY customer_id, dbt_valid_from").collectAsList().stream().map(Row::toString).toList();
        assertThat(versions).containsExactly("[1,gold,false]", "[1,silver,true]", "[2,bronze,true]");
        assertThat(spark.sql("SELECT COUNT(*) FROM snap_meta.itersnap_ledger").first().getLong(0)).isEqualTo(2);
    }
}
