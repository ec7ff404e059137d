package dev.itersnap.dialect.postgres;

import dev.itersnap.core.HardDeletes;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.internal.sql.ApplyStatements;
import dev.itersnap.internal.sql.BatchRun;
import dev.itersnap.internal.sql.ModelTables;
import dev.itersnap.internal.ResolvedModel;
import dev.itersnap.internal.sql.Rollback;
import dev.itersnap.spi.SourceColumn;
import dev.itersnap.spi.Statement;
import org.junit.jupiter.api.Test;

import java.sql.Types;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.List;
import java.util.Locale;

import static org.assertj.core.api.Assertions.assertThat;

/** Expected SQL of the PostgreSQL dialect. */
class PostgresDialectSqlTest {
    private final PostgresDialect dialect = new PostgresDialect();

    private ResolvedModel model(SourceColumn seq) {
        ModelSettings s = ModelSettings.builder("customers").target("snap.customers").source("SELECT * FROM raw")
                .uniqueKey("id").updatedAt("updated_at").sequenceBy(seq.name()).hardDeletes(HardDeletes.NEW_RECORD)
                .build();
        SourceColumn id = new SourceColumn("id", Types.INTEGER, "int4", 10, 0);
        SourceColumn status = new SourceColumn("status", Types.VARCHAR, "varchar", 20, 0);
        SourceColumn upd = new SourceColumn("updated_at", Types.TIMESTAMP, "timestamptz", 35, 6);
        return ResolvedModel.builder(s, x -> x.toLowerCase(Locale.ROOT)).sourceColumns(List.of(id, status, upd, seq))
                .keys(List.of("id")).updatedAt("updated_at").sequenceBy(seq.name()).tracked(List.of("status")).build();
    }

    private static List<String> sql(List<Statement> statements) {
        return statements.stream().map(Statement::sql).toList();
    }

    private ApplyStatements apply(ResolvedModel m) {
        return dev.itersnap.internal.sql.SqlSteps.of(dialect).applyBatches(m, new BatchRun(List.of(new BatchRun.BatchInfo(LocalDate.of(2024, 3, 1),
                "2024-03-01", null, false)), "run-1", LocalDateTime.now(), List.of(), List.of()));
    }

    @Test
    void historyUsesTimestamptzAndJsonbAndUnqualifiedIndexNames() {
        ResolvedModel m = model(new SourceColumn("batch", Types.BIGINT, "int8", 19, 0));
        List<String> ddl = sql(dialect.createTable(new ModelTables(dialect, m).history()));
        assertThat(ddl.get(1)).isEqualTo("CREATE TABLE \"snap\".\"customers\" (\"id\" integer, \"status\" varchar(20), "
                + "\"updated_at\" timestamptz(6), \"batch\" bigint, \"dbt_scd_id\" VARCHAR(64), \"dbt_updated_at\" "
                + "timestamptz(6), \"dbt_valid_from\" timestamptz(6), \"dbt_valid_to\" timestamptz(6), "
                + "\"dbt_change_type\" VARCHAR(16), \"changed_attributes\" JSONB, \"dbt_is_deleted\" BOOLEAN, "
                + "\"dbt_opened_seq\" bigint, \"dbt_closed_seq\" bigint)");
        assertThat(ddl.get(2)).isEqualTo("CREATE INDEX \"customers_itersnap_key\" ON \"snap\".\"customers\" "
                + "(\"id\", \"dbt_valid_to\")");
    }

    @Test
    void stringSequencesCompareInBinaryCollation() {
        ResolvedModel m = model(new SourceColumn("batch", Types.VARCHAR, "varchar", 20, 0));
        assertThat(dev.itersnap.internal.sql.SqlSteps.of(dialect).rollback(m, Rollback.from("b", List.of())).get(0).sql()).isEqualTo(
                "DELETE FROM \"snap\".\"customers\" WHERE \"dbt_opened_seq\" COLLATE \"C\" >= CAST(? AS varchar(20)) "
                        + "COLLATE \"C\"");
        assertThat(dev.itersnap.internal.sql.SqlSteps.of(dialect).stageSource(m, "b", false).sql())
                .contains("s0.\"batch\" COLLATE \"C\" >= CAST(? AS varchar(20)) COLLATE \"C\"");
    }

