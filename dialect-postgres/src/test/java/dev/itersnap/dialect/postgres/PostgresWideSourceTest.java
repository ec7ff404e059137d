package dev.itersnap.dialect.postgres;

import dev.itersnap.IterativeSnapshot;
import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.HardDeletes;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.Strategy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.function.UnaryOperator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The widest sources a model may have on PostgreSQL (issue 36): a table has at most 1,600 columns and a query 1,664
 * values, and the engine's statements carry two of each column of the history (and, under {@code strategy: check},
 * two of each tracked one besides the row). The widest source the engine allows runs its whole life (a first run, a
 * late batch, a restated batch under a full check, a replay); one column more is refused by validate, check and a
 * run before anything is written, naming the counts and the limit.
 */
class PostgresWideSourceTest {
    private DataSource database;

    @BeforeEach
    void setUp() {
        database = PostgresServer.get().newDatabase();
    }

    @AfterEach
    void drop() {
        PostgresServer.get().drop(database);
    }

    private void sql(String... statements) throws Exception {
        try (Connection c = database.getConnection(); Statement s = c.createStatement()) {
            for (String q : statements) {
                s.execute(q);
            }
        }
    }

    private long count(String query) throws Exception {
        try (Connection c = database.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery(query)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** A raw table of {@code columns} columns: the key, updated_at, the file date and INT columns c1, c2, ... */
    private void wide(int columns) throws Exception {
        StringBuilder cs = new StringBuilder();
        for (int i = 1; i <= columns - 3; i++) {
            cs.append(", c").append(i).append(" INT");
        }
        sql("CREATE TABLE wide (id INT, updated_at TIMESTAMP, file_date DATE" + cs + ")");
    }

    private void file(String date, int... ids) throws Exception {
        for (int id : ids) {
            sql("INSERT INTO wide (id, updated_at, file_date, c1, c2) VALUES (" + id + ", TIMESTAMP '" + date
                    + " 09:00', DATE '" + date + "', " + date.substring(8) + ", " + id + ")");
        }
    }

    @ParameterizedTest(name = "{0}: {1} columns run, one more is refused")
    @CsvSource({
            // every column tracked: the row and two of each tracked column, 546 + 2 * 543 + 32 = 1664
            "every column tracked, 546, 1667",
            // one column tracked (and strategy timestamp): two of each column, 2 * 816 + 32 = 1664
            "check_cols c1, 816, 1666",
            "strategy timestamp, 816, 1666"})
    void theWidestSourceRunsAndOneColumnMoreIsRefused(String tracking, int widest, int carried) throws Exception {
        wide(widest + 1);
        UnaryOperator<ModelSettings.Builder> tracked = b -> switch (tracking) {
            case "check_cols c1" -> b.checkCols("c1");
            case "strategy timestamp" -> b.strategy(Strategy.TIMESTAMP);
            default -> b;
        };
        IterativeSnapshot snap = IterativeSnapshot.builder().dataSource(database).listener(e -> { }).build();
        ModelSettings tooWide = tracked.apply(ModelSettings.builder("wide").target("wide_history")
                .source("SELECT * FROM wide").uniqueKey("id").updatedAt("updated_at").sequenceBy("file_date")
                .hardDeletes(HardDeletes.NEW_RECORD)).build();
        file("2024-01-01", 1, 2);

        for (Runnable refused : new Runnable[] {() -> snap.validate(tooWide), () -> snap.run(tooWide)}) {
            assertThatThrownBy(refused::run).isInstanceOfSatisfying(ItersnapException.class, e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.INVALID_SOURCE);
                assertThat(e.getMessage()).contains("the source query returns " + (widest + 1) + " columns")
                        .contains("would carry " + carried + " values").contains("postgres allows 1664 in a query");
            });
        }
        assertThat(snap.check(tooWide).failures()).singleElement().asString().contains("would carry " + carried + " values");
        assertThat(count("SELECT COUNT(*) FROM information_schema.tables WHERE table_name = 'wide_history'"))
                .isZero();

        sql("ALTER TABLE wide DROP COLUMN c" + (widest - 2));
        ModelSettings m = tracked.apply(ModelSettings.builder("wide").target("wide_history")
                .source("SELECT * FROM wide").uniqueKey("id").updatedAt("updated_at").sequenceBy("file_date")
                .hardDeletes(HardDeletes.NEW_RECORD)).build();
        snap.validate(m);
        assertThat(snap.check(m).failures()).isEmpty();
        assertThat(snap.run(m).batchesApplied()).isEqualTo(1);
        file("2024-01-03", 1);
        snap.run(m);
        file("2024-01-02", 1, 2);
        assertThat(snap.run(m).lateBatchFound()).isTrue();
        sql("UPDATE wide SET c2 = 9, updated_at = TIMESTAMP '2024-01-02 10:00' WHERE file_date = DATE '2024-01-02'");
        assertThat(snap.runWithFullCheck(m).replayPoint()).isNotNull();
        snap.replayFrom(m, "2024-01-01");
        assertThat(count("SELECT COUNT(*) FROM information_schema.columns WHERE table_name = 'wide_history'"))
                .isEqualTo(widest + 9);
        assertThat(count("SELECT COUNT(*) FROM wide_history WHERE dbt_valid_to IS NULL")).isEqualTo(2);
    }
}
