package dev.itersnap.conformance;

import dev.itersnap.conformance.SnapshotFixture.Counts;
import dev.itersnap.conformance.SnapshotFixture.ErrorEntry;
import dev.itersnap.conformance.SnapshotFixture.Version;
import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.HardDeletes;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.IterativeSnapshot;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.RunResult;
import dev.itersnap.core.Strategy;
import dev.itersnap.core.UntrackedColumns;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;

import static dev.itersnap.conformance.SnapshotFixture.date;
import static dev.itersnap.conformance.SnapshotFixture.ts;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

/**
 * Bad input (settings, and values that must stay bound): every invalid setting fails before any SQL runs with INVALID_SETTING naming
 * the setting; a source that does not fit the settings fails with INVALID_SOURCE naming the setting and the column,
 * and nothing is written; values read from data (keys, sequences) are data even when they contain quotes.
 */
public abstract class BadInputTests extends ConformanceTestBase {

    private static ModelSettings.Builder valid() {
        return ModelSettings.builder(MODEL).target(TARGET).source("SELECT * FROM raw_customers").uniqueKey("id")
                .updatedAt("updated_at").sequenceBy("file_date");
    }

    private static Arguments bad(String setting, String what, Executable build) {
        return Arguments.of(setting, what, build);
    }

    private static Arguments bad(String setting, String what, UnaryOperator<ModelSettings.Builder> change) {
        return Arguments.of(setting, what, (Executable) () -> change.apply(valid()).build());
    }

