package dev.itersnap.conformance;

import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.HardDeletes;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.core.ModelSettings;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import static dev.itersnap.conformance.SnapshotFixture.date;
import static dev.itersnap.conformance.SnapshotFixture.ts;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

/**
 * Source column types (docs/semantics.md, "Types"): every type the database offers either round-trips exactly into
 * the history, value and type, and its changes are seen (also where the database's own {@code =} is not identity,
 * such as boxes compared by area), through a late batch's replay; or it is refused before anything is written,
 * naming the column and the type. Plus the identifier limits and the version ids of composite keys.
 */
public abstract class SourceTypesTests extends ConformanceTestBase {

    /**
     * A column type with two different values as SQL expressions of that type.
     *
     * @param sqlType the type as the raw table declares it
     * @param a       a value (SQL expression)
     * @param b       another value that the history must see as a change from {@code a}
     */
    public record TypeCase(String sqlType, String a, String b) {
    }

    /** Every type the database offers that itersnap carries, with two values each. */
    protected abstract List<TypeCase> roundTripTypes();

    /**
     * Types itersnap refuses, each with an expression of that type (as {@code a}, which the source query selects);
     * empty when it carries every type.
     */
    protected List<TypeCase> refusedTypes() {
        return List.of();
    }

    private static String column(int i) {
        return "c" + i;
    }

    /** The JDBC string form of every column of a query's rows, keyed by the first column (the key). */
    private static Map<String, List<String>> texts(DataSource ds, String sql) {
        Map<String, List<String>> out = new LinkedHashMap<>();
        try (Connection c = ds.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            int n = rs.getMetaData().getColumnCount();
            while (rs.next()) {
                List<String> row = new ArrayList<>();
                for (int i = 2; i <= n; i++) {
                    row.add(rs.getString(i));
                }
                out.put(rs.getString(1), row);
            }
        } catch (SQLException e) {
            throw new IllegalStateException(sql + ": " + e.getMessage(), e);
        }
        return out;
    }

    /** Type name, precision and scale of each column of a query, as JDBC describes them. */
    private static List<String> types(DataSource ds, String sql) {
        List<String> out = new ArrayList<>();
        try (Connection c = ds.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            ResultSetMetaData md = rs.getMetaData();
            for (int i = 1; i <= md.getColumnCount(); i++) {
                out.add(md.getColumnLabel(i).toLowerCase(Locale.ROOT) + " " + md.getColumnTypeName(i) + "("
                        + md.getPrecision(i) + "," + md.getScale(i) + ")");
            }
        } catch (SQLException e) {
            throw new IllegalStateException(sql + ": " + e.getMessage(), e);
        }
        return out;
    }

    /**
     * Key k changes only column k between the first and the third day; key -1 goes from all NULL to the first values.
     * The second day arrives late (the same values as the first, a later updated_at) and replays the third.
     */
    @Test
    void everyTypeRoundTripsThroughALateBatchReplayAndItsChangesAreSeen() {
        List<TypeCase> cases = roundTripTypes();
        RawTable raw = typesTable("raw_types", cases);
        for (int k = -1; k < cases.size(); k++) {
            insert(raw, cases, k, "2024-01-01 09:00", "2024-01-01", k == -1 ? "null" : "a");
            insert(raw, cases, k, "2024-01-03 09:00", "2024-01-03", k == -1 ? "a" : "b" + k);
        }
        ModelSettings m = ModelSettings.builder(MODEL).target(TARGET).source(raw.selectAll()).uniqueKey("id")
                .updatedAt("updated_at").sequenceBy("file_date").build();
        fixture.run(m);
        for (int k = -1; k < cases.size(); k++) {
            insert(raw, cases, k, "2024-01-02 09:00", "2024-01-02", k == -1 ? "null" : "a");
        }
        assertThat(fixture.run(m).lateBatchFound()).isTrue();

        List<String> cols = new ArrayList<>();
        for (int i = 0; i < cases.size(); i++) {
            cols.add(column(i));
        }
        String list = String.join(", ", cols);
        assertThat(types(fixture.dataSource(), "SELECT " + list + " FROM " + TARGET))
                .as("the history's column types are the source's")
                .isEqualTo(types(fixture.dataSource(), "SELECT " + list + " FROM raw_types"));
        for (String day : List.of("2024-01-01", "2024-01-03")) {
            String seq = "DATE '" + day + "'";
            assertThat(texts(fixture.dataSource(), "SELECT id, " + list + " FROM " + TARGET + " WHERE dbt_opened_seq = "
                    + seq)).as("values of the versions opened on %s, as the source holds them", day)
                    .isEqualTo(texts(fixture.dataSource(), "SELECT id, " + list + " FROM raw_types WHERE file_date = "
                            + seq + " AND id IN (SELECT id FROM " + TARGET + " WHERE dbt_opened_seq = " + seq + ")"));
        }
        for (int k = -1; k < cases.size(); k++) {
            String expected = k == -1 ? "[" + String.join(",", cols.stream().map(c -> "\"" + c + "\"").toList()) + "]"
                    : "[\"" + column(k) + "\"]";
            assertThat(fixture.versions(TARGET, "id", k)).as("key %d (%s)", k, k < 0 ? "NULLs" : cases.get(k).sqlType())
                    .extracting(SnapshotFixture.Version::validFrom, SnapshotFixture.Version::changed)
                    .containsExactly(tuple(ts("2024-01-01 09:00"), expected), tuple(ts("2024-01-03 09:00"), null));
        }
        assertThat(fixture.timelineProblems(TARGET, "id")).isEmpty();
    }

