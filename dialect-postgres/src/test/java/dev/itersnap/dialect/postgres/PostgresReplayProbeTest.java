package dev.itersnap.dialect.postgres;

import dev.itersnap.IterativeSnapshot;
import dev.itersnap.core.HardDeletes;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.internal.ResolvedModel;
import dev.itersnap.spi.SourceColumn;
import dev.itersnap.spi.SqlValues;
import dev.itersnap.spi.StageScope;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A key-scoped replay stages the replayed batches' rows of the keys it recomputes by probing the source per
 * (batch, key) when an index of the source leads with the key columns (or the sequence and the key columns), and the
 * batches it applies in full per batch when one leads with the sequence; by joins otherwise: the same history either
 * way, and the same as one clean in-order run.
 */
class PostgresReplayProbeTest {
    private static final PostgresServer SERVER = PostgresServer.get();
    private static final int FILES = 6;
    private static final int LATE = 3;

    private static final ModelSettings MODEL = ModelSettings.builder("customers").target("hist")
            .source("SELECT * FROM raw").uniqueKey("id").updatedAt("upd").sequenceBy("file_date").hardDeletes(HardDeletes.INVALIDATE).build();

    /** Keys k1..k60 in every file but those divisible by 7 are absent from odd files; tiers move with the file. */
    private static void load(DataSource db, int file) throws SQLException {
        exec(db, "INSERT INTO raw SELECT 'k' || g, CASE WHEN (g + " + file + " / (1 + g % 3)) % 3 = 0 THEN 'gold' "
                + "WHEN g % 5 = " + file % 5 + " THEN 'bronze' ELSE 'silver' END, TIMESTAMP '2024-03-01 08:00' + "
                + "INTERVAL '1 day' * " + file + ", DATE '2024-03-01' + " + file + " FROM generate_series(1, 60) g "
                + "WHERE g % 7 <> 0 OR " + file + " % 2 = 0");
    }

    private static DataSource source(String index) throws SQLException {
        DataSource db = SERVER.newDatabase();
        exec(db, "CREATE TABLE raw (id VARCHAR(8), tier VARCHAR(10), upd TIMESTAMP, file_date DATE)");
        if (index != null) {
            exec(db, index);
        }
        return db;
    }

    private static IterativeSnapshot engine(DataSource db) {
        return IterativeSnapshot.builder().dataSource(db).dialect(new PostgresDialect()).build();
    }

    /** Every file but the late one, a run, then the late one and a run that replays from it. */
    private static List<String> lateDelivery(DataSource db) throws SQLException {
        for (int f = 1; f <= FILES; f++) {
            if (f != LATE) {
                load(db, f);
            }
        }
        engine(db).run(MODEL);
        load(db, LATE);
        assertThat(engine(db).run(MODEL).lateBatchFound()).isTrue();
        return history(db);
    }

    private static List<String> history(DataSource db) throws SQLException {
        return read(db, "SELECT id, tier, dbt_valid_from, dbt_valid_to, dbt_change_type, changed_attributes FROM hist "
                + "ORDER BY id, dbt_valid_from");
    }

