package dev.itersnap.dialect.databricks;

import dev.itersnap.core.AsOf;
import dev.itersnap.core.HardDeletes;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.internal.sql.ApplyStatements;
import dev.itersnap.internal.sql.BatchRun;
import dev.itersnap.internal.sql.ModelTables;
import dev.itersnap.internal.ResolvedModel;
import dev.itersnap.internal.sql.Rollback;
import dev.itersnap.spi.SourceColumn;
import dev.itersnap.spi.StageScope;
import dev.itersnap.spi.Statement;
import dev.itersnap.spi.TableSpec;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Types;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Expected SQL of the Databricks dialect: the rewrites with their bind counts, and the exact text of every engine
 * step pinned in {@code src/test/resources/databricks-steps.sql} (rewrite it with {@code -Ditersnap.sql.update=true}
 * after a deliberate change, and review the diff).
 */
class DatabricksDialectSqlTest {
    private static final Path GOLDEN = Path.of("src/test/resources/databricks-steps.sql");
    private final DatabricksDialect dialect = new DatabricksDialect();

    private static ResolvedModel model(HardDeletes hardDeletes) {
        ModelSettings s = ModelSettings.builder("customers").target("snap.customers")
                .source("SELECT * FROM raw WHERE note <> 'x?'").uniqueKey("id").updatedAt("updated_at")
                .sequenceBy("file_date").hardDeletes(hardDeletes).deleteWhen("op = 'D'").build();
        SourceColumn id = new SourceColumn("id", Types.INTEGER, "INT", 10, 0);
        SourceColumn status = new SourceColumn("status", Types.VARCHAR, "STRING", 0, 0);
        SourceColumn upd = new SourceColumn("updated_at", Types.TIMESTAMP, "TIMESTAMP", 26, 6);
        SourceColumn seq = new SourceColumn("file_date", Types.DATE, "DATE", 10, 0);
        return ResolvedModel.builder(s, x -> x.toLowerCase(Locale.ROOT)).sourceColumns(List.of(id, status, upd, seq))
                .keys(List.of("id")).updatedAt("updated_at").sequenceBy("file_date").tracked(List.of("status")).build();
    }

    private static final LocalDate SEQ = LocalDate.of(2024, 3, 1);
    private static final LocalDateTime AT = LocalDateTime.of(2024, 3, 2, 6, 0);

    private ApplyStatements apply(ResolvedModel m, List<String> introduced) {
        return dev.itersnap.internal.sql.SqlSteps.of(dialect).applyBatches(m, new BatchRun(List.of(new BatchRun.BatchInfo(SEQ, "2024-03-01",
                LocalDateTime.of(2024, 3, 1, 0, 0), false), new BatchRun.BatchInfo(SEQ.plusDays(1), "2024-03-02", null,
                false)), "run-1", AT, List.of(), introduced));
    }

    private static List<String> sql(List<Statement> statements) {
        return statements.stream().map(Statement::sql).toList();
    }