    @Test
    void scratchTablesAreUnlogged() {
        ModelTables tables = new ModelTables(dialect, model(new SourceColumn("batch", Types.BIGINT, "int8", 19, 0)));
        List<String> stage = sql(dialect.createTable(tables.stage()));
        assertThat(stage).hasSize(3);
        assertThat(stage.get(0)).isEqualTo("DROP TABLE IF EXISTS \"itersnap_metadata\".\"itersnap_stage_customers\"");
        assertThat(stage.get(1)).startsWith("CREATE UNLOGGED TABLE \"itersnap_metadata\".\"itersnap_stage_customers\" (");
        assertThat(stage.get(2)).isEqualTo("CREATE INDEX \"itersnap_stage_customers_ix\" ON "
                + "\"itersnap_metadata\".\"itersnap_stage_customers\" (\"id\", \"batch\")");
        assertThat(sql(dialect.createTable(tables.work())).get(1))
                .startsWith("CREATE UNLOGGED TABLE \"itersnap_metadata\".\"itersnap_work_customers\" (");
    }

    @Test
    void aPlainTableSourceIsDiscoveredByALooseIndexScanWhenTheSequenceIsIndexed() {
        ResolvedModel m = model(new SourceColumn("batch", Types.BIGINT, "int8", 19, 0));
        assertThat(dev.itersnap.internal.sql.SqlSteps.of(dialect).discoverSequences(m).sql())
                .startsWith("WITH RECURSIVE itersnap_gate(ok) AS (SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_index i ")
                .contains("WHERE i.indrelid = to_regclass('raw') AND am.amname = 'btree' AND i.indisvalid AND "
                        + "i.indpred IS NULL AND a.attname = 'batch' AND i.indcollation[0] = a.attcollation)")
                .contains("SELECT (SELECT s.\"batch\" FROM raw s WHERE s.\"batch\" > r.v ORDER BY s.\"batch\" LIMIT 1)")
                .endsWith(" UNION ALL SELECT DISTINCT s.\"batch\" FROM raw s WHERE NOT (SELECT ok FROM itersnap_gate)")
                .doesNotContain("COUNT(")
                .doesNotContain("?");
    }

    @Test
    void timelineCheckFindsTheTouchedKeysWithACorrelatedExists() {
        ResolvedModel m = model(new SourceColumn("batch", Types.BIGINT, "int8", 19, 0));
        assertThat(dev.itersnap.internal.sql.SqlSteps.of(dialect).timelineCheck(m, 7L).sql()).contains(" FROM \"snap\".\"customers\" h WHERE EXISTS (SELECT 1 FROM "
                + "\"snap\".\"customers\" x WHERE x.\"id\" = h.\"id\" AND (x.\"dbt_opened_seq\" >= CAST(? AS bigint) OR "
                + "x.\"dbt_closed_seq\" >= CAST(? AS bigint)))) v) r WHERE r.itersnap_broken IS NOT NULL");
    }

    @Test
    void integerSequencesNeedNoCollation() {
        ResolvedModel m = model(new SourceColumn("batch", Types.BIGINT, "int8", 19, 0));
        assertThat(dev.itersnap.internal.sql.SqlSteps.of(dialect).rollback(m, Rollback.from(7L, List.of())).get(0).sql()).doesNotContain("COLLATE");
    }

    @Test
    void changedAttributesAreCastToJsonbAndRecordsUseRowToJson() {
        ResolvedModel m = model(new SourceColumn("batch", Types.DATE, "date", 13, 0));
        assertThat(apply(m).insertVersions().sql()).contains("AS JSONB)");
        assertThat(apply(m).logRejected().sql()).contains("(SELECT CAST(row_to_json(r) AS TEXT) FROM (SELECT s.\"id\" AS \"id\"");
    }

    @Test
    void widensOnlyLosslessly() {
        ResolvedModel m = model(new SourceColumn("batch", Types.DATE, "date", 13, 0));
        SourceColumn int4 = new SourceColumn("n", Types.INTEGER, "int4", 10, 0);
        SourceColumn int8 = new SourceColumn("n", Types.BIGINT, "int8", 19, 0);
        SourceColumn v10 = new SourceColumn("n", Types.VARCHAR, "varchar", 10, 0);
        SourceColumn v20 = new SourceColumn("n", Types.VARCHAR, "varchar", 20, 0);
        assertThat(dialect.widens(int4, int8)).isTrue();
        assertThat(dialect.widenColumn(m.target(), "n", int8).sql())
                .isEqualTo("ALTER TABLE \"snap\".\"customers\" ALTER COLUMN \"n\" TYPE bigint");
        assertThat(dialect.widens(int8, int4)).isFalse();
        assertThat(dialect.widens(v10, v20)).isTrue();
        assertThat(dialect.widenColumn(m.target(), "n", v20).sql()).endsWith("TYPE varchar(20)");
        assertThat(dialect.widens(v20, v10)).isFalse();
        assertThat(dialect.widens(v10, int4)).isFalse();
    }
}