    @Test
    void aReplayStagesThroughTheSourcesIndexWhereOneServesAndTheSameHistoryOtherwise() throws SQLException {
        DataSource clean = source(null);
        DataSource plain = source(null);
        DataSource byKey = source("CREATE INDEX raw_key ON raw (id, file_date)");
        DataSource bySequence = source("CREATE INDEX raw_key ON raw (file_date, id)");
        DataSource sequenceOnly = source("CREATE INDEX raw_key ON raw (file_date)");
        // the key in another collation than its column's: the planner cannot use it for the key's equality
        DataSource otherCollation = source("CREATE INDEX raw_key ON raw (id COLLATE \"POSIX\", file_date)");
        try {
            for (int f = 1; f <= FILES; f++) {
                load(clean, f);
            }
            engine(clean).run(MODEL);
            List<String> expected = history(clean);
            assertThat(expected).hasSizeGreaterThan(100);

            assertThat(lateDelivery(plain)).isEqualTo(expected);
            assertThat(lateDelivery(byKey)).isEqualTo(expected);
            assertThat(lateDelivery(bySequence)).isEqualTo(expected);
            assertThat(lateDelivery(sequenceOnly)).isEqualTo(expected);
            assertThat(lateDelivery(otherCollation)).isEqualTo(expected);

            // the staging statement of the replay, explained on the scratch tables the late run left behind: a probe
            // per (batch, key) through the index, the join form never executed; or the other way round
            String probed = "Index (Only )?Scan using raw_key on raw s0(_\\d+)? \\(actual[^\\n]*loops=[1-9]\\d+\\)";
            String joined = "on raw s0(_\\d+)? \\(actual[^\\n]*rows=[1-9][^\\n]*loops=1\\)";
            String skipped = "on raw s0(_\\d+)? \\(never executed\\)";
            for (DataSource db : List.of(byKey, bySequence)) {
                assertThat(stagingPlan(db, StageScope.REPLAYED_KEYS)).containsPattern(probed).containsPattern(skipped)
                        .doesNotContainPattern(joined);
            }
            // an index the probe cannot use (or none): the join, the probe never executed
            for (DataSource db : List.of(plain, sequenceOnly, otherCollation)) {
                assertThat(stagingPlan(db, StageScope.REPLAYED_KEYS)).containsPattern(joined).containsPattern(skipped)
                        .doesNotContainPattern(probed);
            }
            // the late batch itself (applied in full) is probed through an index the sequence leads, else joined:
            // the first branch of the statement is the probe, the second the join
            for (DataSource db : List.of(bySequence, sequenceOnly)) {
                assertThat(stagingPlan(db, StageScope.FRESH)).containsPattern("on raw s0_1 \\(actual[^\\n]*rows=[1-9]")
                        .contains("on raw s0_2 (never executed)");
            }
            for (DataSource db : List.of(plain, byKey)) {
                assertThat(stagingPlan(db, StageScope.FRESH)).containsPattern("on raw s0_2 \\(actual[^\\n]*rows=[1-9]")
                        .contains("on raw s0_1 (never executed)");
            }
        } finally {
            for (DataSource db : List.of(clean, plain, byKey, bySequence, sequenceOnly, otherCollation)) {
                SERVER.drop(db);
            }
        }
    }

    /** EXPLAIN ANALYZE of staging the replay's rows of {@code scope} from the late file on, rolled back. */
    private static String stagingPlan(DataSource db, StageScope scope) throws SQLException {
        SourceColumn id = new SourceColumn("id", Types.VARCHAR, "varchar", 8, 0);
        SourceColumn tier = new SourceColumn("tier", Types.VARCHAR, "varchar", 10, 0);
        SourceColumn upd = new SourceColumn("upd", Types.TIMESTAMP, "timestamp", 29, 6);
        SourceColumn seq = new SourceColumn("file_date", Types.DATE, "date", 13, 0);
        ResolvedModel m = ResolvedModel.builder(MODEL, x -> x.toLowerCase(Locale.ROOT))
                .sourceColumns(List.of(id, tier, upd, seq)).keys(List.of("id")).updatedAt("upd")
                .sequenceBy("file_date").build();
        dev.itersnap.spi.Statement stage = dev.itersnap.internal.sql.SqlSteps.of(new PostgresDialect()).stageSource(m, LocalDate.of(2024, 3, 1).plusDays(LATE),
                false, scope);
        try (Connection c = db.getConnection()) {
            c.setAutoCommit(false);
            try (PreparedStatement ps = c.prepareStatement("EXPLAIN (ANALYZE, COSTS OFF) " + stage.sql())) {
                for (int i = 0; i < stage.values().size(); i++) {
                    SqlValues.bind(ps, i + 1, stage.values().get(i));
                }
                StringBuilder plan = new StringBuilder();
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        plan.append(rs.getString(1)).append('\n');
                    }
                }
                return plan.toString();
            } finally {
                c.rollback();
            }
        }
    }

    private static void exec(DataSource db, String sql) throws SQLException {
        try (Connection c = db.getConnection(); Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }

    private static List<String> read(DataSource db, String sql) throws SQLException {
        List<String> out = new ArrayList<>();
        try (Connection c = db.getConnection(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery(sql)) {
            while (rs.next()) {
                StringBuilder row = new StringBuilder();
                for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) {
                    row.append(i > 1 ? "|" : "").append(rs.getString(i));
                }
                out.add(row.toString());
            }
        }
        return out;
    }
}