    /**
     * A correction of one value of any type in the newest applied batch is a restatement: the batch's fingerprint
     * changes, the next run replays it and the history holds the corrected value. One type corrected per run, so that
     * a type whose change the fingerprint does not see fails on its own.
     */
    @Test
    void aCorrectedValueOfEveryTypeIsFoundAsARestatement() {
        List<TypeCase> cases = roundTripTypes();
        RawTable raw = typesTable("raw_restated", cases);
        for (int k = 0; k < cases.size(); k++) {
            insert(raw, cases, k, "2024-01-01 09:00", "2024-01-01", "a");
        }
        ModelSettings m = ModelSettings.builder(MODEL).target(TARGET).source(raw.selectAll()).uniqueKey("id")
                .updatedAt("updated_at").sequenceBy("file_date").build();
        fixture.run(m);
        assertThat(fixture.run(m).replayPoint()).as("an unchanged batch is not restated").isNull();
        for (int k = 0; k < cases.size(); k++) {
            // the row re-sent (an UPDATE may keep a value its type calls equal: DuckDB keeps '1 month' for '30 days')
            fixture.execute("DELETE FROM raw_restated WHERE id = " + k);
            insert(raw, cases, k, "2024-01-01 09:00", "2024-01-01", "b" + k);
            assertThat(fixture.run(m).replayPoint()).as("a corrected %s value restates its batch",
                    cases.get(k).sqlType()).isNotNull();
            String col = column(k);
            assertThat(texts(fixture.dataSource(), "SELECT id, " + col + " FROM " + TARGET + " WHERE id = " + k))
                    .as("the history holds the corrected %s value", cases.get(k).sqlType())
                    .isEqualTo(texts(fixture.dataSource(), "SELECT id, " + col + " FROM raw_restated WHERE id = " + k));
        }
        assertThat(fixture.run(m).replayPoint()).as("nothing restated once every correction is applied").isNull();
    }

    /**
     * The table aliases of the engine's SQL, and other short names: a source column may have any of them as its name.
     * Spark resolves {@code h.id} inside a subquery against the subquery's own columns first, so a correlated
     * reference to an outer alias {@code h} becomes a field of a column named {@code h} (and fails) when the inner
     * table has one.
     */
    private static final List<String> ALIAS_NAMES = List.of("a", "b", "c", "d", "e", "g", "h", "k", "n", "o", "p",
            "q", "r", "s", "t", "u", "v", "w", "x", "y", "z", "ba", "bc", "bn", "bo", "nx", "sa", "sb", "sk", "b0", "b1",
            "c0", "c1", "h0", "s0", "s1", "x0");