    static Stream<Arguments> badSettings() {
        return Stream.of(
                bad("name", "missing", () -> ModelSettings.builder(null).target(TARGET).source("SELECT 1")
                        .uniqueKey("id").updatedAt("updated_at").sequenceBy("file_date").build()),
                bad("name", "not an identifier", () -> ModelSettings.builder("my model").target(TARGET)
                        .source("SELECT 1").uniqueKey("id").updatedAt("updated_at").sequenceBy("file_date").build()),
                bad("target", "missing", b -> b.target(null)),
                bad("target", "blank", b -> b.target("  ")),
                bad("target", "not an identifier", b -> b.target("snap-customers")),
                bad("target", "four parts", b -> b.target("a.b.c.d")),
                bad("target", "injection", b -> b.target("snap; DROP TABLE raw_customers")),
                bad("source", "missing", b -> b.source(null)),
                bad("source", "blank", b -> b.source(" ")),
                bad("source", "two statements", b -> b.source("SELECT * FROM raw_customers; DROP TABLE x")),
                bad("unique_key", "missing", b -> b.uniqueKey((List<String>) null)),
                bad("unique_key", "empty", b -> b.uniqueKey(List.of())),
                bad("unique_key", "not an identifier", b -> b.uniqueKey("id; DROP TABLE x")),
                bad("unique_key", "listed twice", b -> b.uniqueKey("id", "ID")),
                bad("unique_key", "contains updated_at", b -> b.uniqueKey("id", "updated_at")),
                bad("updated_at", "missing", b -> b.updatedAt(null)),
                bad("updated_at", "not an identifier", b -> b.updatedAt("updated at")),
                bad("sequence_by", "missing", b -> b.sequenceBy((String) null)),
                bad("sequence_by", "not an identifier", b -> b.sequenceBy("file-date")),
                bad("sequence_by", "an empty list", b -> b.sequenceBy(List.of())),
                bad("sequence_by", "a list naming a column twice", b -> b.sequenceBy(List.of("file_date", "FILE_DATE"))),
                bad("sequence_by", "a list with a non-identifier", b -> b.sequenceBy(List.of("file_date", "no; x"))),
                bad("unique_key", "a column of the sequence_by list", b -> b.sequenceBy(List.of("file_date", "id"))),
                bad("check_cols", "names a column of the sequence_by list",
                        b -> b.sequenceBy(List.of("file_date", "tier")).checkCols("tier")),
                bad("valid_to_current", "blank", b -> b.validToCurrent("  ")),
                bad("valid_to_current", "not a literal", b -> b.validToCurrent("x'; DROP TABLE raw_customers")),
                bad("valid_to_current", "a function call", b -> b.validToCurrent("current_date()")),
                bad("ignore_null_updates", "with hard_deletes invalidate",
                        b -> b.ignoreNullUpdates(true).hardDeletes(HardDeletes.INVALIDATE)),
                bad("ignore_null_updates", "with hard_deletes new_record",
                        b -> b.ignoreNullUpdates(true).hardDeletes(HardDeletes.NEW_RECORD)),
                bad("ignore_null_updates", "with strategy timestamp",
                        b -> b.ignoreNullUpdates(true).strategy(Strategy.TIMESTAMP)),
                bad("ignore_null_updates", "with a check_cols subset",
                        b -> b.ignoreNullUpdates(true).checkCols("status")),
                bad("untracked_columns", "overwrite without a check_cols list",
                        b -> b.untrackedColumns(UntrackedColumns.OVERWRITE)),
                bad("untracked_columns", "overwrite with strategy timestamp",
                        b -> b.untrackedColumns(UntrackedColumns.OVERWRITE).strategy(Strategy.TIMESTAMP)),
                bad("untracked_columns", "overwrite with ignore_null_updates",
                        b -> b.untrackedColumns(UntrackedColumns.OVERWRITE).checkCols("status")
                                .ignoreNullUpdates(true)),
                bad("untracked_columns", "missing", b -> b.untrackedColumns(null)),
                bad("untracked_columns", "unknown", () -> UntrackedColumns.parse("keep")),
                bad("strategy", "missing", b -> b.strategy(null)),
                bad("strategy", "unknown", () -> Strategy.parse("fast")),
                bad("strategy", "blank", () -> Strategy.parse(" ")),
                bad("hard_deletes", "missing", b -> b.hardDeletes(null)),
                bad("hard_deletes", "unknown", () -> HardDeletes.parse("soft")),
                bad("check_cols", "names the key", b -> b.checkCols("status", "id")),
                bad("check_cols", "names updated_at", b -> b.checkCols("updated_at")),
                bad("check_cols", "names sequence_by", b -> b.checkCols("FILE_DATE")),
                bad("check_cols", "not an identifier", b -> b.checkCols("status, tier")),
                bad("check_cols", "empty", b -> b.checkCols(List.of())),
                bad("check_cols", "with strategy timestamp", b -> b.strategy(Strategy.TIMESTAMP).checkCols("status")),
                bad("column_names", "unknown key", b -> b.columnNames(Map.of("valid_to", "until"))),
                bad("column_names", "not an identifier", b -> b.columnNames(Map.of("dbt_valid_to", "valid to"))),
                bad("column_names", "two meta columns one name",
                        b -> b.columnNames(Map.of("dbt_valid_to", "dbt_valid_from"))),
                bad("column_names", "meta column named like the key", b -> b.columnNames(Map.of("dbt_scd_id", "id"))),
                bad("column_names", "reserved prefix", b -> b.columnNames(Map.of("dbt_valid_to", "itersnap_until"))),
                bad("metadata_schema", "not an identifier", b -> b.metadataSchema("meta data")),
                bad("metadata_schema", "missing", b -> b.metadataSchema(null)),
                bad("lock_timeout", "negative", b -> b.lockTimeout(Duration.ofSeconds(-1))),
                bad("lock_timeout", "missing", b -> b.lockTimeout(null)),
                bad("delete_when", "two statements", b -> b.deleteWhen("op = 'D'; DROP TABLE raw_customers")));
    }

