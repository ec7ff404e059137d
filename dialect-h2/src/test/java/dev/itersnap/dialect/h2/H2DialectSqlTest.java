package dev.itersnap.dialect.h2;

import dev.itersnap.core.ColumnNames;
import dev.itersnap.core.HardDeletes;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.TableName;
import dev.itersnap.spi.ResolvedModel;
import dev.itersnap.spi.SourceColumn;
import org.junit.jupiter.api.Test;

import java.sql.Types;
import java.util.List;
import java.util.Locale;

import static org.assertj.core.api.Assertions.assertThat;

/** Expected SQL of the H2 dialect: quoting, bind counts, and the exact text of the small statements. */
class H2DialectSqlTest {
    private final H2Dialect dialect = new H2Dialect();

    private ResolvedModel model(HardDeletes hardDeletes) {
        ModelSettings s = ModelSettings.builder("customers").target("snap.customers")
                .source("SELECT * FROM raw WHERE note <> 'x?'").uniqueKey("id").updatedAt("updated_at")
                .sequenceBy("file_date").hardDeletes(hardDeletes).deleteWhen("op = 'D'").build();
        SourceColumn id = new SourceColumn("ID", Types.INTEGER, "INTEGER", 32, 0);
        SourceColumn status = new SourceColumn("STATUS", Types.VARCHAR, "CHARACTER VARYING", 20, 0);
        SourceColumn upd = new SourceColumn("UPDATED_AT", Types.TIMESTAMP, "TIMESTAMP", 26, 6);
        SourceColumn seq = new SourceColumn("FILE_DATE", Types.DATE, "DATE", 10, 0);
        ColumnNames meta = ColumnNames.withOverrides(null);
        java.util.Map<String, String> upper = meta.asMap();
        upper.replaceAll((k, v) -> v.toUpperCase(Locale.ROOT));
        return new ResolvedModel(s, x -> x.toUpperCase(Locale.ROOT), new TableName(List.of("SNAP", "CUSTOMERS")),
                "ITERSNAP_METADATA", new TableName(List.of("ITERSNAP_METADATA", "ITERSNAP_STAGE_CUSTOMERS")),
                new TableName(List.of("ITERSNAP_METADATA", "ITERSNAP_WORK_CUSTOMERS")), List.of(id, status, upd, seq),
                List.of(), List.of("ID"), "UPDATED_AT", "FILE_DATE", List.of("STATUS"),
                ColumnNames.withOverrides(upper), seq, upd);
    }

    private static long binds(String sql) {
        return sql.chars().filter(ch -> ch == '?').count();
    }

    @Test
    void rollbackDeletesOpenedAndReopensClosedVersions() {
        assertThat(dialect.rollback(model(HardDeletes.IGNORE), List.of("STATUS"))).containsExactly(
                "DELETE FROM \"SNAP\".\"CUSTOMERS\" WHERE \"DBT_OPENED_SEQ\" >= CAST(? AS DATE)",
                "UPDATE \"SNAP\".\"CUSTOMERS\" SET \"DBT_VALID_TO\" = NULL, \"DBT_CHANGE_TYPE\" = 'insert', "
                        + "\"CHANGED_ATTRIBUTES\" = NULL, \"DBT_CLOSED_SEQ\" = NULL WHERE \"DBT_CLOSED_SEQ\" >= CAST(? AS DATE)",
                "UPDATE \"SNAP\".\"CUSTOMERS\" SET \"STATUS\" = NULL",
                "DELETE FROM \"ITERSNAP_METADATA\".\"ITERSNAP_ARCHIVE_CUSTOMERS\" WHERE \"FILE_DATE\" >= CAST(? AS DATE)");
    }

    @Test
    void historyTableHasSourceMetaAndBookkeepingColumnsWithTheirTypes() {
        List<String> ddl = dialect.createHistory(model(HardDeletes.NEW_RECORD));
        assertThat(ddl.get(0)).isEqualTo("CREATE SCHEMA IF NOT EXISTS \"SNAP\"");
        assertThat(ddl.get(1)).isEqualTo("CREATE TABLE \"SNAP\".\"CUSTOMERS\" (\"ID\" INTEGER, "
                + "\"STATUS\" CHARACTER VARYING(20), \"UPDATED_AT\" TIMESTAMP(6), \"FILE_DATE\" DATE, "
                + "\"DBT_SCD_ID\" VARCHAR(64), \"DBT_UPDATED_AT\" TIMESTAMP(6), \"DBT_VALID_FROM\" TIMESTAMP(6), "
                + "\"DBT_VALID_TO\" TIMESTAMP(6), \"DBT_CHANGE_TYPE\" VARCHAR(16), \"CHANGED_ATTRIBUTES\" "
                + "VARCHAR(1000000), \"DBT_IS_DELETED\" BOOLEAN, \"DBT_OPENED_SEQ\" DATE, \"DBT_CLOSED_SEQ\" DATE)");
        assertThat(ddl).anyMatch(s -> s.startsWith("CREATE INDEX") && s.contains("(\"ID\", \"DBT_VALID_TO\")"));
    }