    /**
     * Source columns named like the SQL's table aliases are carried like any other through every step a run can take:
     * in-order batches, a late batch replayed key by key, a restated batch replayed for every key, deletes of keys
     * absent from a full batch and explicit deletes. The history equals one clean run's; the read of what was known
     * after the first run returns that run's history; the audit finds nothing. (Lean for Spark, where each run costs
     * half a minute: the restatement is found by the run's own fingerprint comparison, no full check.)
     */
    @Test
    void columnsNamedLikeTheSqlsAliasesAreCarriedThroughEveryKindOfRun() {
        List<String> defs = new ArrayList<>(List.of("id INT", "updated_at TIMESTAMP", "file_date DATE"));
        ALIAS_NAMES.forEach(c -> defs.add(c + " " + type("VARCHAR(20)")));
        RawTable raw = fixture.rawTable("raw_aliases", defs.toArray(String[]::new));
        java.util.function.Function<String, ModelSettings> model = target -> ModelSettings.builder(target)
                .target(target).source(raw.selectAll()).uniqueKey("id").updatedAt("updated_at")
                .sequenceBy("file_date").hardDeletes(HardDeletes.NEW_RECORD).deleteWhen("o = 'D'").build();
        ModelSettings m = model.apply(TARGET);
        // day d: keys 1..4, each column of a key holds "<column><version>"; key d is absent (a delete under full
        // batches), key 4's last row is an explicit delete (o = 'D')
        java.util.function.BiConsumer<Integer, Integer> day = (d, version) -> {
            for (int key = 1; key <= 4; key++) {
                if (key == d) {
                    continue;
                }
                List<Object> values = new ArrayList<>(List.of(key, ts("2024-01-0" + d + " 09:00"),
                        date("2024-01-0" + d)));
                for (String c : ALIAS_NAMES) {
                    values.add(c.equals("o") ? (key == 4 && d == 5 ? "D" : "I")
                            : c + (key + version * 10 + (key % 2 == 0 ? d : 0)));
                }
                raw.insert(values.toArray());
            }
        };
        day.accept(1, 1);
        day.accept(3, 1);
        fixture.run(m);
        Object firstFinished = fixture.runs(TARGET).get(0).finishedAt();
        List<Map<String, Object>> firstHistory = fixture.query("SELECT * FROM " + TARGET);
        day.accept(2, 1); // late: replayed key by key
        assertThat(fixture.run(m).lateBatchFound()).isTrue();
        raw.deleteWhere("file_date", date("2024-01-03"));
        day.accept(3, 2); // restated: every key from day 3
        day.accept(5, 1);
        assertThat(fixture.run(m).replayPoint()).as("the restated day").isNotNull();

        fixture.run(model.apply("snap_clean"));
        assertThat(fixture.essence(TARGET)).as("the history of one clean run")
                .containsExactlyInAnyOrderElementsOf(fixture.essence("snap_clean"));
        assertThat(fixture.timelineProblems(TARGET, "id")).isEmpty();
        assertThat(fixture.engine(null).audit(m).clean()).as("the audit of the history").isTrue();
        String knownAfterFirst = fixture.engine(null).asOfSql(m, dev.itersnap.core.AsOf.knownAt(firstFinished));
        assertThat(fixture.query(knownAfterFirst).stream().map(row -> {
            Map<String, Object> same = new LinkedHashMap<>();
            firstHistory.get(0).keySet().forEach(c -> same.put(c, row.get(c)));
            return same;
        }).toList()).as("the history as known after the first run").containsExactlyInAnyOrderElementsOf(firstHistory);
    }

    /**
     * Key columns named like the columns the engine's checks compute beside the key (a version's opened batch
     * {@code os}, validity {@code vf}/{@code vt}, change type {@code ct}, {@code op}, {@code broken}): a composite key
     * of such names runs in order and through a late batch, and the history equals one clean run's.
     */
    @Test
    void keyColumnsNamedLikeTheColumnsOfTheEnginesChecksAreKeysLikeAnyOther() {
        RawTable raw = fixture.rawTable("raw_key_names", "os " + type("VARCHAR(20)"), "vf INT", "ct INT", "op INT",
                "broken INT", "status " + type("VARCHAR(20)"), "updated_at TIMESTAMP", "file_date DATE");
        java.util.function.Function<String, ModelSettings> model = target -> ModelSettings.builder(target)
                .target(target).source(raw.selectAll()).uniqueKey("os", "vf", "ct", "op", "broken")
                .updatedAt("updated_at").sequenceBy("file_date").hardDeletes(HardDeletes.INVALIDATE).build();
        ModelSettings m = model.apply(TARGET);
        java.util.function.BiConsumer<Integer, String> day = (d, status) -> {
            for (int key = 1; key <= 3; key++) {
                if (key != d) {
                    raw.insert("linux", key, key, key, key, status + (key == 1 ? d : 0), ts("2024-01-0" + d + " 09:00"),
                            date("2024-01-0" + d));
                }
            }
        };
        day.accept(1, "a");
        day.accept(3, "c");
        fixture.run(m);
        day.accept(2, "b"); // late: replayed key by key, key 2 absent from it (a deletion)
        assertThat(fixture.run(m).lateBatchFound()).isTrue();

        fixture.run(model.apply("snap_clean"));
        assertThat(fixture.essence(TARGET)).as("the history of one clean run")
                .containsExactlyInAnyOrderElementsOf(fixture.essence("snap_clean"));
        assertThat(fixture.engine(null).audit(m).clean()).as("the audit of the history").isTrue();
    }

