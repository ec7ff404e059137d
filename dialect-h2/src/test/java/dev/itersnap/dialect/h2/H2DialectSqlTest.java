package dev.itersnap.dialect.h2;

import dev.itersnap.core.HardDeletes;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.internal.sql.ApplyStatements;
import dev.itersnap.internal.sql.BatchRun;
import dev.itersnap.internal.sql.ModelTables;
import dev.itersnap.internal.ResolvedModel;
import dev.itersnap.internal.sql.Rollback;
import dev.itersnap.spi.SourceColumn;
import dev.itersnap.spi.StageScope;
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

    private ApplyStatements apply(ResolvedModel m, List<String> introducedAtFirst) {
        return dev.itersnap.internal.sql.SqlSteps.of(dialect).applyBatches(m, new BatchRun(List.of(new BatchRun.BatchInfo(SEQ, "2024-03-01", DELETION_TIME,
                false), new BatchRun.BatchInfo(SEQ.plusDays(1), "2024-03-02", null, false)), "run-1", LOGGED_AT,
                List.of(), introducedAtFirst));
    }

    /** A late batch (2024-03-01) before a replayed one (2024-03-02), replayed key by key. */
    private ApplyStatements replay(ResolvedModel m) {
        return dev.itersnap.internal.sql.SqlSteps.of(dialect).applyBatches(m, new BatchRun(List.of(new BatchRun.BatchInfo(SEQ, "2024-03-01", DELETION_TIME,
                false), new BatchRun.BatchInfo(SEQ.plusDays(1), "2024-03-02", null, true, true)), "run-1", LOGGED_AT,
                List.of(), List.of()));
    }

    @Test
    void aKeyScopedReplayFindsTheKeysALateBatchChangesFromTheHistoryAsItWasThen() {
        ApplyStatements a = replay(model(HardDeletes.INVALIDATE));
        String keys = a.prepare().get(a.prepare().size() - 1).sql();
        // the version current just before the late batch, by the sequences that opened and closed it: the versions of
        // the late rows' keys current at each late batch first, then joined to the late rows by key and batch
        String c = "itersnap_outer_c";
        assertThat(keys).contains("LEFT JOIN (SELECT " + c + ".*, b0.\"FILE_DATE\" AS \"ITERSNAP_AT\" FROM "
                + "\"SNAP\".\"CUSTOMERS\" " + c + " JOIN \"ITERSNAP_METADATA\".\"ITERSNAP_BATCHES_CUSTOMERS\" b0 ON "
                + "b0.\"ITERSNAP_IDX\" < 3 AND NOT b0.\"ITERSNAP_REPLAYED\" AND " + c + ".\"DBT_OPENED_SEQ\" < "
                + "b0.\"FILE_DATE\" AND (" + c + ".\"DBT_CLOSED_SEQ\" IS NULL OR " + c + ".\"DBT_CLOSED_SEQ\" > "
                + "b0.\"FILE_DATE\") WHERE EXISTS (")
                .contains("WHERE s1.\"ID\" = " + c + ".\"ID\")) c ON c.\"ID\" = s.\"ID\" AND c.\"ITERSNAP_AT\" = "
                        + "b.\"FILE_DATE\"");
        // the keys of the batches after the replayed ones only (here: none), and each key's first batch the least
        assertThat(keys).doesNotContain(">= 3").contains("MIN(k.\"ITERSNAP_FROM\")");
        assertThat(a.before()).isNotNull();
        assertThat(a.before().derive().sql()).contains("b.\"ITERSNAP_REPLAYED\"")
                .contains("k.\"ITERSNAP_FROM\" = 1");
        assertThat(a.derivation().derive().sql()).contains("b.\"ITERSNAP_IDX\" >= k.\"ITERSNAP_FROM\"");
        assertThat(apply(model(HardDeletes.INVALIDATE), List.of()).before()).isNull();
    }

    @Test
    void aKeyScopedRollbackMergesOverTheKeysComputedAgain() {
        List<Statement> sql = dev.itersnap.internal.sql.SqlSteps.of(dialect).rollback(model(HardDeletes.IGNORE), Rollback.keys(SEQ, true));
        assertThat(sql).map(Statement::sql).allMatch(s -> s.startsWith("MERGE INTO "));
        assertThat(sql.get(0).sql()).isEqualTo("MERGE INTO \"SNAP\".\"CUSTOMERS\" t USING (SELECT k.\"ID\" FROM "
                + "\"ITERSNAP_METADATA\".\"ITERSNAP_KEYS_CUSTOMERS\" k WHERE k.\"ITERSNAP_FROM\" = 1) k ON "
                + "t.\"ID\" = k.\"ID\" AND t.\"DBT_OPENED_SEQ\" >= CAST(? AS DATE) WHEN MATCHED THEN DELETE");
        assertThat(sql.get(3).sql()).contains("\"ITERSNAP_ERRORS\" t USING (SELECT DISTINCT")
                .contains("WHERE b.\"ITERSNAP_REPLAYED\") x ON t.\"MODEL\" = ? AND");
        assertThat(sql).map(Statement::values).containsExactly(List.of(SEQ), List.of(SEQ), List.of(SEQ),
                List.of("customers"));
        assertThat(dev.itersnap.internal.sql.SqlSteps.of(dialect).rollback(model(HardDeletes.IGNORE), Rollback.keys(SEQ, false))).hasSize(3);
        assertThat(dev.itersnap.internal.sql.SqlSteps.of(dialect).stageSource(model(HardDeletes.IGNORE), SEQ, true, StageScope.REPLAYED_KEYS).sql())
                .contains("JOIN \"ITERSNAP_METADATA\".\"ITERSNAP_KEYS_CUSTOMERS\" sk ON sk.\"ID\" = s0.\"ID\" AND "
                        + "sk.\"ITERSNAP_FROM\" = 1").doesNotContain("IS NULL) s0");
    }

    @Test
    void rollbackDeletesOpenedAndReopensClosedVersions() {
        List<Statement> sql = dev.itersnap.internal.sql.SqlSteps.of(dialect).rollback(model(HardDeletes.IGNORE), Rollback.from(SEQ, List.of("STATUS")));
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
        assertThat(dev.itersnap.internal.sql.SqlSteps.of(dialect).rollback(model(HardDeletes.IGNORE), Rollback.batch(SEQ))).map(Statement::sql)
                .containsExactly("DELETE FROM \"SNAP\".\"CUSTOMERS\" WHERE \"DBT_OPENED_SEQ\" = ?",
                        "UPDATE \"SNAP\".\"CUSTOMERS\" SET \"DBT_VALID_TO\" = NULL, \"DBT_CHANGE_TYPE\" = 'insert', "
                                + "\"CHANGED_ATTRIBUTES\" = NULL, \"DBT_CLOSED_SEQ\" = NULL WHERE \"DBT_CLOSED_SEQ\" = ?",
                        "DELETE FROM \"ITERSNAP_METADATA\".\"ITERSNAP_ARCHIVE_CUSTOMERS\" WHERE \"FILE_DATE\" = ?");
        assertThat(dev.itersnap.internal.sql.SqlSteps.of(dialect).rollback(model(HardDeletes.IGNORE), Rollback.archived(SEQ))).map(Statement::sql)
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
        Statement stage = dev.itersnap.internal.sql.SqlSteps.of(dialect).stageSource(model(HardDeletes.IGNORE), SEQ, false);
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

    /**
     * The fingerprint of each batch in the statement that counts its rows: per column the value's text prefixed with
     * its length, 'N' for NULL (so NULL and '' differ and no two rows share a text), the row's SHA-256 cut to 64 bits,
     * the distinct ones summed as a DECIMAL (no overflow, order-independent, exact copies change nothing).
     */
    @Test
    void fingerprintsAreTheSumOfRowHashesInTheDiscoveryStatement() {
        ResolvedModel m = plainSource(model(HardDeletes.IGNORE), "SELECT * FROM raw");
        List<SourceColumn> columns = m.sourceColumns().subList(0, 2);
        String id = columns.get(0).name();
        String second = columns.get(1).name();
        String hash = "CAST(SUBSTRING(HASH('SHA-256', (COALESCE(('V' || CAST(LENGTH(CAST(s.\"" + id
                + "\" AS VARCHAR)) AS VARCHAR) || ':' || CAST(s.\"" + id + "\" AS VARCHAR)), 'N') || COALESCE(('V' || "
                + "CAST(LENGTH(CAST(s.\"" + second + "\" AS VARCHAR)) AS VARCHAR) || ':' || CAST(s.\"" + second
                + "\" AS VARCHAR)), 'N'))), 1, 8) AS BIGINT)";
        // the distinct row hashes summed per batch: grouped by batch and hash first (copies counted), then summed
        String around = "SELECT x.\"ITERSNAP_S\", SUM(x.\"ITERSNAP_N\"), SUM(CAST(x.\"ITERSNAP_H\" AS DECIMAL(20, 0))) "
                + "FROM (SELECT y.\"ITERSNAP_S\", y.\"ITERSNAP_H\", COUNT(*) AS \"ITERSNAP_N\" FROM (SELECT s.\"FILE_DATE\" "
                + "AS \"ITERSNAP_S\", " + hash + " AS \"ITERSNAP_H\" FROM raw s WHERE %s) y GROUP BY y.\"ITERSNAP_S\", "
                + "y.\"ITERSNAP_H\") x GROUP BY x.\"ITERSNAP_S\"";
        assertThat(dev.itersnap.internal.sql.SqlSteps.of(dialect).fingerprintSequences(m, columns, null).sql())
                .isEqualTo(String.format(around, "s.\"FILE_DATE\" IS NOT NULL"));
        // the batches a run compares, bound: only their rows are read and hashed
        var some = dev.itersnap.internal.sql.SqlSteps.of(dialect).fingerprintSequences(m, columns, List.of(SEQ, SEQ.plusDays(1)));
        assertThat(some.sql()).isEqualTo(String.format(around,
                "s.\"FILE_DATE\" IN (CAST(? AS DATE), CAST(? AS DATE))"));
        assertThat(some.values()).containsExactly(SEQ, SEQ.plusDays(1));
        // counts only (restatements: ignore)
        assertThat(dev.itersnap.internal.sql.SqlSteps.of(dialect).fingerprintSequences(m, null, List.of(SEQ)).sql()).isEqualTo("SELECT s.\"FILE_DATE\", "
                + "COUNT(*) FROM raw s WHERE s.\"FILE_DATE\" IN (CAST(? AS DATE)) GROUP BY s.\"FILE_DATE\"");
    }

    @Test
    void aPlainTableSourceIsReadAsTheTableSoItsIndexesServe() {
        ResolvedModel m = model(HardDeletes.IGNORE);
        assertThat(dev.itersnap.internal.sql.SqlSteps.of(dialect).discoverSequences(m).sql())
                .isEqualTo("SELECT DISTINCT s.\"FILE_DATE\" FROM (SELECT * FROM raw WHERE note <> 'x?') s");
        assertThat(dev.itersnap.internal.sql.SqlSteps.of(dialect).discoverSequences(plainSource(m, "select *  from raw.\"Cust\"\"s\" ")).sql())
                .isEqualTo("SELECT DISTINCT s.\"FILE_DATE\" FROM raw.\"Cust\"\"s\" s");
        assertThat(dev.itersnap.internal.sql.SqlSteps.of(dialect).discoverSequences(plainSource(m, "SELECT * FROM raw r")).sql())
                .isEqualTo("SELECT DISTINCT s.\"FILE_DATE\" FROM (SELECT * FROM raw r) s");
        assertThat(dev.itersnap.internal.sql.SqlSteps.of(dialect).stageSource(plainSource(m, "SELECT * FROM raw"), SEQ, false).sql())
                .contains(" FROM raw s0 WHERE s0.\"FILE_DATE\" >= CAST(? AS DATE)) s");
    }

    @Test
    void nullSequencesAreStagedByTheirOwnBranchSoTheSequenceFilterKeepsItsIndex() {
        Statement stage = dev.itersnap.internal.sql.SqlSteps.of(dialect).stageSource(plainSource(model(HardDeletes.IGNORE), "SELECT * FROM raw"), SEQ, true);
        assertThat(stage.sql()).contains("FROM (SELECT s0.\"ID\", s0.\"STATUS\", s0.\"UPDATED_AT\", s0.\"FILE_DATE\" FROM raw s0 "
                + "WHERE s0.\"FILE_DATE\" >= CAST(? AS DATE) UNION ALL SELECT s0.\"ID\", s0.\"STATUS\", s0.\"UPDATED_AT\", "
                + "s0.\"FILE_DATE\" FROM raw s0 WHERE s0.\"FILE_DATE\" IS NULL) s0) s");
        assertThat(stage.values()).containsExactly(SEQ);
    }

    @Test
    void fullBatchesArchiveOnlyTheRowsThatChangeNothingButDifferFromTheirVersion() {
        // under full batches a row equal to its version in every column is not archived (the history reproduces it):
        // the derivation compares each noop with the row that opened its version and keeps only those that differ
        ApplyStatements full = apply(model(HardDeletes.INVALIDATE), List.of());
        assertThat(full.derivation().derive().sql())
                .contains("FIRST_VALUE(o.\"STATUS\") OVER (PARTITION BY o.\"ID\", o.\"ITERSNAP_W_OIDX\"")
                .contains("= 'noop' AND NOT ((y.\"ITERSNAP_W_OV0\" IS DISTINCT FROM y.\"STATUS\") OR "
                        + "(y.\"ITERSNAP_W_OV1\" IS DISTINCT FROM y.\"UPDATED_AT\"))");
        // with the rows that repeat them in the next batches (left out of the derivation), from the stage
        assertThat(full.archive().sql()).endsWith("b.\"ITERSNAP_IDX\" >= w.\"ITERSNAP_IDX\" AND b.\"ITERSNAP_IDX\" < "
                + "w.\"ITERSNAP_UPTO\" WHERE w.\"ITERSNAP_ACTION\" = 'noop'");
        assertThat(full.derivation().derive().sql()).contains("WHERE NOT (k.\"ITERSNAP_W_RP\" = 1 AND "
                + "k.\"ITERSNAP_W_RN\" = 1)");
        // without full batches every such row is archived from the stage, those of the keys the run leaves alone
        // included: every accepted row that opened or changed no version; the work table keeps no noop
        ApplyStatements partial = apply(model(HardDeletes.IGNORE), List.of());
        assertThat(partial.derivation().derive().sql()).doesNotContain("ITERSNAP_W_OV0")
                .contains("= 'noop' AND NOT FALSE");
        assertThat(partial.archive().sql()).endsWith("NOT EXISTS (SELECT 1 FROM "
                + "\"ITERSNAP_METADATA\".\"ITERSNAP_WORK_CUSTOMERS\" w WHERE w.\"ID\" = itersnap_outer_s.\"ID\" AND "
                + "w.\"ITERSNAP_IDX\" = itersnap_outer_b.\"ITERSNAP_IDX\" AND w.\"ITERSNAP_ACTION\" IN ('insert', "
                + "'return', 'change'))");
    }

    @Test
    void everyStatementCarriesItsValuesInTheOrderOfItsMarkers() {
        ResolvedModel m = model(HardDeletes.NEW_RECORD);
        ApplyStatements a = apply(m, List.of("STATUS"));
        assertThat(a.listBatches().get(0).values()).containsExactly(SEQ, "2024-03-01", DELETION_TIME,
                SEQ.plusDays(1), "2024-03-02", null);
        // under full batches the batches are listed with their deletion times, read from the stage: one statement
        assertThat(a.listBatches()).hasSize(1);
        assertThat(a.listBatches().get(0).sql()).startsWith("INSERT INTO \"ITERSNAP_METADATA\"."
                + "\"ITERSNAP_BATCHES_CUSTOMERS\" (\"FILE_DATE\", \"ITERSNAP_IDX\", \"ITERSNAP_SEQTEXT\", "
                + "\"ITERSNAP_DELTIME\", \"ITERSNAP_RECORDED\", \"ITERSNAP_REPLAYED\", \"ITERSNAP_ND\", "
                + "\"ITERSNAP_ND_REPLAYED\") SELECT ").contains("FROM (VALUES (CAST(? AS DATE), 1, "
                + "CAST(? AS VARCHAR(256)), CAST(? AS TIMESTAMP(6)), FALSE, FALSE), (CAST(? AS DATE), 2, "
                + "CAST(? AS VARCHAR(256)), CAST(? AS TIMESTAMP(6)), FALSE, FALSE)) b (\"FILE_DATE\", ");
        assertThat(a.prepare()).noneSatisfy(s -> assertThat(s.sql()).startsWith("MERGE INTO \"ITERSNAP_METADATA\"."
                + "\"ITERSNAP_BATCHES_CUSTOMERS\""));
        // without full batches they are only listed
        ApplyStatements partial = apply(model(HardDeletes.IGNORE), List.of());
        assertThat(partial.listBatches().get(0).sql()).isEqualTo("INSERT INTO \"ITERSNAP_METADATA\"."
                + "\"ITERSNAP_BATCHES_CUSTOMERS\" (\"FILE_DATE\", \"ITERSNAP_IDX\", \"ITERSNAP_SEQTEXT\", "
                + "\"ITERSNAP_DELTIME\", \"ITERSNAP_RECORDED\", \"ITERSNAP_REPLAYED\") "
                + "VALUES (CAST(? AS DATE), 1, CAST(? AS VARCHAR(256)), CAST(? AS TIMESTAMP(6)), FALSE, FALSE), "
                + "(CAST(? AS DATE), 2, CAST(? AS VARCHAR(256)), CAST(? AS TIMESTAMP(6)), FALSE, FALSE)");
        assertThat(a.prepare().stream().filter(s -> s.step().equals("fill new column")).toList())
                .singleElement().satisfies(s -> assertThat(s.values()).containsExactly(SEQ)); // from the first batch
        assertThat(a.derivation().derive().values()).isEmpty();
        assertThat(a.derivation().counts().values()).isEmpty();
        assertThat(a.insertVersions().values()).isEmpty();
        assertThat(a.closeCurrent().values()).isEmpty();
        assertThat(a.logRejected().values()).containsExactly("customers", "run-1", LOGGED_AT);
        assertThat(a.archive().values()).isEmpty();
        assertThat(dev.itersnap.internal.sql.SqlSteps.of(dialect).logNullSequences(m, "run-1", LOGGED_AT).values())
                .containsExactly("customers", "run-1", LOGGED_AT, "customers");
        assertThat(dev.itersnap.internal.sql.SqlSteps.of(dialect).timelineCheck(m, SEQ).values()).containsExactly(SEQ, SEQ);
        assertThat(dev.itersnap.internal.sql.SqlSteps.of(dialect).stageReproduced(m, SEQ, List.of(), true).values()).containsExactly(SEQ, SEQ, SEQ, SEQ, SEQ);
        assertThat(dev.itersnap.internal.sql.SqlSteps.of(dialect).stageReproduced(m, SEQ, List.of(), false).values()).containsExactly(SEQ, SEQ, SEQ, SEQ);
        List<Statement> all = new java.util.ArrayList<>();
        for (ApplyStatements x : List.of(a, replay(m))) {
            all.addAll(x.listBatches());
            all.addAll(x.prepare());
            for (ApplyStatements.Derivation d : java.util.Arrays.asList(x.before(), x.derivation())) {
                if (d != null) {
                    all.addAll(List.of(d.derive(), d.counts()));
                    all.addAll(d.setAsideRegressions());
                }
            }
            all.addAll(List.of(x.closeCurrent(), x.insertVersions(), x.writeVersions(), x.logRejected(), x.archive()));
        }
        all.addAll(dev.itersnap.internal.sql.SqlSteps.of(dialect).rollback(m, Rollback.keys(SEQ, true)));
        all.add(dev.itersnap.internal.sql.SqlSteps.of(dialect).editedVersions(m, SEQ));
        all.add(dev.itersnap.internal.sql.SqlSteps.of(dialect).timelineCheck(m, SEQ, SEQ));
        all.add(dev.itersnap.internal.sql.SqlSteps.of(dialect).openedVersions(m, List.of(SEQ, SEQ)));
        for (StageScope scope : StageScope.values()) { // the source's text has a '?' of its own: values only
            assertThat(dev.itersnap.internal.sql.SqlSteps.of(dialect).stageSource(m, SEQ, true, scope).values()).containsExactly(SEQ);
        }
        for (Statement s : all) {
            assertThat(s.sql().chars().filter(ch -> ch == '?').count()).as(s.step()).isEqualTo(s.values().size());
        }
    }

    @Test
    void timelineCheckJoinsTheKeysTouchedFromTheBoundSequenceToTheirVersions() {
        assertThat(dev.itersnap.internal.sql.SqlSteps.of(dialect).timelineCheck(model(HardDeletes.IGNORE), SEQ).sql()).contains(" FROM (SELECT x.\"ID\" FROM "
                + "\"SNAP\".\"CUSTOMERS\" x WHERE x.\"DBT_OPENED_SEQ\" >= CAST(? AS DATE) UNION SELECT x.\"ID\" FROM "
                + "\"SNAP\".\"CUSTOMERS\" x WHERE x.\"DBT_CLOSED_SEQ\" >= CAST(? AS DATE)) k JOIN \"SNAP\".\"CUSTOMERS\" h "
                + "ON k.\"ID\" = h.\"ID\") v) r WHERE r.itersnap_broken IS NOT NULL");
    }

    @Test
    void theCheckBeforeWritingReadsTheVersionsOfTheKeysInTheKeysTable() {
        String sql = dev.itersnap.internal.sql.SqlSteps.of(dialect).editedVersions(model(HardDeletes.IGNORE), null).sql();
        assertThat(sql).contains(" FROM \"ITERSNAP_METADATA\".\"ITERSNAP_KEYS_CUSTOMERS\" k JOIN \"SNAP\".\"CUSTOMERS\" h ON "
                + "k.\"ID\" = h.\"ID\") v) r WHERE r.itersnap_broken IS NOT NULL").doesNotContain("?");
        assertThat(dev.itersnap.internal.sql.SqlSteps.of(dialect).openedVersions(model(HardDeletes.IGNORE),
                List.of(SEQ, SEQ.plusDays(1))).sql()).isEqualTo("SELECT h.\"DBT_OPENED_SEQ\", COUNT(*) FROM "
                + "\"SNAP\".\"CUSTOMERS\" h WHERE h.\"DBT_OPENED_SEQ\" IN (CAST(? AS DATE), CAST(? AS DATE)) GROUP BY "
                + "h.\"DBT_OPENED_SEQ\"");
    }

    @Test
    void theVersionsCurrentBeforeTheRunAreClosedByOneMergeKeyedOnTheCurrentVersion() {
        String sql = apply(model(HardDeletes.IGNORE), List.of()).closeCurrent().sql();
        assertThat(sql).startsWith("MERGE INTO \"SNAP\".\"CUSTOMERS\" t USING (")
                .contains(") c ON t.\"ID\" = c.\"ID\" AND t.\"DBT_VALID_TO\" IS NULL WHEN MATCHED THEN UPDATE SET");
    }

    @Test
    void aReproducedBatchComesFromTheVersionsItLeftLiveAndItsArchivedRows() {
        String sql = dev.itersnap.internal.sql.SqlSteps.of(dialect).stageReproduced(model(HardDeletes.INVALIDATE), SEQ, List.of("STATUS"), true).sql();
        // the history's alias is referred to from the archive's subquery
        String h = "itersnap_outer_h";
        assertThat(sql).contains(h + ".\"DBT_OPENED_SEQ\" <= CAST(? AS DATE) AND (" + h + ".\"DBT_CLOSED_SEQ\" IS NULL "
                        + "OR " + h + ".\"DBT_CLOSED_SEQ\" > CAST(? AS DATE))")
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
