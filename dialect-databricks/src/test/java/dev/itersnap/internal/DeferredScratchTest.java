package dev.itersnap.internal;

import dev.itersnap.core.TableName;
import dev.itersnap.dialect.databricks.DatabricksDialect;
import dev.itersnap.dialect.databricks.DatabricksDialectAccess;
import dev.itersnap.spi.Statement;
import dev.itersnap.spi.TableSpec;
import dev.itersnap.spi.TableSpec.ColumnType;
import org.junit.jupiter.api.Test;

import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The run's scratch tables on Delta, each created by the statement that first names it (the engine's routing, with
 * the Databricks dialect's SQL; no database needed): no statement may see a table an earlier run left behind, and the
 * first INSERT into a table creates it with its rows, typed as the table's DDL types them.
 */
class DeferredScratchTest {
    private final DatabricksDialect dialect = new DatabricksDialect();
    private final TableSpec stage = TableSpec.builder(TableName.parse("t", "m.itersnap_stage_x"),
            TableSpec.Creation.SCRATCH).column("id", ColumnType.integer()).column("name", ColumnType.text(32))
            .column("itersnap_del", ColumnType.bool()).build();
    private final TableSpec keys = TableSpec.builder(TableName.parse("t", "m.itersnap_keys_x"),
            TableSpec.Creation.SCRATCH).column("id", ColumnType.integer()).column("itersnap_from", ColumnType.integer())
            .build();
    private final List<String> created = new ArrayList<>();

    private DeferredScratch deferred() {
        DeferredScratch d = DeferredScratch.of(dialect.primitives(), "test " + java.util.UUID.randomUUID(),
                List.of(stage, keys));
        assertThat(d).isNotNull();
        return d;
    }

    private Statement route(DeferredScratch d, Statement s, boolean write) {
        return d.route(s, write, c -> created.add(c.sql()));
    }

    @Test
    void theFirstInsertIntoATableCreatesItWithItsRowsTypedAsItsDdlTypesThem() {
        DeferredScratch d = deferred();
        LocalDate day = LocalDate.of(2024, 1, 2);
        Statement insert = Statement.builder("stage").sql("INSERT INTO `m`.`itersnap_stage_x` (`name`, `id`) SELECT "
                + "s.`name`, s.`id` FROM src s WHERE s.`day` = ").bind(day).build();
        Statement out = route(d, insert, true);
        assertThat(created).isEmpty();
        assertThat(out.sql()).startsWith("CREATE OR REPLACE TABLE `m`.`itersnap_stage_x` USING DELTA")
                .contains(" AS SELECT CAST(itersnap_filled.`id` AS INT) AS `id`, CAST(itersnap_filled.`name` AS "
                        + "STRING) AS `name`, CAST(NULL AS BOOLEAN) AS `itersnap_del` FROM (SELECT s.`name`, s.`id` "
                        + "FROM src s WHERE s.`day` = ?) itersnap_filled (`name`, `id`)");
        assertThat(out.values()).containsExactly(day);
        assertThat(out.step()).isEqualTo("stage");
        // the table exists now: later statements run as they are and create nothing
        Statement again = Statement.of("stage", "INSERT INTO `m`.`itersnap_stage_x` (`id`) VALUES (1)");
        assertThat(route(d, again, true)).isSameAs(again);
        Statement read = Statement.of("read", "SELECT * FROM `m`.`itersnap_stage_x`");
        assertThat(route(d, read, false)).isSameAs(read);
        assertThat(created).isEmpty();
    }

    @Test
    void aStatementThatReadsATableNotCreatedYetHasItCreatedEmptyFirst() {
        DeferredScratch d = deferred();
        Statement read = Statement.of("check", "SELECT COUNT(*) FROM `m`.`itersnap_keys_x` k");
        assertThat(route(d, read, false)).isSameAs(read);
        assertThat(created).containsExactly(dialect.createTable(keys).get(0).sql());
        // an UPDATE is no INSERT: the stage created empty first, then updated
        Statement update = Statement.of("reset", "UPDATE `m`.`itersnap_stage_x` SET `itersnap_del` = FALSE");
        assertThat(route(d, update, true)).isSameAs(update);
        assertThat(created).hasSize(2).last().isEqualTo(dialect.createTable(stage).get(0).sql());
        route(d, read, false);
        assertThat(created).hasSize(2);
    }