    /**
     * A column added to the history by hand and named like the marker columns with which a run describes the history,
     * its archive and its pending table in one statement ({@code itersnap_table_1}, {@code _2}): the run describes them
     * one by one instead, runs in order and through a late batch, and the history equals one clean run's.
     */
    @Test
    void aHistoryColumnNamedLikeTheMarkersOfTheTablesDescribedTogetherIsAColumnLikeAnyOther() {
        RawTable raw = fixture.rawTable("raw_marker", "id INT", "status " + type("VARCHAR(20)"), "updated_at TIMESTAMP",
                "file_date DATE");
        java.util.function.Function<String, ModelSettings> model = target -> ModelSettings.builder(target)
                .target(target).source(raw.selectAll()).uniqueKey("id").updatedAt("updated_at")
                .sequenceBy("file_date").hardDeletes(HardDeletes.INVALIDATE).build();
        ModelSettings m = model.apply(TARGET);
        java.util.function.BiConsumer<Integer, String> day = (d, status) -> {
            for (int key = 1; key <= 3; key++) {
                if (key != d) {
                    raw.insert(key, status + (key == 1 ? d : 0), ts("2024-01-0" + d + " 09:00"), date("2024-01-0" + d));
                }
            }
        };
        day.accept(1, "a");
        day.accept(3, "c");
        fixture.run(m);
        fixture.execute("ALTER TABLE " + TARGET + " ADD COLUMN itersnap_table_1 INT");
        fixture.execute("ALTER TABLE " + TARGET + " ADD COLUMN itersnap_table_2 INT");
        day.accept(2, "b"); // late: replayed key by key, key 2 absent from it (a deletion)
        assertThat(fixture.run(m).lateBatchFound()).isTrue();
        day.accept(4, "d");
        assertThat(fixture.run(m).batchesApplied()).isEqualTo(1);

        fixture.run(model.apply("snap_clean_marker"));
        fixture.execute("ALTER TABLE snap_clean_marker ADD COLUMN itersnap_table_1 INT");
        fixture.execute("ALTER TABLE snap_clean_marker ADD COLUMN itersnap_table_2 INT");
        assertThat(fixture.essence(TARGET)).as("the history of one clean run")
                .containsExactlyInAnyOrderElementsOf(fixture.essence("snap_clean_marker"));
        assertThat(fixture.engine(null).audit(m).clean()).as("the audit of the history").isTrue();
    }

    /** A raw table with a key, updated_at, file_date and a column of each type of {@code cases}. */
    private RawTable typesTable(String name, List<TypeCase> cases) {
        List<String> defs = new ArrayList<>(List.of("id INT", "updated_at TIMESTAMP", "file_date DATE"));
        for (int i = 0; i < cases.size(); i++) {
            defs.add(column(i) + " " + cases.get(i).sqlType());
        }
        return fixture.rawTable(name, defs.toArray(String[]::new));
    }

    private static void insert(RawTable raw, List<TypeCase> cases, int key, String updatedAt, String day,
                               String values) {
        List<String> v = new ArrayList<>();
        for (int i = 0; i < cases.size(); i++) {
            v.add(values.equals("null") ? "NULL" : values.equals("b" + i) ? cases.get(i).b() : cases.get(i).a());
        }
        raw.fixture().execute("INSERT INTO " + raw.name() + " VALUES (?, ?, ?, " + String.join(", ", v) + ")", key,
                ts(updatedAt), date(day));
    }