    /** Every statement of every step, in engine order, for a new_record model. */
    private Map<String, List<String>> steps() {
        ResolvedModel m = model(HardDeletes.NEW_RECORD);
        ModelTables tables = new ModelTables(dialect, m);
        SourceColumn tier = new SourceColumn("tier", Types.VARCHAR, "STRING", 0, 0);
        ApplyStatements b = apply(m, List.of("status"));
        Map<String, List<String>> s = new LinkedHashMap<>();
        List<String> metadata = new ArrayList<>();
        m.metadata().engineTables().forEach(t -> metadata.addAll(sql(dialect.createTable(t))));
        s.put("createMetadata", metadata);
        s.put("createHistory", sql(dialect.createTable(tables.history())));
        List<String> archive = new ArrayList<>(sql(dialect.createTable(tables.archive())));
        archive.addAll(sql(dialect.createTable(tables.pending())));
        s.put("createArchive", archive);
        s.put("addColumn", List.of(dialect.addColumn(m.target(), tier).sql()));
        s.put("widenColumn", List.of(dialect.widenColumn(m.target(), "id",
                new SourceColumn("id", Types.BIGINT, "BIGINT", 19, 0)).sql()));
        List<String> scratch = new ArrayList<>();
        for (TableSpec t : List.of(tables.stage(), tables.batches(), tables.keys(), tables.work())) {
            scratch.addAll(sql(dialect.createTable(t)));
        }
        s.put("createScratch", scratch);
        s.put("discoverSequences", List.of(dev.itersnap.internal.sql.SqlSteps.of(dialect).discoverSequences(m).sql()));
        s.put("fingerprintSequences", List.of(dev.itersnap.internal.sql.SqlSteps.of(dialect).fingerprintSequences(m, m.sourceColumns(), List.of(SEQ)).sql()));
        s.put("fingerprintStaged", List.of(dev.itersnap.internal.sql.SqlSteps.of(dialect).fingerprintStaged(m, m.sourceColumns()).sql()));
        s.put("historySequences", List.of(dev.itersnap.internal.sql.SqlSteps.of(dialect).historySequences(m, List.of(SEQ), SEQ).sql()));
        s.put("stageSource", List.of(dev.itersnap.internal.sql.SqlSteps.of(dialect).stageSource(m, SEQ, true).sql()));
        s.put("logNullSequences", List.of(dev.itersnap.internal.sql.SqlSteps.of(dialect).logNullSequences(m, "run-1", AT).sql()));
        s.put("stageReproduced", List.of(dev.itersnap.internal.sql.SqlSteps.of(dialect).stageReproduced(m, SEQ, List.of("status"), true).sql()));
        s.put("rollback", sql(dev.itersnap.internal.sql.SqlSteps.of(dialect).rollback(m, Rollback.from(SEQ, List.of("status")))));
        s.put("listBatches", sql(b.listBatches()));
        s.put("prepare", sql(b.prepare()));
        s.put("derive", List.of(b.derivation().derive().sql()));
        s.put("counts", List.of(b.derivation().counts().sql()));
        s.put("setAsideRegressions", sql(b.derivation().setAsideRegressions()));
        s.put("closeCurrent", List.of(b.closeCurrent().sql()));
        s.put("insertVersions", List.of(b.insertVersions().sql()));
        s.put("writeVersions", List.of(b.writeVersions().sql()));
        s.put("logRejected", List.of(b.logRejected().sql()));
        s.put("archive", List.of(b.archive().sql()));
        // a key-scoped replay: a late batch and a replayed one after it
        ApplyStatements r = dev.itersnap.internal.sql.SqlSteps.of(dialect).applyBatches(m, new BatchRun(List.of(new BatchRun.BatchInfo(SEQ, "2024-03-01",
                LocalDateTime.of(2024, 3, 1, 0, 0), false), new BatchRun.BatchInfo(SEQ.plusDays(1), "2024-03-02",
                null, true, true)), "run-1", AT, List.of(), List.of()));
        s.put("replay: stageSource", List.of(dev.itersnap.internal.sql.SqlSteps.of(dialect).stageSource(m, SEQ, true, StageScope.FRESH).sql(),
                dev.itersnap.internal.sql.SqlSteps.of(dialect).stageSource(m, SEQ, true, StageScope.REPLAYED_KEYS).sql()));
        s.put("replay: prepare", sql(r.prepare()));
        s.put("replay: rollback", sql(dev.itersnap.internal.sql.SqlSteps.of(dialect).rollback(m, Rollback.keys(SEQ, true))));
        s.put("replay: derive before the late batches", List.of(r.before().derive().sql()));
        s.put("replay: derive", List.of(r.derivation().derive().sql()));
        s.put("replay: resetRegressions", List.of(r.resetRegressions().sql()));
        s.put("timelineCheck", List.of(dev.itersnap.internal.sql.SqlSteps.of(dialect).timelineCheck(m, SEQ).sql()));
        s.put("editedVersions", List.of(dev.itersnap.internal.sql.SqlSteps.of(dialect).editedVersions(m, SEQ).sql()));
        s.put("openedVersions", List.of(dev.itersnap.internal.sql.SqlSteps.of(dialect).openedVersions(m, List.of(SEQ)).sql()));
        s.put("asOf", List.of(dev.itersnap.internal.sql.SqlSteps.of(dialect).asOf(m, AsOf.time("2024-03-01T00:00")).sql()));
        return s;
    }

