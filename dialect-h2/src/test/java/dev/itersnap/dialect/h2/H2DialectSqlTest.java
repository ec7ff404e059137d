package dev.itersnap.dialect.h2;

import dev.itersnap.core.HardDeletes;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.spi.Batch;
import dev.itersnap.spi.BatchStatements;
import dev.itersnap.spi.ModelTables;
import dev.itersnap.spi.ResolvedModel;
import dev.itersnap.spi.Rollback;
import dev.itersnap.spi.SourceColumn;
import dev.itersnap.spi.Statement;
import org.junit.jupiter.api.Test;

import java.sql.Types;
import java.time.LocalDate;
import java.time.LocalDateTime;
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
        return ResolvedModel.builder(s, x -> x.toUpperCase(Locale.ROOT)).sourceColumns(List.of(id, status, upd, seq))
                .keys(List.of("ID")).updatedAt("UPDATED_AT").sequenceBy("FILE_DATE").tracked(List.of("STATUS"))
                .build();
    }

    private static final LocalDate SEQ = LocalDate.of(2024, 3, 1);
    private static final LocalDateTime DELETION_TIME = LocalDateTime.of(2024, 3, 1, 0, 0);
    private static final LocalDateTime LOGGED_AT = LocalDateTime.of(2024, 3, 2, 6, 0);

    private BatchStatements batch(ResolvedModel m, List<String> untracked) {
        return dialect.applyBatch(m, new Batch(SEQ, "2024-03-01", "run-1", LOGGED_AT, untracked, List.of(),
                DELETION_TIME));
    }

    @Test
    void rollbackDeletesOpenedAndReopensClosedVersions() {
        List<Statement> sql = dialect.rollback(model(HardDeletes.IGNORE), Rollback.from(SEQ, List.of("STATUS")));
        assertThat(sql).map(Statement::sql).containsExactly(
                "DELETE FROM \"SNAP\".\"CUSTOMERS\" WHERE \"DBT_OPENED_SEQ\" >= CAST(? AS DATE)",
                "UPDATE \"SNAP\".\"CUSTOMERS\" SET \"DBT_VALID_TO\" = NULL, \"DBT_CHANGE_TYPE\" = 'insert', "
                        + "\"CHANGED_ATTRIBUTES\" = NULL, \"DBT_CLOSED_SEQ\" = NULL WHERE \"DBT_CLOSED_SEQ\" >= CAST(? AS DATE)",
                "UPDATE \"SNAP\".\"CUSTOMERS\" SET \"STATUS\" = NULL",
                "DELETE FROM \"ITERSNAP_METADATA\".\"ITERSNAP_ARCHIVE_CUSTOMERS\" WHERE \"FILE_DATE\" >= CAST(? AS DATE)");
        assertThat(sql).map(Statement::values).containsExactly(List.of(SEQ), List.of(SEQ), List.of(), List.of(SEQ));
    }

    @Test
    void recoveryUndoesOneBatchByEquality() {
        assertThat(dialect.rollback(model(HardDeletes.IGNORE), Rollback.batch(SEQ))).map(Statement::sql)
                .containsExactly("DELETE FROM \"SNAP\".\"CUSTOMERS\" WHERE \"DBT_OPENED_SEQ\" = ?",
                        "UPDATE \"SNAP\".\"CUSTOMERS\" SET \"DBT_VALID_TO\" = NULL, \"DBT_CHANGE_TYPE\" = 'insert', "
                                + "\"CHANGED_ATTRIBUTES\" = NULL, \"DBT_CLOSED_SEQ\" = NULL WHERE \"DBT_CLOSED_SEQ\" = ?",
                        "DELETE FROM \"ITERSNAP_METADATA\".\"ITERSNAP_ARCHIVE_CUSTOMERS\" WHERE \"FILE_DATE\" = ?");
        assertThat(dialect.rollback(model(HardDeletes.IGNORE), Rollback.archived(SEQ))).map(Statement::sql)
                .containsExactly("DELETE FROM \"ITERSNAP_METADATA\".\"ITERSNAP_ARCHIVE_CUSTOMERS\" WHERE \"FILE_DATE\" = ?");
    }

    @Test
    void historyTableHasSourceMetaAndBookkeepingColumnsWithTheirTypes() {
        ResolvedModel m = model(HardDeletes.NEW_RECORD);
        List<String> ddl = dialect.createTable(new ModelTables(dialect, m).history()).stream().map(Statement::sql)
                .toList();
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
        Statement stage = dialect.stageSource(model(HardDeletes.IGNORE), SEQ, false);
        assertThat(stage.values()).containsExactly(SEQ);
        assertThat(stage.sql()).contains("FROM (SELECT * FROM raw WHERE note <> 'x?') s0 WHERE s0.\"FILE_DATE\" >= CAST(? AS DATE)")
                .contains("CASE WHEN (op = 'D') THEN TRUE ELSE FALSE END")
                .contains("ROW_NUMBER() OVER (PARTITION BY s0.\"FILE_DATE\", s0.\"ID\", s0.\"STATUS\", s0.\"UPDATED_AT\" "
                        + "ORDER BY s0.\"FILE_DATE\")")
                .contains("SUM(CASE WHEN s.\"ITERSNAP_COPY_NO\" = 1 THEN 1 ELSE 0 END) OVER (PARTITION BY s.\"FILE_DATE\", "
                        + "s.\"ID\") > 1 THEN 'duplicate_key' WHEN s.\"ITERSNAP_COPY_NO\" > 1 THEN 'duplicate_copy'");
    }

    private ResolvedModel plainSource(ResolvedModel m, String source) {
        ModelSettings s = ModelSettings.builder("customers").target("snap.customers").source(source).uniqueKey("id")
                .updatedAt("updated_at").sequenceBy("file_date").hardDeletes(m.settings().hardDeletes()).build();
        return ResolvedModel.builder(s, m.fold()).sourceColumns(m.sourceColumns()).keys(m.keys())
                .updatedAt(m.updatedAt()).sequenceBy(m.sequenceBy()).tracked(m.tracked()).build();
    }

    @Test
    void aPlainTableSourceIsReadAsTheTableSoItsIndexesServe() {
        ResolvedModel m = model(HardDeletes.IGNORE);
        assertThat(dialect.discoverSequences(m).sql())
                .isEqualTo("SELECT s.\"FILE_DATE\", COUNT(*) FROM (SELECT * FROM raw WHERE note <> 'x?') s GROUP BY "
                        + "s.\"FILE_DATE\"");
        assertThat(dialect.discoverSequences(plainSource(m, "select *  from raw.\"Cust\"\"s\" ")).sql())
                .isEqualTo("SELECT s.\"FILE_DATE\", COUNT(*) FROM raw.\"Cust\"\"s\" s GROUP BY s.\"FILE_DATE\"");
        assertThat(dialect.discoverSequences(plainSource(m, "SELECT * FROM raw r")).sql())
                .isEqualTo("SELECT s.\"FILE_DATE\", COUNT(*) FROM (SELECT * FROM raw r) s GROUP BY s.\"FILE_DATE\"");
        assertThat(dialect.stageSource(plainSource(m, "SELECT * FROM raw"), SEQ, false).sql())
                .contains(" FROM raw s0 WHERE s0.\"FILE_DATE\" >= CAST(? AS DATE)) s");
    }

    @Test
    void nullSequencesAreStagedByTheirOwnBranchSoTheSequenceFilterKeepsItsIndex() {
        Statement stage = dialect.stageSource(plainSource(model(HardDeletes.IGNORE), "SELECT * FROM raw"), SEQ, true);
        assertThat(stage.sql()).contains("FROM (SELECT s0.\"ID\", s0.\"STATUS\", s0.\"UPDATED_AT\", s0.\"FILE_DATE\" FROM raw s0 "
                + "WHERE s0.\"FILE_DATE\" >= CAST(? AS DATE) UNION ALL SELECT s0.\"ID\", s0.\"STATUS\", s0.\"UPDATED_AT\", "
                + "s0.\"FILE_DATE\" FROM raw s0 WHERE s0.\"FILE_DATE\" IS NULL) s0) s");
        assertThat(stage.values()).containsExactly(SEQ);
    }

    @Test
    void fullBatchesLeaveRowsThatChangeNothingOutOfTheWorkTable() {
        assertThat(batch(model(HardDeletes.INVALIDATE), List.of()).classify().sql()).endsWith(") x WHERE NOT COALESCE(x.\"X_REJ\" IS NULL AND NOT x.\"X_DEL\" AND x.\"X_HAS\" AND NOT "
                        + "x.\"X_CDEL\" AND NOT x.\"X_CHG\" AND x.\"X_SAME\", FALSE)");
        // without full batches those rows are archived; while a column is introduced they fill it
        assertThat(batch(model(HardDeletes.IGNORE), List.of()).classify().sql()).endsWith(") x");
        assertThat(batch(model(HardDeletes.INVALIDATE), List.of("STATUS")).classify().sql()).endsWith(") x");
    }

    @Test
    void everyStatementCarriesItsValuesInTheOrderOfItsMarkers() {
        ResolvedModel m = model(HardDeletes.NEW_RECORD);
        BatchStatements b = batch(m, List.of());
        assertThat(b.classify().values()).containsExactly(SEQ);
        assertThat(b.count().values()).containsExactly(SEQ);
        assertThat(b.closeAbsent().values()).containsExactly(DELETION_TIME, DELETION_TIME, SEQ, SEQ);
        assertThat(b.merge().values()).containsExactly(SEQ, "2024-03-01", SEQ);
        assertThat(b.deletionRecords().values()).containsExactly("2024-03-01", SEQ, SEQ);
        assertThat(b.logRejected().values()).containsExactly("customers", "run-1", "2024-03-01", LOGGED_AT);
        assertThat(b.archive().values()).isEmpty();
        assertThat(dialect.logNullSequences(m, "run-1", LOGGED_AT).values())
                .containsExactly("customers", "run-1", LOGGED_AT, "customers");
        assertThat(dialect.timelineCheck(m, SEQ).values()).containsExactly(SEQ, SEQ);
        assertThat(dialect.stageReproduced(m, SEQ, List.of(), true).values()).containsExactly(SEQ, SEQ, SEQ, SEQ, SEQ);
        assertThat(dialect.stageReproduced(m, SEQ, List.of(), false).values()).containsExactly(SEQ, SEQ, SEQ, SEQ);
        for (Statement s : List.of(b.classify(), b.count(), b.closeAbsent(), b.merge(), b.deletionRecords(),
                b.logRejected())) {
            assertThat(s.sql().chars().filter(ch -> ch == '?').count()).as(s.step()).isEqualTo(s.values().size());
        }
    }

    @Test
    void aBatchWithoutDeletionTimeClosesNoAbsentKeysAndWithoutDeletionRecordsAddsNone() {
        BatchStatements b = dialect.applyBatch(model(HardDeletes.INVALIDATE), new Batch(SEQ, "2024-03-01", "run-1",
                LOGGED_AT, List.of(), List.of(), null));
        assertThat(b.closeAbsent()).isNull();
        assertThat(b.deletionRecords()).isNull();
    }

    @Test
    void timelineCheckJoinsTheKeysTouchedFromTheBoundSequenceToTheirVersions() {
        assertThat(dialect.timelineCheck(model(HardDeletes.IGNORE), SEQ).sql()).contains(" FROM (SELECT x.\"ID\" FROM "
                + "\"SNAP\".\"CUSTOMERS\" x WHERE x.\"DBT_OPENED_SEQ\" >= CAST(? AS DATE) UNION SELECT x.\"ID\" FROM "
                + "\"SNAP\".\"CUSTOMERS\" x WHERE x.\"DBT_CLOSED_SEQ\" >= CAST(? AS DATE)) k JOIN \"SNAP\".\"CUSTOMERS\" h "
                + "ON k.\"ID\" = h.\"ID\") v WHERE v.open_count > 1");
    }

    @Test
    void mergeClosesAndInsertsInOneStatementKeyedOnTheCurrentVersion() {
        String sql = batch(model(HardDeletes.IGNORE), List.of()).merge().sql();
        assertThat(sql).startsWith("MERGE INTO \"SNAP\".\"CUSTOMERS\" t USING (")
                .contains("ON (t.\"ID\" = m.\"ITERSNAP_MK0\" AND t.\"DBT_VALID_TO\" IS NULL)")
                .contains("WHEN MATCHED THEN UPDATE SET").contains("WHEN NOT MATCHED THEN INSERT");
    }

    @Test
    void aReproducedBatchComesFromTheVersionsItLeftLiveAndItsArchivedRows() {
        String sql = dialect.stageReproduced(model(HardDeletes.INVALIDATE), SEQ, List.of("STATUS"), true).sql();
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