    /** Every invalid setting fails in build() (before any SQL) with INVALID_SETTING and a message naming it. */
    @ParameterizedTest(name = "{0}: {1}")
    @MethodSource("badSettings")
    void invalidSettingFailsNamingTheSetting(String setting, String what, Executable build) {
        assertThatThrownBy(build::execute).isInstanceOfSatisfying(ItersnapException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.INVALID_SETTING);
            assertThat(e.getMessage()).contains("'" + setting + "'");
        });
    }

    /** The valid baseline of {@link #badSettings()} builds, so each bad case fails for its own reason. */
    @Test
    void baselineSettingsAreValid() {
        ModelSettings m = valid().checkCols("all").build();
        assertThat(m.checkCols()).isNull();
        assertThat(m.strategy()).isEqualTo(Strategy.CHECK);
        assertThat(m.hardDeletes()).isEqualTo(HardDeletes.IGNORE);
        assertThat(Strategy.parse("Timestamp")).isEqualTo(Strategy.TIMESTAMP);
        assertThat(HardDeletes.parse("NEW_RECORD")).isEqualTo(HardDeletes.NEW_RECORD);
    }

    static Stream<Arguments> sourcesThatDoNotFit() {
        return Stream.of(
                Arguments.of("unique_key", "customer_id", (UnaryOperator<ModelSettings.Builder>) b ->
                        b.uniqueKey("customer_id")),
                Arguments.of("unique_key", "region", (UnaryOperator<ModelSettings.Builder>) b ->
                        b.uniqueKey("id", "region")),
                Arguments.of("updated_at", "modified_at", (UnaryOperator<ModelSettings.Builder>) b ->
                        b.updatedAt("modified_at")),
                Arguments.of("sequence_by", "batch_date", (UnaryOperator<ModelSettings.Builder>) b ->
                        b.sequenceBy("batch_date")),
                Arguments.of("sequence_by", "file_no", (UnaryOperator<ModelSettings.Builder>) b ->
                        b.sequenceBy(List.of("file_date", "file_no"))),
                Arguments.of("check_cols", "colour", (UnaryOperator<ModelSettings.Builder>) b ->
                        b.checkCols("status", "colour")));
    }

    /**
     * A setting naming a column the source does not return fails with INVALID_SOURCE naming the setting and the
     * column, and writes nothing: no history table, no ledger entry.
     */
    @ParameterizedTest(name = "{0} names missing column {1}")
    @MethodSource("sourcesThatDoNotFit")
    void settingNamingAColumnTheSourceLacksFailsWithInvalidSource(String setting, String column,
                                                                 UnaryOperator<ModelSettings.Builder> change) {
        RawTable raw = customers(fixture);
        raw.insert(1, "Active", "A", ts("2024-01-01 09:00"), date("2024-01-01"));
        ModelSettings m = change.apply(valid()).build();

        assertThatThrownBy(() -> fixture.run(m)).isInstanceOfSatisfying(ItersnapException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.INVALID_SOURCE);
            assertThat(e.getMessage()).contains("'" + setting + "'").containsIgnoringCase(column).contains(MODEL);
        });
        assertThat(fixture.tableExists(TARGET)).as("no history table is created").isFalse();
        assertThat(fixture.ledger(MODEL)).isEmpty();
        assertThat(raw.count()).isEqualTo(1);
    }

    /** A bad setting on a model with history leaves history and ledger exactly as they were. */
    @Test
    void invalidSourceOnAnExistingModelChangesNothing() {
        RawTable raw = customers(fixture);
        ModelSettings m = model(raw).build();
        raw.insert(1, "Active", "A", ts("2024-01-01 09:00"), date("2024-01-01"));
        fixture.run(m);
        List<Version> history = fixture.history(TARGET);
        List<Counts> ledger = fixture.ledgerCounts(MODEL);
        raw.insert(1, "Gold", "A", ts("2024-01-02 09:00"), date("2024-01-02"));

        assertThatThrownBy(() -> fixture.run(model(raw).checkCols("colour").build()))
                .isInstanceOfSatisfying(ItersnapException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_SOURCE));
        assertThat(fixture.history(TARGET)).isEqualTo(history);
        assertThat(fixture.ledgerCounts(MODEL)).isEqualTo(ledger);
    }

    /** A target that exists but was not built by itersnap (here: the raw table itself) is refused untouched. */
    @Test
    void targetNotBuiltByItersnapIsRefusedAndLeftAlone() {
        RawTable raw = customers(fixture);
        raw.insert(1, "Active", "A", ts("2024-01-01 09:00"), date("2024-01-01"));
        List<java.util.Map<String, Object>> before = fixture.query("SELECT * FROM raw_customers");

        assertThatThrownBy(() -> fixture.run(model(raw).target("raw_customers").build()))
                .isInstanceOfSatisfying(ItersnapException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.INVALID_SETTING);
                    assertThat(e.getMessage()).containsIgnoringCase("raw_customers");
                });
        assertThat(fixture.query("SELECT * FROM raw_customers")).isEqualTo(before);
    }

    /**
     * A delete_when predicate the database cannot evaluate (it names a column the source lacks) is a bad setting: the
     * error names delete_when, and no history is written.
     */
    @Test
    void deleteWhenTheDatabaseCannotEvaluateFailsNamingTheSetting() {
        RawTable raw = customers(fixture);
        raw.insert(1, "Active", "A", ts("2024-01-01 09:00"), date("2024-01-01"));

        assertThatThrownBy(() -> fixture.run(model(raw).deleteWhen("operation = 'D'").build()))
                .isInstanceOfSatisfying(ItersnapException.class, e -> {
                    assertThat(e.getMessage()).as("the error must name the setting").contains("'delete_when'");
                    assertThat(e.code()).as("code of: %s", e.getMessage()).isEqualTo(ErrorCode.INVALID_SETTING);
                });
        assertThat(fixture.ledger(MODEL)).isEmpty();
        assertThat(fixture.tableExists(TARGET)).as("no history table is created").isFalse();
    }

    static Stream<Arguments> unorderableSequences() {
        return Stream.of(Arguments.of("DOUBLE PRECISION", 1.5), Arguments.of("REAL", 1.5f),
                Arguments.of("BOOLEAN", true));
    }

    /** A floating-point (or boolean) sequence is refused: INVALID_SOURCE naming sequence_by and the column. */
    @ParameterizedTest(name = "sequence_by {0}")
    @MethodSource("unorderableSequences")
    void unorderableSequenceTypeIsRefused(String sqlType, Object value) {
        RawTable raw = fixture.rawTable("raw_customers", "id INT", "status VARCHAR(20)", "updated_at TIMESTAMP",
                "batch_no " + sqlType);
        raw.insert(1, "Active", ts("2024-01-01 09:00"), value);

        assertThatThrownBy(() -> fixture.run(model(raw, "batch_no").build()))
                .isInstanceOfSatisfying(ItersnapException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.INVALID_SOURCE);
                    assertThat(e.getMessage()).contains("'sequence_by'").containsIgnoringCase("batch_no");
                });
        assertThat(fixture.tableExists(TARGET)).isFalse();
    }

    static Stream<Arguments> unfitSequenceListComponents() {
        return Stream.of(Arguments.of("DOUBLE PRECISION", 1.5), Arguments.of("BOOLEAN", true),
                Arguments.of("DECIMAL(30,2)", new java.math.BigDecimal("1.50")));
    }

    /**
     * A column of a {@code sequence_by} list follows the type rules of one sequence_by column, and a decimal has a
     * precision of at most 18: anything else is refused with INVALID_SOURCE naming sequence_by and the column, before
     * anything is written.
     */
    @ParameterizedTest(name = "sequence_by [file_date, {0}]")
    @MethodSource("unfitSequenceListComponents")
    void sequenceByListComponentOfAnUnfitTypeIsRefused(String sqlType, Object value) {
        RawTable raw = fixture.rawTable("raw_customers", "id INT", "status VARCHAR(20)", "updated_at TIMESTAMP",
                "file_date DATE", "batch_no " + sqlType);
        raw.insert(1, "Active", ts("2024-01-01 09:00"), date("2024-01-01"), value);

        assertThatThrownBy(() -> fixture.run(model(raw, "file_date").sequenceBy(List.of("file_date", "batch_no"))
                .build())).isInstanceOfSatisfying(ItersnapException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.INVALID_SOURCE);
                    assertThat(e.getMessage()).contains("'sequence_by'").containsIgnoringCase("batch_no");
                });
        assertThat(fixture.tableExists(TARGET)).isFalse();
    }

    /** An updated_at that is not a time or number (a boolean) is refused naming updated_at. */
    @Test
    void unorderableUpdatedAtIsRefused() {
        RawTable raw = fixture.rawTable("raw_customers", "id INT", "status VARCHAR(20)", "updated_at BOOLEAN",
                "file_date DATE");
        raw.insert(1, "Active", true, date("2024-01-01"));

        assertThatThrownBy(() -> fixture.run(model(raw).build()))
                .isInstanceOfSatisfying(ItersnapException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.INVALID_SOURCE);
                    assertThat(e.getMessage()).contains("'updated_at'");
                });
        assertThat(fixture.tableExists(TARGET)).isFalse();
    }

    /** A source query the database rejects, or whose columns are not plain identifiers, is INVALID_SOURCE. */
    @Test
    void unusableSourceQueryIsInvalidSource() {
        RawTable raw = customers(fixture);
        raw.insert(1, "Active", "A", ts("2024-01-01 09:00"), date("2024-01-01"));
        for (String source : List.of("SELECT * FROM no_such_table",
                "SELECT id, status || 'x', updated_at, file_date FROM raw_customers",
                "SELECT id, status AS dbt_valid_to, updated_at, file_date FROM raw_customers")) {
            assertThatThrownBy(() -> fixture.run(valid().source(source).build())).as(source)
                    .isInstanceOfSatisfying(ItersnapException.class, e -> {
                        assertThat(e.code()).isEqualTo(ErrorCode.INVALID_SOURCE);
                        assertThat(e.getMessage()).contains(MODEL);
                    });
        }
        assertThat(fixture.tableExists(TARGET)).isFalse();
    }

    /**
     * A source with more columns than one statement may bind values ({@code SqlValues.MAX_PARAMETERS}, 256: four per
     * column in the column registry) runs (issue 36: a first run of a source of more than 64 columns failed
     * registering them).
     */
    @Test
    void aSourceWithMoreColumnsThanAStatementBindsRuns() {
        String[] columns = new String[103];
        columns[0] = "id INT";
        columns[1] = "updated_at TIMESTAMP";
        columns[2] = "file_date DATE";
        for (int i = 3; i < columns.length; i++) {
            columns[i] = "c" + i + " INT";
        }
        RawTable raw = fixture.rawTable("raw_wide", columns);
        Object[] row = new Object[columns.length];
        row[0] = 1;
        row[1] = ts("2024-01-01 09:00");
        row[2] = date("2024-01-01");
        raw.insert(row);
        ModelSettings m = ModelSettings.builder(MODEL).target(TARGET).source(raw.selectAll()).uniqueKey("id")
                .updatedAt("updated_at").sequenceBy("file_date").build();

        assertThat(fixture.run(m).batchesApplied()).isEqualTo(1);
        row[1] = ts("2024-01-02 09:00");
        row[2] = date("2024-01-02");
        row[5] = 5;
        raw.insert(row);
        assertThat(fixture.run(m).batchesApplied()).isEqualTo(1);
        assertThat(fixture.versions(TARGET, "id", 1)).hasSize(2);
    }

    /**
     * A null argument of the engine's methods is an {@link ItersnapException} naming the method and the argument, not
     * a NullPointerException (issue 36: {@code replayFrom(model, null)}); nothing is written.
     */
    @Test
    void aNullArgumentIsAnErrorNamingIt() {
        RawTable raw = customers(fixture);
        raw.insert(1, "Active", "A", ts("2024-01-01 09:00"), date("2024-01-01"));
        ModelSettings m = model(raw).build();
        IterativeSnapshot snap = fixture.engine(null);
        snap.run(m);
        List<Version> history = fixture.history(TARGET);
        record Call(String method, String argument, ErrorCode code, Executable call) {
        }
        for (Call c : List.of(
                new Call("replayFrom", "sequence", ErrorCode.INVALID_SEQUENCE, () -> snap.replayFrom(m, null)),
                new Call("replayFrom", "model", ErrorCode.INVALID_SETTING, () -> snap.replayFrom(null, "2024-01-01")),
                new Call("adopt", "through", ErrorCode.INVALID_SEQUENCE, () -> snap.adopt(m, null)),
                new Call("adoptRebuildingFrom", "from", ErrorCode.INVALID_SEQUENCE,
                        () -> snap.adoptRebuildingFrom(m, null)),
                new Call("planAdopt", "through", ErrorCode.INVALID_SEQUENCE, () -> snap.planAdopt(m, null)),
                new Call("planAdoptRebuildingFrom", "from", ErrorCode.INVALID_SEQUENCE,
                        () -> snap.planAdoptRebuildingFrom(m, null)),
                new Call("run", "model", ErrorCode.INVALID_SETTING, () -> snap.run(null)),
                new Call("run", "logicChange", ErrorCode.INVALID_SETTING, () -> snap.run(m, null)),
                new Call("runWithFullCheck", "logicChange", ErrorCode.INVALID_SETTING,
                        () -> snap.runWithFullCheck(m, null)),
                new Call("fullRefresh", "model", ErrorCode.INVALID_SETTING, () -> snap.fullRefresh(null)),
                new Call("validate", "model", ErrorCode.INVALID_SETTING, () -> snap.validate(null)),
                new Call("asOfSql", "asOf", ErrorCode.INVALID_SETTING, () -> snap.asOfSql(m, null)),
                new Call("asOfSql", "model", ErrorCode.INVALID_SETTING,
                        () -> snap.asOfSql(null, dev.itersnap.core.AsOf.sequence("2024-01-01"))),
                new Call("check", "model", ErrorCode.INVALID_SETTING, () -> snap.check(null)),
                new Call("inspect", "model", ErrorCode.INVALID_SETTING, () -> snap.inspect(null)),
                new Call("audit", "model", ErrorCode.INVALID_SETTING, () -> snap.audit((ModelSettings) null)),
                new Call("audit", "table", ErrorCode.INVALID_SETTING,
                        () -> snap.audit((dev.itersnap.core.AuditSettings) null)))) {
            assertThatThrownBy(c.call()::execute).as(c.method() + " " + c.argument())
                    .isInstanceOfSatisfying(ItersnapException.class, e -> {
                        assertThat(e.code()).isEqualTo(c.code());
                        assertThat(e.getMessage()).startsWith("IterativeSnapshot." + c.method() + ": argument '"
                                + c.argument() + "' is null; give ");
                    });
        }
        assertThat(fixture.history(TARGET)).isEqualTo(history);
    }

    /**
     * A source whose last line is a comment ({@code -- note}) is a query like any other (issue 36: the comment ate the
     * parenthesis the engine wraps the source in, "syntax error at end of input"): validate, check, a run with a late
     * batch, a full check, a replay, a {@code sequence_by} list and the audit against the raw batches all read it.
     */
    @Test
    void aSourceEndingInALineCommentIsAQueryLikeAnyOther() {
        RawTable raw = customers(fixture);
        raw.insert(1, "Active", "A", ts("2024-01-01 09:00"), date("2024-01-01"));
        raw.insert(1, "Gold", "A", ts("2024-01-03 09:00"), date("2024-01-03"));
        ModelSettings m = model(raw).source(raw.selectAll() + "\n-- the raw batches, one file a day").build();
        IterativeSnapshot snap = fixture.engine(null);

        snap.validate(m);
        assertThat(snap.check(m).checks()).filteredOn(c -> c.name().contains("source")).isNotEmpty()
                .allSatisfy(c -> assertThat(c.passed()).as(c.toString()).isTrue());
        snap.run(m);
        raw.insert(1, "Silver", "A", ts("2024-01-02 09:00"), date("2024-01-02"));
        assertThat(snap.run(m).lateBatchFound()).isTrue();
        assertThat(snap.runWithFullCheck(m).batchesApplied()).isZero();
        assertThat(snap.replayFrom(m, date("2024-01-02")).batchesApplied()).isEqualTo(2);
        assertThat(fixture.versions(TARGET, "id", 1)).extracting(v -> v.get("status"), Version::validFrom,
                Version::validTo).containsExactly(tuple("Active", ts("2024-01-01 09:00"), ts("2024-01-02 09:00")),
                tuple("Silver", ts("2024-01-02 09:00"), ts("2024-01-03 09:00")),
                tuple("Gold", ts("2024-01-03 09:00"), null));
        assertThat(snap.audit(dev.itersnap.core.AuditSettings.builder(TARGET).uniqueKey("id")
                .source(raw.selectAll() + " -- the raw batches", "file_date").build()).clean()).isTrue();

        // a sequence_by list wraps the source in a query of its own; a comment on the query's only line
        ModelSettings list = ModelSettings.builder("customers_by_tier").target("snap_by_tier")
                .source(raw.selectAll() + " -- one line").uniqueKey("id").updatedAt("updated_at")
                .sequenceBy(List.of("file_date", "tier")).build();
        snap.validate(list);
        assertThat(snap.run(list).batchesApplied()).isEqualTo(3);
        assertThat(fixture.versions("snap_by_tier", "id", 1)).hasSize(3);
    }

    /**
     * Keys and sequences containing quotes and SQL ({@code O'Brien}, {@code 2024'--}) are data: stored, compared,
     * ordered, replayed, deleted and logged like any value, with no SQL error and no side effect.
     */
    @Test
    void keysAndSequencesContainingQuotesAreData() {
        RawTable raw = fixture.rawTable("raw_customers", "name VARCHAR(60)", "status VARCHAR(20)",
                "updated_at TIMESTAMP", "batch VARCHAR(20)");
        ModelSettings m = ModelSettings.builder(MODEL).target(TARGET).source(raw.selectAll()).uniqueKey("name")
                .updatedAt("updated_at").sequenceBy("batch").hardDeletes(HardDeletes.INVALIDATE).build();
        IterativeSnapshot snap = fixture.engine(null);
        String obrien = "O'Brien";
        String darcy = "D'Arcy";
        String bobby = "x'); DROP TABLE raw_customers; --";
        raw.insert(obrien, "Gold", ts("2024-01-05 09:00"), "2024'-a");
        raw.insert(darcy, "Active", ts("2024-01-05 09:00"), "2024'-a");
        raw.insert(bobby, "Active", ts("2024-01-05 09:00"), "2024'-a");
        snap.run(m);
        raw.insert(obrien, "Active", ts("2024-01-01 09:00"), "2024'--");
        raw.insert(darcy, "Active", ts("2024-01-01 09:00"), "2024'--");
        raw.insert(bobby, "Active", ts("2024-01-01 09:00"), "2024'--");
        RunResult late = snap.run(m);

        assertThat(late.lateBatchFound()).as("'2024''--' < '2024''-a'").isTrue();
        assertThat(late.replayPoint()).isEqualTo("2024'--");
        assertThat(fixture.versions(TARGET, "name", obrien)).extracting(v -> v.get("status"), Version::validFrom,
                Version::validTo).containsExactly(tuple("Active", ts("2024-01-01 09:00"), ts("2024-01-05 09:00")),
                tuple("Gold", ts("2024-01-05 09:00"), null));
        assertThat(fixture.versions(TARGET, "name", darcy)).extracting(Version::validFrom, Version::validTo)
                .containsExactly(tuple(ts("2024-01-01 09:00"), null));

        raw.insert(obrien, "Gold", ts("2024-01-06 09:00"), "2024'-b");
        raw.insert(obrien, "Silver", ts("2024-01-06 09:00"), "2024'-b");
        raw.insert(bobby, "Active", ts("2024-01-01 09:00"), "2024'-b");
        snap.run(m);
        assertThat(fixture.versions(TARGET, "name", darcy)).as("D'Arcy, absent from a full batch, is deleted")
                .extracting(Version::validTo, Version::changeType)
                .containsExactly(tuple(ts("2024-01-06 09:00"), "delete"));
        assertThat(fixture.versions(TARGET, "name", obrien)).as("O'Brien, set aside, is untouched").hasSize(2);
        assertThat(fixture.errors(MODEL)).extracting(ErrorEntry::reason, ErrorEntry::sequence).containsExactly(
                tuple("duplicate_key", "2024'-b"), tuple("duplicate_key", "2024'-b"));
        assertThat(fixture.errors(MODEL)).allMatch(e -> e.has("name", "\"O'Brien\""));
        assertThat(fixture.versions(TARGET, "name", bobby)).hasSize(1);
        assertThat(fixture.ledgerCounts(MODEL)).extracting(Counts::sequence)
                .containsExactly("2024'--", "2024'-a", "2024'-b");

        List<Version> before = fixture.history(TARGET);
        RunResult replay = snap.replayFrom(m, "2024'--");
        assertThat(replay.batchesApplied()).isEqualTo(3);
        assertThat(fixture.history(TARGET)).isEqualTo(before);
        assertThat(raw.count()).as("the raw table is intact").isEqualTo(9);
    }
}