    @Test
    void everyStepIsPinned() throws IOException {
        StringBuilder text = new StringBuilder();
        steps().forEach((step, sql) -> {
            text.append("-- ").append(step).append('\n');
            sql.forEach(statement -> text.append(SqlLayout.clauses(statement)).append(";\n"));
        });
        if (Boolean.getBoolean("itersnap.sql.update")) {
            Files.writeString(GOLDEN, text, StandardCharsets.UTF_8);
        }
        assertThat(text.toString()).isEqualTo(Files.readString(GOLDEN, StandardCharsets.UTF_8));
    }

    @Test
    void everyStatementCarriesItsValuesInTheOrderOfItsMarkers() {
        ResolvedModel m = model(HardDeletes.NEW_RECORD);
        ApplyStatements b = apply(m, List.of());
        assertThat(dev.itersnap.internal.sql.SqlSteps.of(dialect).stageSource(m, SEQ, false).values()).containsExactly(SEQ);
        assertThat(b.listBatches().get(0).values()).containsExactly(SEQ, "2024-03-01", LocalDateTime.of(2024, 3, 1, 0, 0),
                SEQ.plusDays(1), "2024-03-02", null);
        assertThat(b.derivation().derive().values()).isEmpty();
        assertThat(b.insertVersions().values()).isEmpty();
        assertThat(b.logRejected().values()).containsExactly("customers", "run-1", AT);
        assertThat(dev.itersnap.internal.sql.SqlSteps.of(dialect).logNullSequences(m, "run-1", AT).values()).containsExactly("customers", "run-1", AT,
                "customers");
        assertThat(dev.itersnap.internal.sql.SqlSteps.of(dialect).timelineCheck(m, SEQ).values()).containsExactly(SEQ, SEQ);
        assertThat(dev.itersnap.internal.sql.SqlSteps.of(dialect).stageReproduced(m, SEQ, List.of(), true).values()).hasSize(5).containsOnly(SEQ);
        assertThat(dev.itersnap.internal.sql.SqlSteps.of(dialect).rollback(m, Rollback.from(SEQ, List.of()))).allSatisfy(st -> assertThat(st.values())
                .containsExactly(SEQ));
    }

    @Test
    void theRunsWritesAreMergesAndInsertsDeltaAccepts() {
        ApplyStatements b = apply(model(HardDeletes.NEW_RECORD), List.of());
        assertThat(b.closeCurrent().sql()).startsWith("MERGE INTO `snap`.`customers` t USING (SELECT ")
                .contains("WHEN MATCHED THEN UPDATE SET `dbt_valid_to` = c.`itersnap_w_vt`");
        assertThat(b.insertVersions().sql()).startsWith("INSERT INTO `snap`.`customers` (")
                .contains("md5((COALESCE(CAST(w.`id` AS STRING), '') || '|' || COALESCE(CAST(w.`itersnap_tt` AS STRING), "
                        + "'') || '|' || bo.`itersnap_seqtext` || '|deleted'))");
        // both in one MERGE where a run closes and opens versions: one commit
        assertThat(b.writeVersions().sql()).startsWith("MERGE INTO `snap`.`customers` t USING (SELECT ")
                .contains(") c ON c.`itersnap_w_kind` = 'c' AND ")
                .contains("WHEN MATCHED THEN UPDATE SET `dbt_valid_to` = c.`dbt_valid_to`")
                .contains("WHEN NOT MATCHED AND c.`itersnap_w_kind` = 'i' THEN INSERT (`id`, ");
    }

    @Test
    void insertsWhoseCountTheEngineUsesAreMergesOnFalse() {
        ResolvedModel m = model(HardDeletes.NEW_RECORD);
        assertThat(dev.itersnap.internal.sql.SqlSteps.of(dialect).logNullSequences(m, "run-1", AT).sql()).startsWith("MERGE INTO `itersnap_metadata`.`itersnap_errors` t USING "
                + "(SELECT CAST(? AS STRING) AS `itersnap_c0`, CAST(? AS STRING) AS `itersnap_c1`")
                .contains("to_json(named_struct('id', s.`id`, 'status', s.`status`, 'updated_at', s.`updated_at`, "
                        + "'file_date', s.`file_date`), map('ignoreNullFields', 'false', 'timestampFormat', "
                        + "'yyyy-MM-dd\\'T\\'HH:mm:ss.SSSSSSXXX', 'timestampNTZFormat', "
                        + "'yyyy-MM-dd\\'T\\'HH:mm:ss.SSSSSS'))")
                .endsWith("WHEN NOT MATCHED THEN INSERT (`model`, `run_id`, `sequence_value`, `reason`, `record`, "
                        + "`logged_at`) VALUES (d.`itersnap_c0`, d.`itersnap_c1`, d.`itersnap_c2`, d.`itersnap_c3`, "
                        + "d.`itersnap_c4`, d.`itersnap_c5`)");
    }