    /**
     * A type itersnap cannot carry exactly is refused before anything is written, naming the column and the type. One
     * raw table for every type: since a refused run writes nothing, each type meets the same empty history.
     */
    @Test
    void aTypeThatCannotRoundTripIsRefusedNamingTheColumnAndTheType() {
        // the value comes from the source query: some types cannot even be stored in a raw table
        RawTable raw = fixture.rawTable("raw_odd", "id INT", "updated_at TIMESTAMP", "file_date DATE");
        raw.insert(1, ts("2024-01-01 09:00"), date("2024-01-01"));
        for (TypeCase t : refusedTypes()) {
            ModelSettings m = ModelSettings.builder(MODEL).target(TARGET).source("SELECT id, updated_at, file_date, "
                    + t.a() + " AS odd_value FROM raw_odd").uniqueKey("id").updatedAt("updated_at")
                    .sequenceBy("file_date").build();

            assertThatThrownBy(() -> fixture.run(m)).as(t.sqlType()).isInstanceOfSatisfying(ItersnapException.class,
                    e -> {
                        assertThat(e.code()).as(e.getMessage()).isEqualTo(ErrorCode.INVALID_SOURCE);
                        assertThat(e.getMessage()).containsIgnoringCase("odd_value").contains("type");
                    });
            assertThat(fixture.tableExists(TARGET)).as(t.sqlType()).isFalse();
        }
    }

