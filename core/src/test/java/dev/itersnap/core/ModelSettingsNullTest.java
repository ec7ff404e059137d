package dev.itersnap.core;

import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.function.UnaryOperator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A null where a column name belongs is refused naming the setting, as every other bad setting (issue 29). */
class ModelSettingsNullTest {
    private static ModelSettings.Builder model() {
        return ModelSettings.builder("customers").target("customers_history").source("SELECT * FROM raw")
                .uniqueKey("customer_id").updatedAt("updated_at").sequenceBy("file_date");
    }

    private static void refused(UnaryOperator<ModelSettings.Builder> change, String message) {
        assertThatThrownBy(() -> change.apply(model()).build()).isInstanceOf(ItersnapException.class)
                .satisfies(e -> assertThat(((ItersnapException) e).code()).isEqualTo(ErrorCode.INVALID_SETTING))
                .hasMessage(message);
    }

    @Test
    void aNullColumnNameIsRefusedNamingTheSetting() {
        // was a bare NullPointerException from List.of, thrown by the builder call itself
        refused(b -> b.uniqueKey((String) null), "setting 'unique_key' lists no column at position 1 (null); "
                + "expected column names, got [null]");
        refused(b -> b.uniqueKey("customer_id", null), "setting 'unique_key' lists no column at position 2 (null); "
                + "expected column names, got [customer_id, null]");
        refused(b -> b.uniqueKey((String[]) null), "setting 'unique_key' is required (one column or a list of columns)");
        refused(b -> b.checkCols("status", null), "setting 'check_cols' lists no column at position 2 (null); "
                + "expected column names, got [status, null]");
        refused(b -> b.sequenceBy(Arrays.asList("file_date", null)), "setting 'sequence_by' lists no column at "
                + "position 2 (null); expected column names, got [file_date, null]");
        refused(b -> b.updatedAt(null), "setting 'updated_at' is required");
    }
}