    @Test
    void ddlMakesDeltaTablesWithoutKeysOrIndexes() {
        ResolvedModel m = model(HardDeletes.NEW_RECORD);
        ModelTables tables = new ModelTables(dialect, m);
        assertThat(sql(dialect.createTable(tables.history()))).containsExactly("CREATE SCHEMA IF NOT EXISTS `snap`",
                "CREATE TABLE `snap`.`customers` (`id` INT, `status` STRING, `updated_at` TIMESTAMP, `file_date` DATE, "
                        + "`dbt_scd_id` STRING, `dbt_updated_at` TIMESTAMP, `dbt_valid_from` TIMESTAMP, `dbt_valid_to` "
                        + "TIMESTAMP, `dbt_change_type` STRING, `changed_attributes` STRING, `dbt_is_deleted` BOOLEAN, "
                        + "`dbt_opened_seq` DATE, `dbt_closed_seq` DATE) USING DELTA "
                        + "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')");
        List<String> metadata = new ArrayList<>();
        m.metadata().engineTables().forEach(t -> metadata.addAll(sql(dialect.createTable(t))));
        assertThat(metadata).allSatisfy(sql -> assertThat(sql).doesNotContain("PRIMARY KEY")
                .doesNotContain("VARCHAR").doesNotContain("itersnap_lock"))
                .filteredOn(sql -> sql.startsWith("CREATE TABLE") && !sql.contains("itersnap_targets")).hasSize(5)
                .allSatisfy(sql -> assertThat(sql).endsWith(") USING DELTA TBLPROPERTIES ("
                        + "'delta.enableDeletionVectors' = 'true')"));
        // the lease, and the owners of targets: two first acquisitions (two models claiming one target) must
        // conflict (no row-level concurrency there)
        assertThat(sql(dialect.createTable(m.metadata().targets().spec()))).last().asString().endsWith(" USING DELTA "
                + "TBLPROPERTIES ('delta.enableDeletionVectors' = 'false', 'delta.enableRowTracking' = 'false')");
        assertThat(sql(dialect.createTable(m.metadata().lease().spec()))).last().asString().endsWith(" USING DELTA "
                + "TBLPROPERTIES ('delta.enableDeletionVectors' = 'false', 'delta.enableRowTracking' = 'false')");
        // type widening only when a column is about to widen, not at creation
        assertThat(String.join("\n", sql(dialect.createTable(tables.history())))).doesNotContain("TypeWidening");
        assertThat(sql(dialect.prepareWidening(m.target()))).containsExactly(
                "ALTER TABLE `snap`.`customers` SET TBLPROPERTIES ('delta.enableTypeWidening' = 'true')");
        List<String> scratch = new ArrayList<>(sql(dialect.createTable(tables.stage())));
        scratch.addAll(sql(dialect.createTable(tables.work())));
        // scratch tables: the files each replacement leaves are VACUUMed an hour later, not seven days
        assertThat(scratch).hasSize(2).allSatisfy(sql -> assertThat(sql)
                .startsWith("CREATE OR REPLACE TABLE `itersnap_metadata`.`itersnap_").endsWith(" USING DELTA "
                        + "TBLPROPERTIES ('delta.deletedFileRetentionDuration' = 'interval 1 hours', "
                        + "'delta.logRetentionDuration' = 'interval 1 days')"));
        // the archive, and the pending table a database without transactions needs (aged-out batches of a replay)
        List<String> archive = new ArrayList<>(sql(dialect.createTable(tables.archive())));
        archive.addAll(sql(dialect.createTable(tables.pending())));
        assertThat(archive).allSatisfy(sql -> assertThat(sql).endsWith(") USING DELTA"));
        assertThat(archive).extracting(sql -> sql.substring(0, sql.indexOf(" (")))
                .containsExactly("CREATE TABLE IF NOT EXISTS `itersnap_metadata`.`itersnap_archive_customers`",
                        "CREATE TABLE IF NOT EXISTS `itersnap_metadata`.`itersnap_pending_customers`");
    }

