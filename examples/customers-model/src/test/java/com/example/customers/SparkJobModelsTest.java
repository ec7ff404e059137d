package com.example.customers;

import dev.itersnap.core.ModelSettings;
import dev.itersnap.models.Project;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The model files the Spark job example runs (examples/spark-job/models) read in a plain Java application: the same
 * loader the job calls, giving the settings a builder writes out by hand, the project's defaults applied. The job and
 * this application therefore run the same models.
 */
class SparkJobModelsTest {
    private static final Path MODELS = Path.of("..", "spark-job", "models");

    @Test
    void theSparkJobsModelFilesLoadInJavaAsTheBuilderWritesThem() {
        // the profile's ${env:...} values are read only when a profile is used: neither the job nor this test does
        Project project = Project.load(MODELS, name -> null);

        List<Project.Model> models = project.models();

        assertThat(models).extracting(m -> m.settings().name()).containsExactly("customers");
        ModelSettings loaded = models.get(0).settings();
        ModelSettings written = ModelSettings.builder("customers")
                .target("customers_history")
                .source("SELECT customer_id, tier, updated_at, file_date FROM raw_customers")
                .uniqueKey("customer_id")
                .updatedAt("updated_at")
                .sequenceBy("file_date")
                .metadataSchema("snap_meta")                 // the project's defaults
                .build();
        assertThat(loaded.logic()).isEqualTo(written.logic());
        assertThat(loaded.metadataSchema()).isEqualTo("snap_meta");
        assertThat(models.get(0).tags()).containsExactly("daily");
        assertThat(project.select(List.of("tag:daily"), List.of())).hasSize(1);
    }
}