    @Test
    void stageReadsTheSourceOnceFromTheBoundSequenceAndClassifiesDeletes() {
        String sql = dialect.stageSource(model(HardDeletes.IGNORE), false);
        assertThat(sql).contains("FROM (SELECT * FROM raw WHERE note <> 'x?') s0 WHERE s0.\"FILE_DATE\" >= CAST(? AS DATE)")
                .contains("CASE WHEN (op = 'D') THEN TRUE ELSE FALSE END")
                .contains("ROW_NUMBER() OVER (PARTITION BY s0.\"FILE_DATE\", s0.\"ID\", s0.\"STATUS\", s0.\"UPDATED_AT\" "
                        + "ORDER BY s0.\"FILE_DATE\")")
                .contains("SUM(CASE WHEN s.\"ITERSNAP_COPY_NO\" = 1 THEN 1 ELSE 0 END) OVER (PARTITION BY s.\"FILE_DATE\", "
                        + "s.\"ID\") > 1 THEN 'duplicate_key' WHEN s.\"ITERSNAP_COPY_NO\" > 1 THEN 'duplicate_copy'");
    }

    private ResolvedModel plainSource(ResolvedModel m, String source) {
        ModelSettings s = ModelSettings.builder("customers").target("snap.customers").source(source).uniqueKey("id")
                .updatedAt("updated_at").sequenceBy("file_date").hardDeletes(m.settings().hardDeletes()).build();
        return new ResolvedModel(s, m.fold(), m.target(), m.metadataSchema(), m.stage(), m.work(), m.sourceColumns(),
                m.historyOnly(), m.keys(), m.updatedAt(), m.sequenceBy(), m.tracked(), m.meta(), m.sequenceColumn(),
                m.updatedAtColumn());
    }

    @Test
    void aPlainTableSourceIsReadAsTheTableSoItsIndexesServe() {
        ResolvedModel m = model(HardDeletes.IGNORE);
        assertThat(dialect.discoverSequences(m))
                .isEqualTo("SELECT DISTINCT s.\"FILE_DATE\" FROM (SELECT * FROM raw WHERE note <> 'x?') s");
        assertThat(dialect.discoverSequences(plainSource(m, "select *  from raw.\"Cust\"\"s\" ")))
                .isEqualTo("SELECT DISTINCT s.\"FILE_DATE\" FROM raw.\"Cust\"\"s\" s");
        assertThat(dialect.discoverSequences(plainSource(m, "SELECT * FROM raw r")))
                .isEqualTo("SELECT DISTINCT s.\"FILE_DATE\" FROM (SELECT * FROM raw r) s");
        assertThat(dialect.stageSource(plainSource(m, "SELECT * FROM raw"), false))
                .contains(" FROM raw s0 WHERE s0.\"FILE_DATE\" >= CAST(? AS DATE)) s");
    }

    @Test
    void nullSequencesAreStagedByTheirOwnBranchSoTheSequenceFilterKeepsItsIndex() {
        String sql = dialect.stageSource(plainSource(model(HardDeletes.IGNORE), "SELECT * FROM raw"), true);
        assertThat(sql).contains("FROM (SELECT s0.\"ID\", s0.\"STATUS\", s0.\"UPDATED_AT\", s0.\"FILE_DATE\" FROM raw s0 "
                + "WHERE s0.\"FILE_DATE\" >= CAST(? AS DATE) UNION ALL SELECT s0.\"ID\", s0.\"STATUS\", s0.\"UPDATED_AT\", "
                + "s0.\"FILE_DATE\" FROM raw s0 WHERE s0.\"FILE_DATE\" IS NULL) s0) s");
        assertThat(binds(sql)).isEqualTo(1);
    }

    @Test
    void fullBatchesLeaveRowsThatChangeNothingOutOfTheWorkTable() {
        assertThat(dialect.classifyBatch(model(HardDeletes.INVALIDATE), List.of())).endsWith(") x WHERE NOT COALESCE(x.\"X_REJ\" IS NULL AND NOT x.\"X_DEL\" AND x.\"X_HAS\" AND NOT "
                        + "x.\"X_CDEL\" AND NOT x.\"X_CHG\" AND x.\"X_SAME\", FALSE)");
        // without full batches those rows are archived; while a column is introduced they fill it
        assertThat(dialect.classifyBatch(model(HardDeletes.IGNORE), List.of())).endsWith(") x");
        assertThat(dialect.classifyBatch(model(HardDeletes.INVALIDATE), List.of("STATUS"))).endsWith(") x");
    }