    /**
     * sequence_by widened in the source (INT to BIGINT, through a view the model reads): applied like any widening,
     * the bookkeeping columns follow, later and late batches work. Changed to another kind of value (DATE to
     * TIMESTAMP): refused before anything is written, naming the column and both types; cast back, the model runs on.
     */
    @Test
    void sequenceByWidensOrIsRefusedButNeverLeavesTheModelStuck() {
        RawTable raw = fixture.rawTable("raw_b", "id INT", "status VARCHAR(10)", "updated_at TIMESTAMP", "batch_no INT",
                "file_date DATE");
        fixture.execute("CREATE VIEW src_b AS SELECT id, status, updated_at, batch_no FROM raw_b");
        ModelSettings m = ModelSettings.builder(MODEL).target(TARGET).source("SELECT * FROM src_b").uniqueKey("id")
                .updatedAt("updated_at").sequenceBy("batch_no").build();
        raw.insert(1, "a", ts("2024-01-01 09:00"), 10, date("2024-01-01"));
        raw.insert(1, "c", ts("2024-01-03 09:00"), 30, date("2024-01-03"));
        fixture.run(m);
        fixture.execute("DROP VIEW src_b");
        fixture.execute("CREATE VIEW src_b AS SELECT id, status, updated_at, CAST(batch_no AS BIGINT) AS batch_no "
                + "FROM raw_b");
        raw.insert(1, "b", ts("2024-01-02 09:00"), 20, date("2024-01-02"));
        raw.insert(1, "d", ts("2024-01-04 09:00"), 40, date("2024-01-04"));

        assertThat(fixture.run(m).lateBatchFound()).isTrue();
        assertThat(fixture.versions(TARGET, "id", 1)).extracting(v -> v.get("status"), SnapshotFixture.Version::openedSeq)
                .containsExactly(tuple("a", 10L), tuple("b", 20L), tuple("c", 30L), tuple("d", 40L));
        String widened = types(fixture.dataSource(), "SELECT batch_no FROM src_b").get(0).replaceFirst("^\\S+ ", "");
        assertThat(types(fixture.dataSource(), "SELECT batch_no, dbt_opened_seq, dbt_closed_seq FROM " + TARGET))
                .as("the column and the bookkeeping columns follow it").allSatisfy(t -> assertThat(t).endsWith(" " + widened));

        ModelSettings byDate = ModelSettings.builder("by_date").target(TARGET + "_d").source("SELECT * FROM src_d")
                .uniqueKey("id").updatedAt("updated_at").sequenceBy("file_date").build();
        fixture.execute("CREATE VIEW src_d AS SELECT id, status, updated_at, file_date FROM raw_b");
        fixture.run(byDate);
        List<SnapshotFixture.Version> before = fixture.history(TARGET + "_d");
        fixture.execute("DROP VIEW src_d");
        fixture.execute("CREATE VIEW src_d AS SELECT id, status, updated_at, CAST(file_date AS TIMESTAMP) AS file_date "
                + "FROM raw_b");
        assertThatThrownBy(() -> fixture.run(byDate)).isInstanceOfSatisfying(ItersnapException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.INCOMPATIBLE_SCHEMA_CHANGE);
            assertThat(e.getMessage()).containsIgnoringCase("'file_date'").containsIgnoringCase("date (history)")
                    .containsIgnoringCase("timestamp");
        });
        assertThat(fixture.history(TARGET + "_d")).isEqualTo(before);
        fixture.execute("DROP VIEW src_d");
        fixture.execute("CREATE VIEW src_d AS SELECT id, status, updated_at, file_date FROM raw_b");
        raw.insert(2, "e", ts("2024-01-05 09:00"), 50, date("2024-01-05"));
        assertThat(fixture.run(byDate).batchesApplied()).as("cast back, the model runs on").isEqualTo(1);
    }

    /**
     * Identifier limits: two model names longer than the database's identifier limit allows for derived names, sharing
     * a long beginning, get working tables and indexes that fit and stay apart (PostgreSQL cut them to one name:
     * "relation already exists"), through a late batch; a target or metadata schema longer than the limit is refused
     * before anything is written, naming the setting and the limit.
     */
    @Test
    void longModelNamesGetDerivedNamesThatFitAndTooLongIdentifiersAreRefused() {
        RawTable raw = customers(fixture);
        String shared = "model_with_a_long_name_that_says_where_its_data_comes_from_and_more_";
        List<ModelSettings> models = new ArrayList<>();
        for (String end : List.of("a", "b")) {
            models.add(ModelSettings.builder(shared + end).target("snap_" + end).source(raw.selectAll())
                    .uniqueKey("id").updatedAt("updated_at").sequenceBy("file_date")
                    .hardDeletes(dev.itersnap.core.HardDeletes.INVALIDATE).build());
        }
        raw.insert(1, "Active", "A", ts("2024-01-01 09:00"), date("2024-01-01"));
        raw.insert(1, "Gold", "A", ts("2024-01-03 09:00"), date("2024-01-03"));
        models.forEach(fixture::run);
        raw.insert(1, "Silver", "A", ts("2024-01-02 09:00"), date("2024-01-02"));
        models.forEach(m -> assertThat(fixture.run(m).lateBatchFound()).isTrue());
        assertThat(fixture.essence("snap_a")).hasSize(3).isEqualTo(fixture.essence("snap_b"));

        int limit = fixture.engine(null).dialect().capabilities().maxIdentifierLength();
        if (limit <= 0) {
            return;
        }
        String tooLong = "t".repeat(limit + 1);
        ModelSettings longTarget = ModelSettings.builder("short").target(tooLong).source(raw.selectAll())
                .uniqueKey("id").updatedAt("updated_at").sequenceBy("file_date").build();
        ModelSettings longSchema = ModelSettings.builder("short").target("snap_short").metadataSchema(tooLong)
                .source(raw.selectAll()).uniqueKey("id").updatedAt("updated_at").sequenceBy("file_date").build();
        for (ModelSettings m : List.of(longTarget, longSchema)) {
            assertThatThrownBy(() -> fixture.engine(null).validate(m)).isInstanceOfSatisfying(ItersnapException.class,
                    e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_SETTING));
            assertThatThrownBy(() -> fixture.run(m)).isInstanceOfSatisfying(ItersnapException.class, e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.INVALID_SETTING);
                assertThat(e.getMessage()).containsAnyOf("'target'", "'metadata_schema'")
                        .contains("at most " + limit);
            });
        }
        assertThat(fixture.tableExists("snap_short")).isFalse();
    }

    /**
     * The version ids of a composite key escape the separator: {@code ('a|b', 'c')} and {@code ('a', 'b|c')} are two
     * keys with two ids.
     */
    @Test
    void compositeKeysThatJoinToTheSameTextGetDifferentVersionIds() {
        RawTable raw = fixture.rawTable("raw_pairs", "k1 VARCHAR(10)", "k2 VARCHAR(10)", "status VARCHAR(10)",
                "updated_at TIMESTAMP", "file_date DATE");
        raw.insert("a|b", "c", "x", ts("2024-01-01 09:00"), date("2024-01-01"));
        raw.insert("a", "b|c", "x", ts("2024-01-01 09:00"), date("2024-01-01"));
        raw.insert("a\\", "|c", "x", ts("2024-01-01 09:00"), date("2024-01-01"));
        fixture.run(ModelSettings.builder(MODEL).target(TARGET).source(raw.selectAll()).uniqueKey("k1", "k2")
                .updatedAt("updated_at").sequenceBy("file_date").build());

        assertThat(fixture.history(TARGET)).extracting(SnapshotFixture.Version::scdId).doesNotHaveDuplicates()
                .hasSize(3);
    }

    /**
     * The version ids of a two-part key whose parts hold {@code \} and {@code |} in every position (alone, first, last,
     * inside, doubled, both) are those of the documented formula ({@link ReferenceModel#scdId}: each part escaped,
     * {@code \} first), computed here in Java, for versions and for deletion records alike; no two keys share an id.
     */
    @Test
    void compositeKeyIdsFollowTheDocumentedFormulaWithBackslashesAndBars() {
        RawTable raw = fixture.rawTable("raw_pairs", "k1 VARCHAR(10)", "k2 VARCHAR(10)", "status VARCHAR(10)",
                "updated_at TIMESTAMP", "file_date DATE");
        List<String> parts = List.of("a", "\\", "|", "\\|", "|\\", "\\a", "a\\", "|a", "a|", "a\\b", "a|b", "\\\\",
                "||", "a\\|b", "a|\\b", "\\|\\", "|\\|");
        List<Object[]> rows = new ArrayList<>();
        for (String k1 : parts) {
            for (String k2 : parts) {
                rows.add(new Object[] {k1, k2, "x", ts("2024-01-01 09:00"), date("2024-01-01")});
            }
        }
        raw.insertAll(rows);
        raw.insert("other", "key", "x", ts("2024-01-02 09:00"), date("2024-01-02")); // every pair absent: deleted
        fixture.run(ModelSettings.builder(MODEL).target(TARGET).source(raw.selectAll()).uniqueKey("k1", "k2")
                .updatedAt("updated_at").sequenceBy("file_date").hardDeletes(HardDeletes.NEW_RECORD).build());

        List<Map<String, Object>> versions = fixture.query("SELECT k1, k2, dbt_updated_at, dbt_is_deleted, "
                + "dbt_opened_seq, dbt_scd_id FROM " + TARGET + " WHERE k1 <> 'other'");
        assertThat(versions).hasSize(2 * parts.size() * parts.size());
        for (Map<String, Object> v : versions) {
            boolean deleted = Boolean.TRUE.equals(v.get("dbt_is_deleted"));
            String expected = ReferenceModel.scdId(List.of((String) v.get("k1"), (String) v.get("k2")),
                    database().castToText(deleted ? ts("2024-01-02 00:00") : ts("2024-01-01 09:00")),
                    deleted ? "2024-01-02" : "2024-01-01", deleted);
            assertThat(v.get("dbt_scd_id")).as("key (%s, %s)%s", v.get("k1"), v.get("k2"),
                    deleted ? ", deletion record" : "").isEqualTo(expected);
        }
        assertThat(versions).extracting(v -> v.get("dbt_scd_id")).doesNotHaveDuplicates();
    }

    // ------------------------------------------------------------------ the key of a sequence_by list

    /** Whether the database's strings can hold U+0000 (PostgreSQL's cannot). */
    protected boolean stringsHoldNul() {
        return true;
    }

    /** The type of a timestamp with time zone in a raw table, or null where the database has none of its own. */
    protected String timestampWithTimeZoneType() {
        return "TIMESTAMP WITH TIME ZONE";
    }

    /**
     * A timestamp with time zone in a {@code sequence_by} list is keyed by its instant: 10:00 at +02:00 comes before
     * 09:00 at +00:00, and the database's key is the Java key of the value it returns.
     */
    @Test
    void sequenceKeyOfATimestampWithTimeZoneIsItsInstant() throws SQLException {
        org.junit.jupiter.api.Assumptions.assumeTrue(timestampWithTimeZoneType() != null);
        RawTable raw = fixture.rawTable("raw_tz", "id INT", "t " + timestampWithTimeZoneType(), "n INT");
        java.time.OffsetDateTime early = java.time.OffsetDateTime.parse("2024-01-01T10:00:00+02:00");
        java.time.OffsetDateTime late = java.time.OffsetDateTime.parse("2024-01-01T09:00:00Z");
        raw.insertAll(List.of(new Object[] {1, early, 1}, new Object[] {2, late, 1}));
        dev.itersnap.spi.Dialect dialect = fixture.engine(null).dialect();
        List<dev.itersnap.spi.SourceColumn> parts = fixture.columns("SELECT t, n FROM raw_tz WHERE 1 = 0");
        Map<Integer, String> keys = new LinkedHashMap<>();
        try (Connection c = fixture.dataSource().getConnection(); Statement st = c.createStatement()) {
            dev.itersnap.internal.SequenceKey key = dev.itersnap.internal.SequenceKey.of(parts);
            try (ResultSet rs = st.executeQuery("SELECT r.id, r.t, r.n, " + dev.itersnap.internal.sql.SqlSteps.of(dialect).sequenceKey(parts, "r")
                    + " FROM raw_tz r")) {
                while (rs.next()) {
                    List<Object> values = List.of(key.types().get(0).read(rs, 2), key.types().get(1).read(rs, 3));
                    assertThat(rs.getString(4)).as("key of %s", values).isEqualTo(key.encode(values));
                    keys.put(rs.getInt(1), rs.getString(4));
                }
            }
        }
        assertThat(dev.itersnap.spi.ValueType.STRING.compare(keys.get(1), keys.get(2))).isNegative();
    }

    /**
     * A {@code sequence_by} list is carried as one text, its key, computed by the database from each row: for every
     * component type and its edge values (the smallest and largest integers, negative decimals, dates and timestamps
     * before 1970, strings with control characters, quotes, commas, non-BMP characters) the database's key is the one
     * {@link dev.itersnap.internal.SequenceKey} computes in Java, reads back as the row's values, and sorts like the tuples.
     */
    @Test
    void sequenceKeyOfEveryComponentTypeIsTheJavaKeyAndSortsLikeTheValues() throws SQLException {
        RawTable raw = fixture.rawTable("raw_keys", "id INT", "i BIGINT", "d DECIMAL(12,3)", "dt DATE",
                "t TIMESTAMP", "s VARCHAR(20)");
        String nul = stringsHoldNul() ? "a\u0000" : "a";
        Object[][] rows = {
                {1, Long.MIN_VALUE, new java.math.BigDecimal("-999999999.999"), date("1900-01-01"),
                        ts("1969-12-31 23:59:59.999999"), ""},
                {2, -1L, new java.math.BigDecimal("-0.001"), date("1969-12-31"), ts("1970-01-01 00:00:00"), "a"},
                {3, 0L, new java.math.BigDecimal("0.000"), date("1970-01-01"), ts("2024-01-05 10:00:00.000001"),
                        "a\u0001"},
                {4, 9L, new java.math.BigDecimal("0.5"), date("2024-02-29"), ts("2024-01-05 10:00:00"), nul},
                {5, 10L, new java.math.BigDecimal("123.456"), date("9999-12-31"), ts("1900-01-01 00:00:00"), "ab"},
                {6, Long.MAX_VALUE, new java.math.BigDecimal("999999999.999"), date("2024-01-05"),
                        ts("2024-01-05 10:00:00"), "a,b'c"},
                {7, 9L, new java.math.BigDecimal("0.5"), date("2024-02-29"), ts("2024-01-05 10:00:00"), "\u00e9"},
                {8, 9L, new java.math.BigDecimal("0.5"), date("2024-02-29"), ts("2024-01-05 10:00:00"),
                        "\ud83d\ude00"},
                {9, 9L, new java.math.BigDecimal("0.5"), date("2024-02-29"), ts("2024-01-05 10:00:00"), "b"},
        };
        raw.insertAll(java.util.Arrays.asList(rows));
        dev.itersnap.spi.Dialect dialect = fixture.engine(null).dialect();
        List<dev.itersnap.spi.SourceColumn> parts = fixture.columns("SELECT i, d, dt, t, s FROM raw_keys WHERE 1 = 0");
        dev.itersnap.internal.SequenceKey key = dev.itersnap.internal.SequenceKey.of(parts);
        List<List<Object>> tuples = new ArrayList<>();
        List<String> keys = new ArrayList<>();
        try (Connection c = fixture.dataSource().getConnection(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT r.i, r.d, r.dt, r.t, r.s, " + dev.itersnap.internal.sql.SqlSteps.of(dialect).sequenceKey(parts, "r")
                     + " FROM raw_keys r")) {
            while (rs.next()) {
                List<Object> values = new ArrayList<>();
                for (int i = 0; i < parts.size(); i++) {
                    values.add(key.types().get(i).read(rs, i + 1));
                }
                String sqlKey = rs.getString(6);
                assertThat(sqlKey).as("key of %s", values).isEqualTo(key.encode(values));
                assertThat(key.decode(sqlKey)).isEqualTo(values);
                assertThat(key.parse(key.text(values))).isEqualTo(values);
                tuples.add(values);
                keys.add(sqlKey);
            }
        }
        assertThat(keys).hasSize(rows.length);
        List<Integer> byKey = new ArrayList<>(java.util.stream.IntStream.range(0, keys.size()).boxed().toList());
        byKey.sort((a, b) -> dev.itersnap.spi.ValueType.STRING.compare(keys.get(a), keys.get(b)));
        List<Integer> byValues = new ArrayList<>(byKey);
        byValues.sort((a, b) -> key.compare(tuples.get(a), tuples.get(b)));
        assertThat(byKey).isEqualTo(byValues);
    }
}