    /**
     * Deletion vectors are the user's choice: on by default, off (explicitly, since a workspace may enable them by
     * default) with DatabricksDialect.withDeletionVectors(false) or -Ditersnap.databricks.deletionVectors=false, for a
     * history that UniForm / Iceberg readers read. The lease keeps its own. A wrong value names the property.
     */
    @Test
    void deletionVectorsAreTheUsersChoice() {
        ResolvedModel m = model(HardDeletes.NEW_RECORD);
        DatabricksDialect off = DatabricksDialect.withDeletionVectors(false);
        assertThat(sql(off.createTable(new ModelTables(off, m).history()))).last().asString()
                .endsWith(") USING DELTA TBLPROPERTIES ('delta.enableDeletionVectors' = 'false')");
        assertThat(sql(off.createTable(m.metadata().lease().spec()))).last().asString().endsWith(" USING DELTA "
                + "TBLPROPERTIES ('delta.enableDeletionVectors' = 'false', 'delta.enableRowTracking' = 'false')");
        String before = System.getProperty(DatabricksDialect.DELETION_VECTORS_PROPERTY);
        try {
            System.setProperty(DatabricksDialect.DELETION_VECTORS_PROPERTY, "false");
            assertThat(sql(dialect.createTable(new ModelTables(dialect, m).history()))).last().asString()
                    .endsWith("('delta.enableDeletionVectors' = 'false')");
            assertThat(sql(DatabricksDialect.withDeletionVectors(true).createTable(new ModelTables(dialect, m)
                    .history()))).last().asString().endsWith("('delta.enableDeletionVectors' = 'true')");
            System.setProperty(DatabricksDialect.DELETION_VECTORS_PROPERTY, "no");
            assertThatThrownBy(() -> dialect.createTable(new ModelTables(dialect, m).history()))
                    .isInstanceOf(ItersnapException.class).hasMessageContaining("itersnap.databricks.deletionVectors")
                    .hasMessageContaining("'no'");
        } finally {
            if (before == null) {
                System.clearProperty(DatabricksDialect.DELETION_VECTORS_PROPERTY);
            } else {
                System.setProperty(DatabricksDialect.DELETION_VECTORS_PROPERTY, before);
            }
        }
    }

    private static ResolvedModel stringSequence() {
        ModelSettings s = ModelSettings.builder("customers").target("snap.customers").source("SELECT * FROM raw")
                .uniqueKey("id").updatedAt("updated_at").sequenceBy("batch").build();
        return ResolvedModel.builder(s, x -> x.toLowerCase(Locale.ROOT)).sourceColumns(List.of(
                        new SourceColumn("id", Types.INTEGER, "INT", 10, 0),
                        new SourceColumn("updated_at", Types.TIMESTAMP, "TIMESTAMP", 26, 6),
                        new SourceColumn("batch", Types.VARCHAR, "STRING", 0, 0)))
                .keys(List.of("id")).updatedAt("updated_at").sequenceBy("batch").build();
    }