    @Test
    void anInsertThatReadsItsOwnTableOrAnotherNotCreatedYetSeesThemEmpty() {
        DeferredScratch d = deferred();
        // keys filled from the stage, which no statement created yet this run: the stage is created empty first
        Statement keysFromStage = Statement.of("keys", "INSERT INTO `m`.`itersnap_keys_x` (`id`, `itersnap_from`) "
                + "SELECT s.`id`, 1 FROM `m`.`itersnap_stage_x` s");
        Statement out = route(d, keysFromStage, true);
        assertThat(created).containsExactly(dialect.createTable(stage).get(0).sql());
        assertThat(out.sql()).startsWith("CREATE OR REPLACE TABLE `m`.`itersnap_keys_x`");

        DeferredScratch d2 = deferred();
        created.clear();
        Statement selfRead = Statement.of("keys", "INSERT INTO `m`.`itersnap_keys_x` (`id`, `itersnap_from`) "
                + "SELECT k.`id`, 2 FROM `m`.`itersnap_keys_x` k");
        assertThat(route(d2, selfRead, true)).isSameAs(selfRead);
        assertThat(created).containsExactly(dialect.createTable(keys).get(0).sql());
    }

    @Test
    void anInsertNamingAColumnTheTableDoesNotHaveCreatesTheTableFirstAndFailsAsItWould() {
        DeferredScratch d = deferred();
        Statement odd = Statement.of("stage", "INSERT INTO `m`.`itersnap_stage_x` (`id`, `other`) VALUES (1, 2)");
        assertThat(route(d, odd, true)).isSameAs(odd);
        assertThat(created).containsExactly(dialect.createTable(stage).get(0).sql());
    }

    @Test
    void scratchTablesEmptiedInsteadOfReplacedAreNotDeferred() {
        assertThat(DeferredScratch.of(DatabricksDialectAccess.truncating().primitives(), "test truncating",
                List.of(stage, keys))).isNull();
    }

    @Test
    void aRuntimeThatCannotReplaceATableFromAQueryCreatesItEmptyAndIsRememberedOtherFailuresAreNot() {
        String runtime = "test " + java.util.UUID.randomUUID();
        DeferredScratch d = DeferredScratch.of(dialect.primitives(), runtime, List.of(stage, keys));
        Statement insert = Statement.of("stage", "INSERT INTO `m`.`itersnap_stage_x` (`id`) SELECT 1");
        Statement routed = route(d, insert, true);
        assertThat(routed).isNotSameAs(insert);
        // another failure (a bad query, a lost lease, an injected fault) is the statement's: nothing is remembered
        assertThat(d.fellBack(routed, new IllegalStateException("[TABLE_OR_VIEW_NOT_FOUND] src"),
                c -> created.add(c.sql())))
                .isFalse();
        assertThat(created).isEmpty();
        assertThat(DeferredScratch.of(dialect.primitives(), runtime, List.of(stage, keys))).isNotNull();

        DeferredScratch again = DeferredScratch.of(dialect.primitives(), runtime, List.of(stage, keys));
        Statement routedAgain = again.route(insert, true, c -> created.add(c.sql()));
        RuntimeException spark35 = new RuntimeException("model 'customers': step 'stage source' failed: "
                + "[_LEGACY_ERROR_TEMP_1113] Table itersnap_stage_customers does not support truncate in batch mode.");
        List<Statement> creates = new ArrayList<>();
        assertThat(again.fellBack(routedAgain, spark35, creates::add)).isTrue();
        assertThat(creates).extracting(Statement::sql).containsExactly(dialect.createTable(stage).get(0).sql());
        // remembered for the runtime: its next runs create their scratch tables empty first
        assertThat(DeferredScratch.of(dialect.primitives(), runtime, List.of(stage, keys))).isNull();
    }
}
