package dev.itersnap.models;

import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.HardDeletes;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.Restatements;
import dev.itersnap.core.Strategy;
import dev.itersnap.core.UntrackedColumns;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ModelFilesTest {
    private static final String MINIMAL = """
            name: customers
            target: analytics.customers_history
            source: SELECT * FROM raw_customers
            unique_key: customer_id
            updated_at: updated_at
            sequence_by: file_date
            """;

    @Test
    void readsEverySetting() {
        ModelSettings m = ModelFiles.parse("""
                name: orders
                target: analytics.orders_history
                source: |
                  SELECT order_id, line_no, status, op, changed_at, batch_id
                  FROM raw_orders;
                unique_key: [order_id, line_no]
                updated_at: changed_at
                sequence_by: batch_id
                strategy: check
                check_cols:
                  - status
                hard_deletes: new_record
                delete_when: op = 'D'
                column_names:
                  dbt_valid_to: valid_until
                  dbt_valid_from: valid_since
                metadata_schema: snap_meta
                lock_timeout: 30s
                """, "orders.yml");

        assertThat(m.name()).isEqualTo("orders");
        assertThat(m.target().parts()).containsExactly("analytics", "orders_history");
        assertThat(m.source()).isEqualTo("SELECT order_id, line_no, status, op, changed_at, batch_id\nFROM raw_orders");
        assertThat(m.uniqueKey()).containsExactly("order_id", "line_no");
        assertThat(m.updatedAt()).isEqualTo("changed_at");
        assertThat(m.sequenceBy()).isEqualTo("batch_id");
        assertThat(m.strategy()).isEqualTo(Strategy.CHECK);
        assertThat(m.checkCols()).containsExactly("status");
        assertThat(m.hardDeletes()).isEqualTo(HardDeletes.NEW_RECORD);
        assertThat(m.deleteWhen()).isEqualTo("op = 'D'");
        assertThat(m.columnNames().validTo()).isEqualTo("valid_until");
        assertThat(m.columnNames().validFrom()).isEqualTo("valid_since");
        assertThat(m.columnNames().scdId()).isEqualTo("dbt_scd_id");
        assertThat(m.metadataSchema()).isEqualTo("snap_meta");
        assertThat(m.lockTimeout()).isEqualTo(Duration.ofSeconds(30));
    }

    @Test
    void leavesDefaultsForSettingsNotGiven() {
        ModelSettings m = ModelFiles.parse(MINIMAL, "m.yml");

        assertThat(m.strategy()).isEqualTo(Strategy.CHECK);
        assertThat(m.checkCols()).isNull();
        assertThat(m.hardDeletes()).isEqualTo(HardDeletes.IGNORE);
        assertThat(m.deleteWhen()).isNull();
        assertThat(m.metadataSchema()).isEqualTo(ModelSettings.DEFAULT_METADATA_SCHEMA);
        assertThat(m.lockTimeout()).isEqualTo(ModelSettings.DEFAULT_LOCK_TIMEOUT);
        assertThat(m.uniqueKey()).containsExactly("customer_id");
    }

    @Test
    void acceptsListsInFlowAndBlockFormAndScalarsForOneColumn() {
        ModelSettings flow = ModelFiles.parse(MINIMAL.replace("unique_key: customer_id", "unique_key: [customer_id, region]")
                + "check_cols: [status, tier]\n", "m.yml");
        ModelSettings block = ModelFiles.parse(MINIMAL.replace("unique_key: customer_id",
                "unique_key:\n  - customer_id\n  - region") + "check_cols:\n  - status\n  - tier\n", "m.yml");
        ModelSettings scalar = ModelFiles.parse(MINIMAL + "check_cols: status\n", "m.yml");

        assertThat(flow.uniqueKey()).containsExactly("customer_id", "region");
        assertThat(block.uniqueKey()).containsExactly("customer_id", "region");
        assertThat(flow.checkCols()).containsExactly("status", "tier");
        assertThat(block.checkCols()).containsExactly("status", "tier");
        assertThat(scalar.checkCols()).containsExactly("status");
    }

    @Test
    void checkColsAllMeansEveryColumn() {
        assertThat(ModelFiles.parse(MINIMAL + "check_cols: all\n", "m.yml").checkCols()).isNull();
    }

    @Test
    void anEmptyValueIsTheDefault() {
        ModelSettings m = ModelFiles.parse(MINIMAL + "delete_when:\nstrategy: ~\n", "m.yml");

        assertThat(m.deleteWhen()).isNull();
        assertThat(m.strategy()).isEqualTo(Strategy.CHECK);
    }

    @Test
    void anUnknownKeyIsNamedWithTheValidOnes() {
        assertThatThrownBy(() -> ModelFiles.parse(MINIMAL + "stratgy: check\n", "model.yml"))
                .isInstanceOf(ModelFileException.class)
                .hasMessageStartingWith("unknown setting 'stratgy' in model.yml; valid settings: name, target, source,")
                .hasMessageEndingWith("metadata_schema, lock_timeout, restatements, restatement_lookback, "
                        + "restatement_sweep, valid_to_current, ignore_null_updates, untracked_columns, keep_superseded, "
                        + "superseded_retention, tags");
    }

    @Test
    void aYamlAliasIsRefusedNotReadAsTheAnchorsName() {
        // issue 29: Jackson read *ts as the text "ts", so updated_at named a column ts nobody wrote
        assertThatThrownBy(() -> ModelFiles.parse("""
                name: customers
                target: analytics.customers_history
                source: SELECT * FROM raw_customers
                unique_key: &ts customer_id
                updated_at: *ts
                sequence_by: file_date
                """, "model.yml"))
                .isInstanceOf(ModelFileException.class)
                .hasMessage("model.yml uses the YAML alias *ts (line 5, setting 'updated_at'); a model file does not "
                        + "support anchors and aliases: write the value out");
        assertThatThrownBy(() -> ModelFiles.parse(MINIMAL + "check_cols: &cols [status]\nstrategy: check\n"
                + "column_names: {dbt_scd_id: *cols}\n", "model.yml"))
                .isInstanceOf(ModelFileException.class).hasMessageContaining("uses the YAML alias *cols (line 9");
    }

    @Test
    void aKeyGivenTwiceIsAnError() {
        assertThatThrownBy(() -> ModelFiles.parse(MINIMAL + "name: again\n", "model.yml"))
                .isInstanceOf(ModelFileException.class)
                .hasMessageContaining("model.yml is not valid YAML").hasMessageContaining("name");
    }

    @ParameterizedTest
    @CsvSource({"30s, PT30S", "10m, PT10M", "1h, PT1H", "600, PT10M", "0, PT0S", "PT10M, PT10M", "pt1m30s, PT1M30S",
            "500ms, PT0.5S", "'2 m', PT2M", "2d, PT48H"})
    void readsLockTimeouts(String text, String expected) {
        assertThat(ModelFiles.parse(MINIMAL + "lock_timeout: " + text + "\n", "m.yml").lockTimeout())
                .isEqualTo(Duration.parse(expected));
    }

    @ParameterizedTest
    @ValueSource(strings = {"soon", "10 minutes", "-5", "1.5", "PT-1M", "P", "10w", "99999999999999999999"})
    void aBadLockTimeoutNamesTheSettingAndTheValue(String text) {
        assertThatThrownBy(() -> ModelFiles.parse(MINIMAL + "lock_timeout: " + text + "\n", "m.yml"))
                .isInstanceOf(ModelFileException.class)
                .hasMessageStartingWith("setting 'lock_timeout' expected a duration such as 30s, 10m, 1h")
                .hasMessageEndingWith("got '" + text + "'");
    }

    @Test
    void supersededRetentionIsAPositiveDurationOrNone() {
        assertThat(ModelFiles.parse(MINIMAL, "m.yml").supersededRetention()).as("kept for ever").isNull();
        assertThat(ModelFiles.parse(MINIMAL + "superseded_retention: 90d\n", "m.yml").supersededRetention())
                .isEqualTo(Duration.ofDays(90));
        assertThat(ModelFiles.parse(MINIMAL + "superseded_retention: P30D\n", "m.yml").supersededRetention())
                .isEqualTo(Duration.ofDays(30));
        assertThatThrownBy(() -> ModelFiles.parse(MINIMAL + "superseded_retention: 0\n", "m.yml"))
                .isInstanceOf(ItersnapException.class).hasMessageContaining("superseded_retention")
                .hasMessageContaining("positive");
        assertThatThrownBy(() -> ModelFiles.parse(MINIMAL + "superseded_retention: a while\n", "m.yml"))
                .isInstanceOf(ModelFileException.class)
                .hasMessageStartingWith("setting 'superseded_retention' expected a duration");
    }

    @Test
    void invalidValuesAreReportedByTheSettingsBuilder() {
        assertThatThrownBy(() -> ModelFiles.parse(MINIMAL + "strategy: foo\n", "m.yml"))
                .isInstanceOf(ItersnapException.class)
                .hasMessage("setting 'strategy' expected one of check, timestamp, got 'foo'")
                .extracting(e -> ((ItersnapException) e).code()).isEqualTo(ErrorCode.INVALID_SETTING);
        assertThatThrownBy(() -> ModelFiles.parse(MINIMAL + "hard_deletes: sometimes\n", "m.yml"))
                .hasMessageStartingWith("setting 'hard_deletes' expected one of ignore, invalidate, new_record");
        assertThatThrownBy(() -> ModelFiles.parse(MINIMAL.replace("target: analytics.customers_history\n", ""), "m.yml"))
                .hasMessage("setting 'target' is required");
        assertThatThrownBy(() -> ModelFiles.parse(MINIMAL + "column_names: {dbt_valid_til: x}\n", "m.yml"))
                .hasMessageStartingWith("setting 'column_names' has unknown key 'dbt_valid_til'");
    }

    @Test
    void aValueOfTheWrongShapeNamesTheSetting() {
        assertThatThrownBy(() -> ModelFiles.parse(MINIMAL + "metadata_schema: [a, b]\n", "m.yml"))
                .isInstanceOf(ModelFileException.class)
                .hasMessage("setting 'metadata_schema' expected a single value, got a list");
        assertThatThrownBy(() -> ModelFiles.parse(MINIMAL + "column_names: [a]\n", "m.yml"))
                .hasMessageStartingWith("setting 'column_names' expected a mapping");
        assertThatThrownBy(() -> ModelFiles.parse(MINIMAL + "check_cols: {a: b}\n", "m.yml"))
                .hasMessage("setting 'check_cols' expected a column or a list of columns, got a mapping");
        assertThatThrownBy(() -> ModelFiles.parse(MINIMAL + "check_cols: [a, [b]]\n", "m.yml"))
                .hasMessage("setting 'check_cols' expected a list of column names, got an item that is a list");
    }

    @Test
    void aFileThatIsNotAMappingOfSettingsIsAnError() {
        assertThatThrownBy(() -> ModelFiles.parse("", "m.yml"))
                .isInstanceOf(ModelFileException.class).hasMessageStartingWith("m.yml is empty");
        assertThatThrownBy(() -> ModelFiles.parse("- name\n- target\n", "m.yml"))
                .hasMessage("m.yml must be a mapping of setting names to values");
        assertThatThrownBy(() -> ModelFiles.parse("name: [unclosed\n", "m.yml"))
                .isInstanceOf(ModelFileException.class).hasMessageStartingWith("m.yml is not valid YAML");
    }

    @Test
    void loadsAFileAndNamesAMissingOne(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("customers.yml");
        Files.writeString(file, MINIMAL);

        assertThat(ModelFiles.load(file).name()).isEqualTo("customers");
        assertThatThrownBy(() -> ModelFiles.load(dir.resolve("missing.yml")))
                .isInstanceOf(ModelFileException.class)
                .hasMessage("cannot read model file " + dir.resolve("missing.yml") + ": no such file");
    }

    @Test
    void knowsExactlyTheSettingsOfTheSpec() {
        assertThat(ModelFiles.KEYS).containsExactlyInAnyOrderElementsOf(List.of("name", "target", "source",
                "unique_key", "updated_at", "sequence_by", "strategy", "check_cols", "hard_deletes", "delete_when",
                "column_names", "metadata_schema", "lock_timeout", "restatements", "restatement_lookback",
                "restatement_sweep", "valid_to_current", "ignore_null_updates", "untracked_columns", "keep_superseded",
                "superseded_retention", "tags"));
    }

    @Test
    void untrackedColumnsIsIgnoreOrOverwriteAndOverwriteNeedsACheckColsList() {
        assertThat(ModelFiles.parse(MINIMAL, "m.yml").untrackedColumns()).isEqualTo(UntrackedColumns.IGNORE);
        assertThat(ModelFiles.parse(MINIMAL + "check_cols: [status]\nuntracked_columns: Overwrite\n", "m.yml")
                .untrackedColumns()).isEqualTo(UntrackedColumns.OVERWRITE);
        assertThatThrownBy(() -> ModelFiles.parse(MINIMAL + "check_cols: [status]\nuntracked_columns: keep\n",
                "m.yml")).isInstanceOf(ItersnapException.class).hasMessageContaining("untracked_columns")
                .hasMessageContaining("keep");
        assertThatThrownBy(() -> ModelFiles.parse(MINIMAL + "untracked_columns: overwrite\n", "m.yml"))
                .isInstanceOf(ItersnapException.class).hasMessageContaining("untracked_columns")
                .hasMessageContaining("check_cols");
    }

    @Test
    void ignoreNullUpdatesIsABooleanAndRefusedWithFullBatches() {
        assertThat(ModelFiles.parse(MINIMAL, "m.yml").ignoreNullUpdates()).isFalse();
        assertThat(ModelFiles.parse(MINIMAL + "ignore_null_updates: true\n", "m.yml").ignoreNullUpdates()).isTrue();
        assertThatThrownBy(() -> ModelFiles.parse(MINIMAL + "ignore_null_updates: sometimes\n", "m.yml"))
                .isInstanceOf(ModelFileException.class).hasMessageContaining("ignore_null_updates")
                .hasMessageContaining("sometimes");
        assertThatThrownBy(() -> ModelFiles.parse(MINIMAL + "ignore_null_updates: true\nhard_deletes: invalidate\n",
                "m.yml")).isInstanceOf(ItersnapException.class).hasMessageContaining("ignore_null_updates")
                .hasMessageContaining("hard_deletes");
    }

    @Test
    void restatementsAreDetectedUnlessIgnoredAndAnyOtherValueNamesTheSetting() {
        assertThat(ModelFiles.parse(MINIMAL, "m.yml").restatements()).isEqualTo(Restatements.DETECT);
        assertThat(ModelFiles.parse(MINIMAL + "restatements: Ignore\n", "m.yml").restatements())
                .isEqualTo(Restatements.IGNORE);
        assertThatThrownBy(() -> ModelFiles.parse(MINIMAL + "restatements: sometimes\n", "m.yml"))
                .isInstanceOf(ItersnapException.class)
                .hasMessageContaining("restatements").hasMessageContaining("detect, ignore")
                .hasMessageContaining("sometimes");
    }

    @Test
    void restatementLookbackAndSweepAreNumbersOfBatchesWithDefaultsAndNamedWhenWrong() {
        ModelSettings defaults = ModelFiles.parse(MINIMAL, "m.yml");
        assertThat(defaults.restatementLookback()).isEqualTo(ModelSettings.DEFAULT_RESTATEMENT_LOOKBACK);
        assertThat(defaults.restatementSweep()).isEqualTo(ModelSettings.DEFAULT_RESTATEMENT_SWEEP);
        ModelSettings set = ModelFiles.parse(MINIMAL + "restatement_lookback: 7\nrestatement_sweep: 0\n", "m.yml");
        assertThat(set.restatementLookback()).isEqualTo(7);
        assertThat(set.restatementSweep()).isZero();
        assertThatThrownBy(() -> ModelFiles.parse(MINIMAL + "restatement_lookback: -1\n", "m.yml"))
                .isInstanceOf(ModelFileException.class).hasMessageContaining("restatement_lookback")
                .hasMessageContaining("-1");
        assertThatThrownBy(() -> ModelFiles.parse(MINIMAL + "restatement_sweep: 5000\n", "m.yml"))
                .isInstanceOf(ItersnapException.class).hasMessageContaining("restatement_sweep")
                .hasMessageContaining("5000");
    }

    /** dbt 1.9 writes dbt_valid_to_current as a quoted SQL literal; both spellings read as the literal. */
    @Test
    void validToCurrentReadsDbtsQuotedLiteral() {
        assertThat(ModelFiles.parse(MINIMAL + "valid_to_current: \"'9999-12-31'\"\n", "m.yml").validToCurrent())
                .isEqualTo("9999-12-31");
        assertThat(ModelFiles.parse(MINIMAL + "valid_to_current: 9999-12-31\n", "m.yml").validToCurrent())
                .isEqualTo("9999-12-31");
        assertThat(ModelFiles.parse(MINIMAL, "m.yml").validToCurrent()).isNull();
    }
}
