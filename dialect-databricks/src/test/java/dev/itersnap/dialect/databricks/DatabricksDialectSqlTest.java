package dev.itersnap.dialect.databricks;

import dev.itersnap.core.ColumnNames;
import dev.itersnap.core.HardDeletes;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.TableName;
import dev.itersnap.spi.ResolvedModel;
import dev.itersnap.spi.SourceColumn;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Types;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

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
        return new ResolvedModel(s, x -> x.toLowerCase(Locale.ROOT), new TableName(List.of("snap", "customers")),
                "itersnap_metadata", new TableName(List.of("itersnap_metadata", "itersnap_stage_customers")),
                new TableName(List.of("itersnap_metadata", "itersnap_work_customers")), List.of(id, status, upd, seq),
                List.of(), List.of("id"), "updated_at", "file_date", List.of("status"), ColumnNames.DEFAULTS, seq,
                upd);
    }

    private static long binds(String sql) {
        return SparkSql.markers(sql);
    }

    /** Every statement of every step, in engine order, for a new_record model. */
    private Map<String, List<String>> steps() {
        ResolvedModel m = model(HardDeletes.NEW_RECORD);
        SourceColumn tier = new SourceColumn("tier", Types.VARCHAR, "STRING", 0, 0);
        Map<String, List<String>> s = new LinkedHashMap<>();
        s.put("createMetadata", dialect.createMetadata(m));
        s.put("createHistory", dialect.createHistory(m));
        s.put("createArchive", dialect.createArchive(m));
        s.put("addColumn", List.of(dialect.addColumn(m, m.target(), tier)));
        s.put("widenColumn", List.of(dialect.widenColumn(m.target(), "id",
                new SourceColumn("id", Types.BIGINT, "BIGINT", 19, 0))));
        s.put("createScratch", dialect.createScratch(m));
        s.put("discoverSequences", List.of(dialect.discoverSequences(m)));
        s.put("stageSource", List.of(dialect.stageSource(m, true)));
        s.put("logNullSequences", List.of(dialect.logNullSequences(m)));
        s.put("stageReproduced", List.of(dialect.stageReproduced(m, List.of("status"), true)));
        s.put("rollback", dialect.rollback(m, List.of("status")));
        s.put("classifyBatch", List.of(dialect.classifyBatch(m, List.of())));
        s.put("fillIntroduced", List.of(dialect.fillIntroduced(m, "status")));
        s.put("countBatch", List.of(dialect.countBatch(m)));
        s.put("logRejected", List.of(dialect.logRejected(m)));
        s.put("archiveBatch", List.of(dialect.archiveBatch(m)));
        s.put("closeAbsent", List.of(dialect.closeAbsent(m)));
        s.put("mergeBatch", List.of(dialect.mergeBatch(m)));
        s.put("insertDeletionRecords", List.of(dialect.insertDeletionRecords(m)));
        s.put("timelineCheck", List.of(dialect.timelineCheck(m)));
        s.put("asOf", List.of(dialect.asOf(m, false, dialect.literal(m.updatedAtColumn(), "2024-03-01T00:00"))));
        return s;
    }

    @Test
    void everyStepIsPinned() throws IOException {
        StringBuilder text = new StringBuilder();
        steps().forEach((step, sql) -> {
            text.append("-- ").append(step).append('\n');
            sql.forEach(statement -> text.append(statement).append(";\n"));
        });
        if (Boolean.getBoolean("itersnap.sql.update")) {
            Files.writeString(GOLDEN, text, StandardCharsets.UTF_8);
        }
        assertThat(text.toString()).isEqualTo(Files.readString(GOLDEN, StandardCharsets.UTF_8));
    }

    @Test
    void everyStatementBindsAsTheEngineDoes() {
        ResolvedModel m = model(HardDeletes.NEW_RECORD);
        assertThat(binds(dialect.stageSource(m, false))).isEqualTo(1);
        assertThat(binds(dialect.classifyBatch(m, List.of()))).isEqualTo(1);
        assertThat(binds(dialect.closeAbsent(m))).isEqualTo(4);
        assertThat(binds(dialect.mergeBatch(m))).isEqualTo(3);
        assertThat(binds(dialect.insertDeletionRecords(m))).isEqualTo(3);
        assertThat(binds(dialect.logRejected(m))).isEqualTo(4);
        assertThat(binds(dialect.logNullSequences(m))).isEqualTo(4);
        assertThat(binds(dialect.timelineCheck(m))).isEqualTo(2);
        assertThat(binds(dialect.stageReproduced(m, List.of(), true))).isEqualTo(5);
        assertThat(binds(dialect.fillIntroduced(m, "status"))).isZero();
        assertThat(binds(dialect.archiveBatch(m))).isZero();
        assertThat(dialect.rollback(m, List.of())).allSatisfy(sql -> assertThat(binds(sql)).isEqualTo(1));
    }

    @Test
    void closeAbsentIsAMergeWhoseSourceTakesTheBindsInTheEnginesOrder() {
        String sql = dialect.closeAbsent(model(HardDeletes.INVALIDATE));
        assertThat(sql).startsWith("MERGE INTO `snap`.`customers` t USING (SELECT h.`id`, CAST(? AS TIMESTAMP) AS "
                + "`itersnap_dt1`, CAST(? AS TIMESTAMP) AS `itersnap_dt2`, CAST(? AS DATE) AS `itersnap_closing` FROM "
                + "`snap`.`customers` h WHERE h.`dbt_valid_to` IS NULL AND 1 = 1 AND NOT EXISTS (SELECT 1 FROM "
                + "`itersnap_metadata`.`itersnap_stage_customers` s WHERE s.`file_date` = CAST(? AS DATE) AND "
                + "s.`id` = h.`id`)) a ON t.`id` = a.`id`")
                .contains("WHEN MATCHED THEN UPDATE SET `dbt_valid_to` = CASE WHEN t.`dbt_valid_from` > a.`itersnap_dt1`")
                .doesNotContain("UPDATE `snap`");
    }

    @Test
    void insertsWhoseCountTheEngineUsesAreMergesOnFalse() {
        ResolvedModel m = model(HardDeletes.NEW_RECORD);
        assertThat(dialect.insertDeletionRecords(m)).startsWith("MERGE INTO `snap`.`customers` t USING (SELECT ")
                .contains(") d ON FALSE WHEN NOT MATCHED THEN INSERT (`id`, `status`, `updated_at`, `file_date`, "
                        + "`dbt_scd_id`, ").contains("md5((COALESCE(CAST(h.`id` AS STRING), '') || '|' || "
                        + "COALESCE(CAST(h.`dbt_valid_to` AS STRING), '') || '|' || CAST(? AS STRING) || '|deleted'))");
        assertThat(dialect.logNullSequences(m)).startsWith("MERGE INTO `itersnap_metadata`.`itersnap_errors` t USING "
                + "(SELECT CAST(? AS STRING) AS `itersnap_c0`, CAST(? AS STRING) AS `itersnap_c1`")
                .contains("to_json(named_struct('id', s.`id`, 'status', s.`status`, 'updated_at', s.`updated_at`, "
                        + "'file_date', s.`file_date`), map('ignoreNullFields', 'false'))")
                .endsWith("WHEN NOT MATCHED THEN INSERT (`model`, `run_id`, `sequence_value`, `reason`, `record`, "
                        + "`logged_at`) VALUES (d.`itersnap_c0`, d.`itersnap_c1`, d.`itersnap_c2`, d.`itersnap_c3`, "
                        + "d.`itersnap_c4`, d.`itersnap_c5`)");
    }

    @Test
    void ddlMakesDeltaTablesWithoutKeysOrIndexes() {
        ResolvedModel m = model(HardDeletes.NEW_RECORD);
        assertThat(dialect.createHistory(m)).containsExactly("CREATE SCHEMA IF NOT EXISTS `snap`",
                "CREATE TABLE `snap`.`customers` (`id` INT, `status` STRING, `updated_at` TIMESTAMP, `file_date` DATE, "
                        + "`dbt_scd_id` STRING, `dbt_updated_at` TIMESTAMP, `dbt_valid_from` TIMESTAMP, `dbt_valid_to` "
                        + "TIMESTAMP, `dbt_change_type` STRING, `changed_attributes` STRING, `dbt_is_deleted` BOOLEAN, "
                        + "`dbt_opened_seq` DATE, `dbt_closed_seq` DATE) USING DELTA "
                        + "TBLPROPERTIES ('delta.enableTypeWidening' = 'true')");
        assertThat(dialect.createMetadata(m)).allSatisfy(sql -> assertThat(sql).doesNotContain("PRIMARY KEY")
                .doesNotContain("VARCHAR").doesNotContain("itersnap_lock"))
                .filteredOn(sql -> sql.startsWith("CREATE TABLE")).hasSize(4)
                .allSatisfy(sql -> assertThat(sql).endsWith(") USING DELTA"));
        assertThat(dialect.createScratch(m)).hasSize(2).allSatisfy(sql -> assertThat(sql)
                .startsWith("CREATE OR REPLACE TABLE `itersnap_metadata`.`itersnap_").endsWith(" USING DELTA"));
        // the archive, and the pending table a database without transactions needs (aged-out batches of a replay)
        assertThat(dialect.createArchive(m)).extracting(sql -> sql.substring(0, sql.indexOf(" (")))
                .containsExactly("CREATE TABLE IF NOT EXISTS `itersnap_metadata`.`itersnap_archive_customers`",
                        "CREATE TABLE IF NOT EXISTS `itersnap_metadata`.`itersnap_pending_customers`");
    }

    @Test
    void namesLiteralsAndTypesAreSparkSql() {
        assertThat(dialect.quote("a`b")).isEqualTo("`a``b`");
        assertThat(dialect.literal(new SourceColumn("s", Types.VARCHAR, "STRING", 0, 0), "it's a\\b"))
                .isEqualTo("CAST('it\\'s a\\\\b' AS STRING)");
        assertThat(dialect.literal(new SourceColumn("t", Types.TIMESTAMP, "TIMESTAMP", 26, 6), "2024-03-01T09:30"))
                .isEqualTo("CAST('2024-03-01 09:30' AS TIMESTAMP)");
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
        assertThat(dialect.transactionalDml()).isFalse();
        assertThat(dev.itersnap.spi.Dialects.named("databricks")).isInstanceOf(DatabricksDialect.class);
    }
}
