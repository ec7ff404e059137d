package dev.itersnap.models;

import dev.itersnap.core.HardDeletes;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.core.ModelSettings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ProjectTest {
    @TempDir
    Path dir;

    private Path model(String name, String extra) throws Exception {
        return Files.writeString(dir.resolve(name + ".yml"), """
                name: %s
                target: %s_history
                source: SELECT * FROM raw_%s
                unique_key: id
                updated_at: updated_at
                sequence_by: file_date
                """.formatted(name, name, name) + extra);
    }

    private void projectFile(String yaml) throws Exception {
        Files.writeString(dir.resolve(Project.FILE_NAME), yaml);
    }

    private void threeModels() throws Exception {
        model("orders", "tags: [nightly, sales]\n");
        model("customers", "tags: nightly\n");
        model("stg_events", "");
    }

    @Test
    void aFolderWithoutAProjectFileIsItsModelsByName() throws Exception {
        threeModels();

        Project p = Project.load(dir, name -> null);

        assertThat(p.models()).extracting(Project.Model::name).containsExactly("customers", "orders", "stg_events");
        assertThat(p.models().get(1).tags()).containsExactly("nightly", "sales");
        assertThat(p.models().get(0).tags()).containsExactly("nightly");
        assertThat(p.models().get(2).file()).isEqualTo(dir.resolve("stg_events.yml"));
        assertThat(p.profile(null)).isEmpty();
        assertThat(ModelFiles.loadFolder(dir)).extracting(ModelSettings::name)
                .containsExactly("customers", "orders", "stg_events");
    }

    @Test
    void modelsInheritTheDefaultsAndTheirOwnValueWins() throws Exception {
        model("customers", "lock_timeout: 30s\n");
        model("orders", "metadata_schema:\n");
        projectFile("""
                defaults:
                  metadata_schema: ${env:SNAP_SCHEMA}
                  lock_timeout: 5m
                  hard_deletes: invalidate
                  column_names: {dbt_valid_to: valid_until}
                """);

        Project p = Project.load(dir, Map.of("SNAP_SCHEMA", "snap_meta")::get);

        ModelSettings customers = p.models().get(0).settings();
        ModelSettings orders = p.models().get(1).settings();
        assertThat(customers.lockTimeout()).isEqualTo(Duration.ofSeconds(30));
        assertThat(orders.lockTimeout()).isEqualTo(Duration.ofMinutes(5));
        assertThat(customers.metadataSchema()).isEqualTo("snap_meta");
        assertThat(orders.metadataSchema()).as("an empty value takes the default").isEqualTo("snap_meta");
        assertThat(orders.hardDeletes()).isEqualTo(HardDeletes.INVALIDATE);
        assertThat(orders.columnNames().validTo()).isEqualTo("valid_until");
        assertThat(ModelFiles.load(dir.resolve("customers.yml")).metadataSchema())
                .as("one file alone knows no project").isEqualTo(ModelSettings.DEFAULT_METADATA_SCHEMA);
    }

    @Test
    void aDefaultThatIsNotOneIsRefusedNamingTheKeyAndLine() throws Exception {
        threeModels();
        projectFile("defaults:\n  lock_timeout: 5m\n  source: SELECT 1\n");
        assertThatThrownBy(() -> Project.load(dir, n -> null)).isInstanceOf(ModelFileException.class)
                .hasMessageStartingWith("unknown default 'source' in " + dir.resolve(Project.FILE_NAME) + " (line 3)")
                .hasMessageContaining("(source belongs to each model file)");

        projectFile("defaults:\n  lock_timeout: soon\n");
        assertThatThrownBy(() -> Project.load(dir, n -> null)).isInstanceOf(ModelFileException.class)
                .hasMessage(dir.resolve(Project.FILE_NAME) + ": defaults: setting 'lock_timeout' expected a duration "
                        + "such as 30s, 10m, 1h, 90d, 600 (seconds) or PT10M, got 'soon'");

        projectFile("profile:\n  dev: {url: x}\n");
        assertThatThrownBy(() -> Project.load(dir, n -> null))
                .hasMessageStartingWith("unknown key 'profile' in " + dir.resolve(Project.FILE_NAME) + " (line 1)");
    }

    @Test
    void twoFilesOfOneModelAreRefusedNamingBoth() throws Exception {
        model("customers", "");
        Files.writeString(dir.resolve("customers_copy.yaml"), Files.readString(dir.resolve("customers.yml"))
                .replace("name: customers", "name: CUSTOMERS"));

        assertThatThrownBy(() -> ModelFiles.loadFolder(dir)).isInstanceOf(ModelFileException.class)
                .hasMessage("two model files name the model 'customers': " + dir.resolve("customers.yml") + " and "
                        + dir.resolve("customers_copy.yaml") + "; a model name is one model (names are "
                        + "case-insensitive)");
    }

    @Test
    void aBadModelFileIsNamed() throws Exception {
        threeModels();
        model("broken", "strategy: sometimes\n");

        assertThatThrownBy(() -> Project.load(dir, n -> null)).isInstanceOf(ItersnapException.class)
                .hasMessage(dir.resolve("broken.yml") + ": setting 'strategy' expected one of check, timestamp, got "
                        + "'sometimes'");
        model("broken", "tags: [ok, 'not a tag']\n");
        assertThatThrownBy(() -> Project.load(dir, n -> null))
                .hasMessage("setting 'tags' of " + dir.resolve("broken.yml") + " expected tags of letters, digits, _, "
                        + ". and - (at most 64 characters), got 'not a tag'");
    }

    @Test
    void profilesReadTheEnvironmentWhenChosen() throws Exception {
        threeModels();
        projectFile("""
                default_profile: dev
                profiles:
                  dev:
                    url: jdbc:h2:./warehouse
                  prod:
                    url: jdbc:postgresql://${env:DW_HOST}/dw
                    user: itersnap
                    password: ${env:DW_PASSWORD}
                    pool_size: 8
                """);
        Project p = Project.load(dir, Map.of("DW_HOST", "db.internal", "DW_PASSWORD", "s3cret-pw")::get);

        assertThat(p.profileNames()).containsExactly("dev", "prod");
        assertThat(p.profile(null)).get().extracting(Project.Profile::url).isEqualTo("jdbc:h2:./warehouse");
        Project.Profile prod = p.profile("prod").orElseThrow();
        assertThat(prod.url()).isEqualTo("jdbc:postgresql://db.internal/dw");
        assertThat(prod.user()).isEqualTo("itersnap");
        assertThat(prod.password()).isEqualTo("s3cret-pw");
        assertThat(prod.poolSize()).isEqualTo(8);
        assertThat(prod.toString()).doesNotContain("s3cret-pw").contains("password=***");
        assertThatThrownBy(() -> p.profile("staging")).isInstanceOf(ModelFileException.class)
                .hasMessage("no profile 'staging' in " + dir.resolve(Project.FILE_NAME) + "; profiles: dev, prod");

        Project unset = Project.load(dir, Map.of("DW_HOST", "db.internal")::get);
        assertThat(unset.profile("dev")).isPresent();
        assertThatThrownBy(() -> unset.profile("prod")).isInstanceOf(ModelFileException.class)
                .hasMessage(dir.resolve(Project.FILE_NAME) + ": the environment variable DW_PASSWORD that "
                        + "profiles.prod.password (line 8) reads is not set");
    }

    @Test
    void aPlaceholderThatIsNotAnEnvironmentVariableIsRefused() throws Exception {
        threeModels();
        projectFile("profiles:\n  dev:\n    url: jdbc:h2:${DIR}/warehouse\n");
        assertThatThrownBy(() -> Project.load(dir, n -> "x").profile("dev"))
                .hasMessage(dir.resolve(Project.FILE_NAME) + ": profiles.dev.url (line 3) holds ${DIR}; write "
                        + "${env:NAME} to read the environment variable NAME");
        projectFile("profiles:\n  dev:\n    user: sa\n");
        assertThatThrownBy(() -> Project.load(dir, n -> null))
                .hasMessage(dir.resolve(Project.FILE_NAME) + ": profile 'dev' (line 2) has no url (the JDBC URL of "
                        + "its database)");
        projectFile("profiles:\n  dev:\n    url: x\n    pool_size: 1\n");
        assertThatThrownBy(() -> Project.load(dir, n -> null).profile("dev"))
                .hasMessageContaining("profiles.dev.pool_size (line 4) expected a number of connections from 2 to 64");
        projectFile("default_profile: prod\nprofiles:\n  dev:\n    url: x\n");
        assertThatThrownBy(() -> Project.load(dir, n -> null))
                .hasMessage(dir.resolve(Project.FILE_NAME) + ": default_profile (line 1) names no profile: 'prod'; "
                        + "profiles: dev");
    }

    @Test
    void selectsByNameTagAndGlobAndExcludes() throws Exception {
        threeModels();
        Project p = Project.load(dir, n -> null);

        assertThat(p.select(List.of(), List.of())).hasSize(3);
        assertThat(p.select(List.of("ORDERS"), List.of())).extracting(Project.Model::name).containsExactly("orders");
        assertThat(p.select(List.of("tag:nightly"), List.of())).extracting(Project.Model::name)
                .containsExactly("customers", "orders");
        assertThat(p.select(List.of("stg_*", "customers"), List.of())).extracting(Project.Model::name)
                .containsExactly("customers", "stg_events");
        assertThat(p.select(List.of(), List.of("tag:sales", "c?stomers"))).extracting(Project.Model::name)
                .containsExactly("stg_events");
        assertThatThrownBy(() -> p.select(List.of("tag:weekly"), List.of())).isInstanceOf(ItersnapException.class)
                .hasMessage("selector 'tag:weekly' matches no model of " + dir + " (models: customers, orders, "
                        + "stg_events; tags: nightly, sales)");
        assertThatThrownBy(() -> p.select(List.of("orders"), List.of("orders")))
                .hasMessageStartingWith("the selection leaves no model of " + dir);
    }

    @Test
    void aFolderWithoutModelsOrNoFolderIsNamed() throws Exception {
        assertThatThrownBy(() -> Project.load(dir, n -> null))
                .hasMessage("project folder " + dir + " holds no model file (*.yml, *.yaml)");
        assertThatThrownBy(() -> Project.load(dir.resolve("nope"), n -> null))
                .hasMessage("project folder " + dir.resolve("nope") + ": no such folder");
    }
}