    @Test
    void everyBatchStatementBindsItsValuesAsDocumented() {
        ResolvedModel m = model(HardDeletes.NEW_RECORD);
        assertThat(binds(dialect.classifyBatch(m, List.of()))).isEqualTo(1);
        assertThat(binds(dialect.closeAbsent(m))).isEqualTo(4);
        assertThat(binds(dialect.mergeBatch(m))).isEqualTo(3);
        assertThat(binds(dialect.insertDeletionRecords(m))).isEqualTo(3);
        assertThat(binds(dialect.logRejected(m))).isEqualTo(4);
        assertThat(binds(dialect.logNullSequences(m))).isEqualTo(4);
        assertThat(binds(dialect.timelineCheck(m))).isEqualTo(2);
        assertThat(binds(dialect.stageReproduced(m, List.of(), true))).isEqualTo(5);
        assertThat(binds(dialect.stageReproduced(m, List.of(), false))).isEqualTo(4);
        assertThat(binds(dialect.archiveBatch(m))).isZero();
    }

    @Test
    void timelineCheckJoinsTheKeysTouchedFromTheBoundSequenceToTheirVersions() {
        assertThat(dialect.timelineCheck(model(HardDeletes.IGNORE))).contains(" FROM (SELECT x.\"ID\" FROM "
                + "\"SNAP\".\"CUSTOMERS\" x WHERE x.\"DBT_OPENED_SEQ\" >= CAST(? AS DATE) UNION SELECT x.\"ID\" FROM "
                + "\"SNAP\".\"CUSTOMERS\" x WHERE x.\"DBT_CLOSED_SEQ\" >= CAST(? AS DATE)) k JOIN \"SNAP\".\"CUSTOMERS\" h "
                + "ON k.\"ID\" = h.\"ID\") v WHERE v.open_count > 1");
    }

    @Test
    void mergeClosesAndInsertsInOneStatementKeyedOnTheCurrentVersion() {
        String sql = dialect.mergeBatch(model(HardDeletes.IGNORE));
        assertThat(sql).startsWith("MERGE INTO \"SNAP\".\"CUSTOMERS\" t USING (")
                .contains("ON (t.\"ID\" = m.\"ITERSNAP_MK0\" AND t.\"DBT_VALID_TO\" IS NULL)")
                .contains("WHEN MATCHED THEN UPDATE SET").contains("WHEN NOT MATCHED THEN INSERT");
    }

    @Test
    void aReproducedBatchComesFromTheVersionsItLeftLiveAndItsArchivedRows() {
        String sql = dialect.stageReproduced(model(HardDeletes.INVALIDATE), List.of("STATUS"), true);
        assertThat(sql).contains("h.\"DBT_OPENED_SEQ\" <= CAST(? AS DATE) AND (h.\"DBT_CLOSED_SEQ\" IS NULL OR "
                        + "h.\"DBT_CLOSED_SEQ\" > CAST(? AS DATE))")
                .contains("NOT EXISTS (SELECT 1 FROM \"ITERSNAP_METADATA\".\"ITERSNAP_ARCHIVE_CUSTOMERS\" a WHERE")
                .contains("UNION ALL SELECT a.\"ID\", NULL, a.\"UPDATED_AT\", a.\"FILE_DATE\"");
    }

    @Test
    void identifiersAreQuotedWithEmbeddedQuotesDoubled() {
        assertThat(dialect.quote("A\"B")).isEqualTo("\"A\"\"B\"");
    }

    @Test
    void columnTypesKeepLengthsPrecisionAndScale() {
        assertThat(dialect.columnType(new SourceColumn("X", Types.NUMERIC, "NUMERIC", 12, 2))).isEqualTo("NUMERIC(12, 2)");
        assertThat(dialect.columnType(new SourceColumn("X", Types.VARCHAR, "CHARACTER VARYING", 40, 0)))
                .isEqualTo("CHARACTER VARYING(40)");
        assertThat(dialect.columnType(new SourceColumn("X", Types.TIMESTAMP_WITH_TIMEZONE, "TIMESTAMP WITH TIME ZONE",
                35, 6))).isEqualTo("TIMESTAMP(6) WITH TIME ZONE");
    }
}