    @Test
    void namesLiteralsAndTypesAreSparkSql() {
        assertThat(dialect.quote("a`b")).isEqualTo("`a``b`");
        assertThat(dev.itersnap.internal.sql.SqlSteps.of(dialect).asOf(stringSequence(), AsOf.sequence("it's a\\b")).sql())
                .contains("<= CAST('it\\'s a\\\\b' AS STRING) AND");
        assertThat(dev.itersnap.internal.sql.SqlSteps.of(dialect).asOf(model(HardDeletes.IGNORE), AsOf.time("2024-03-01T09:30")).sql())
                .contains("<= CAST('2024-03-01 09:30' AS TIMESTAMP) AND");
        assertThat(dialect.columnType(new SourceColumn("v", Types.VARCHAR, "VARCHAR", 20, 0))).isEqualTo("STRING");
        assertThat(dialect.columnType(new SourceColumn("d", Types.DECIMAL, "DECIMAL(10,2)", 10, 2)))
                .isEqualTo("DECIMAL(10,2)");
        assertThat(dialect.columnType(new SourceColumn("n", Types.TIMESTAMP, "TIMESTAMP_NTZ", 26, 6)))
                .isEqualTo("TIMESTAMP_NTZ");
        assertThat(dialect.widens(new SourceColumn("i", Types.INTEGER, "INT", 10, 0),
                new SourceColumn("i", Types.BIGINT, "BIGINT", 19, 0))).isTrue();
        assertThat(dialect.widens(new SourceColumn("i", Types.BIGINT, "BIGINT", 19, 0),
                new SourceColumn("i", Types.INTEGER, "INT", 10, 0))).isFalse();
        assertThat(dialect.widens(new SourceColumn("d", Types.DECIMAL, "DECIMAL", 10, 2),
                new SourceColumn("d", Types.DECIMAL, "DECIMAL", 12, 2))).isTrue();
    }

    @Test
    void identityAndCapabilities() {
        assertThat(dialect.name()).isEqualTo("databricks");
        assertThat(dialect.handlesUrl("jdbc:databricks://host:443/default;httpPath=/sql/1.0/warehouses/x")).isTrue();
        assertThat(dialect.handlesUrl("jdbc:postgresql://host/db")).isFalse();
        assertThat(dialect.handlesProduct("SparkSQL")).as("the Databricks JDBC driver 3.4.5").isTrue();
        assertThat(dialect.handlesProduct("Spark SQL")).as("SparkDataSource").isTrue();
        assertThat(dialect.handlesProduct("PostgreSQL")).isFalse();
        assertThat(dialect.capabilities().transactionalDml()).isFalse();
        assertThat(dialect.capabilities().indexes()).isFalse();
        assertThat(dialect.capabilities().primaryKeys()).isFalse();
        assertThat(dialect.capabilities().insertRowCounts()).isFalse();
        assertThat(dialect.capabilities().createOrReplaceTable()).isTrue();
        assertThat(dev.itersnap.spi.Dialects.named("databricks")).isInstanceOf(DatabricksDialect.class);
    }

    /** Unity Catalog: a three-part target's schema is created in its catalog, a catalog-qualified metadata schema. */
    @Test
    void threePartNamesCreateTheirSchemaInTheirCatalog() {
        ModelSettings s = ModelSettings.builder("Customers").target("Main.Snap.Customers").metadataSchema("main.ops")
                .source("SELECT * FROM raw").uniqueKey("id").updatedAt("updated_at").sequenceBy("file_date").build();
        ResolvedModel m = ResolvedModel.builder(s, dialect.identifierFolding()).sourceColumns(List.of(
                        new SourceColumn("id", Types.INTEGER, "INT", 10, 0),
                        new SourceColumn("updated_at", Types.TIMESTAMP, "TIMESTAMP", 26, 6),
                        new SourceColumn("file_date", Types.DATE, "DATE", 10, 0)))
                .keys(List.of("id")).updatedAt("updated_at").sequenceBy("file_date").build();
        assertThat(sql(dialect.createTable(new ModelTables(dialect, m).history())).get(0))
                .isEqualTo("CREATE SCHEMA IF NOT EXISTS `main`.`snap`");
        assertThat(sql(dialect.createTable(m.metadata().ledger().spec()))).first().asString()
                .isEqualTo("CREATE SCHEMA IF NOT EXISTS `main`.`ops`");
        assertThat(m.stage().toString()).isEqualTo("main.ops.itersnap_stage_customers");
        assertThat(m.metadata().ledger().spec().name().toString()).isEqualTo("main.ops.itersnap_ledger");
    }

    @Test
    void aMetadataSchemaHasAtMostACatalog() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> ModelSettings.builder("c").target("t")
                .metadataSchema("a.b.c").source("SELECT 1").uniqueKey("id").updatedAt("u").sequenceBy("s").build())
                .hasMessageContaining("setting 'metadata_schema'").hasMessageContaining("catalog.schema");
    }
}
