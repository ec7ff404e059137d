package dev.itersnap.conformance;

import dev.itersnap.IterativeSnapshot;
import dev.itersnap.core.AsOf;
import dev.itersnap.core.UntrackedColumns;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * Nothing a repair replaces is lost (issue 41), on the generated cases of {@link ReferenceModelPropertyTest} (late,
 * restated and repeated batches, retention, replays and full refreshes): after every run (each agreeing with the
 * {@link ReferenceModel}) the history is recorded with the run's finish time from the run log; at the end of the
 * plan, the history as known at each of those times ({@link AsOf#knownAt}) must be exactly the history that run
 * produced, every column of every version. Runs are told apart by their finish times; a run starts after the last
 * finished, so two runs share no finish time at the run log's resolution (microseconds), which the test checks.
 *
 * <p>Cases whose raw table changes columns, or with {@code untracked_columns: overwrite}, are left out: an in-order
 * run changes versions there in place (a column introduced is filled, untracked values overwritten), which only a
 * repair's copies record (see docs/semantics.md, "The history as known at a moment").
 */
public abstract class KnownAtPropertyTest {
    /** The database each case runs on. */
    protected abstract TestDatabase database();

    /** How many fixed seeds to run when {@code itersnap.cases} is not set. */
    protected int defaultCases() {
        return 60;
    }

    /** How many random seeds to run after the fixed ones when {@code itersnap.randomCases} is not set. */
    protected int defaultRandomCases() {
        return 10;
    }

    @TestFactory
    Stream<DynamicTest> historyKnownAtEachRunIsWhatThatRunProduced() {
        ScenarioGenerator generator = new ScenarioGenerator();
        List<Long> seeds = ReferenceModelPropertyTest.seeds(getClass().getSimpleName(), defaultCases(),
                defaultRandomCases());
        return seeds.stream().map(generator::generate).filter(KnownAtPropertyTest::applies)
                .map(s -> DynamicTest.dynamicTest(s.title(), () -> check(s)));
    }

    /**
     * Whether the check applies to a case: its raw table keeps its columns and it does not overwrite untracked columns
     * (an in-order run changes versions in place there, which only a repair's copies record).
     */
    public static boolean applies(Scenario s) {
        return !s.changesSchema() && s.settings().untrackedColumns() != UntrackedColumns.OVERWRITE;
    }

    /** One run's history as it produced it, and when the run log says it finished. */
    private record Produced(String run, LocalDateTime finished, List<String> columns, List<String> history) {
    }

    /**
     * The check of one case as hooks of {@link ScenarioRunner#play(Scenario, java.util.function.Function,
     * ScenarioRunner.AfterRun)}: {@link #afterRun} records each run's history and finish time, {@link #atEnd} reads
     * the history as known at each finish and reports what differs. Single use, one case.
     */
    static final class Check {
        private final Scenario scenario;
        private final TestDatabase database;
        private final List<Produced> produced = new ArrayList<>();

        Check(Scenario scenario, TestDatabase database) {
            this.scenario = scenario;
            this.database = database;
        }

        ScenarioRunner.AfterRun afterRun() {
            return (ds, run) -> {
                List<String> columns = new ArrayList<>();
                List<String> history = rows(ds, "SELECT * FROM " + scenario.target(), null, columns);
                produced.add(new Produced(run.runId(), finished(ds, scenario, run.runId()), columns, history));
            };
        }

        java.util.function.Function<DataSource, List<String>> atEnd() {
            return ds -> {
                List<String> problems = new ArrayList<>();
                IterativeSnapshot.Builder builder = IterativeSnapshot.builder().dataSource(ds);
                if (database.dialect() != null) {
                    builder.dialect(database.dialect());
                }
                IterativeSnapshot snapshots = builder.build();
                LocalDateTime previous = null;
                for (Produced p : produced) {
                    if (previous != null && !p.finished().isAfter(previous)) {
                        problems.add("run " + p.run() + " finished at " + p.finished()
                                + ", not after the run before it");
                    }
                    previous = p.finished();
                    String sql = snapshots.asOfSql(scenario.settings(), AsOf.knownAt(p.finished()));
                    List<String> known = rows(ds, sql, p.columns(), null);
                    if (!known.equals(p.history())) {
                        problems.add("known at " + p.finished() + " (after run " + p.run() + "):\n  expected "
                                + String.join("\n           ", p.history()) + "\n  but read "
                                + String.join("\n           ", known));
                    }
                }
                if (scenario.options().sequenceList() == 0) {
                    problems.addAll(bitemporal(ds, snapshots));
                }
                return problems.isEmpty() ? List.of() : List.of(String.join("\n", problems.subList(0,
                        Math.min(3, problems.size()))));
            };
        }

        /**
         * The relation of both timelines ({@link AsOf#bitemporal}), read once: its rows with
         * {@code itersnap_known_from <= K < itersnap_known_to} (NULL: unbounded) must be each run's history at its
         * finish K, and those still shown (known_to NULL) the history now.
         */
        private List<String> bitemporal(DataSource ds, IterativeSnapshot snapshots) {
            String sql = snapshots.asOfSql(scenario.settings(), AsOf.bitemporal());
            List<Map<String, Object>> both = maps(ds, sql);
            List<String> problems = new ArrayList<>();
            for (Produced p : produced) {
                List<String> known = new ArrayList<>();
                for (Map<String, Object> row : both) {
                    LocalDateTime from = moment(row.get("itersnap_known_from"));
                    LocalDateTime to = moment(row.get("itersnap_known_to"));
                    if ((from == null || !from.isAfter(p.finished())) && (to == null || to.isAfter(p.finished()))) {
                        Map<String, Object> only = new TreeMap<>(row);
                        only.keySet().retainAll(p.columns());
                        known.add(only.toString());
                    }
                }
                known.sort(null);
                if (!known.equals(p.history())) {
                    problems.add("both timelines at " + p.finished() + " (after run " + p.run() + "):\n  expected "
                            + String.join("\n           ", p.history()) + "\n  but read "
                            + String.join("\n           ", known));
                }
            }
            return problems;
        }

        private static LocalDateTime moment(Object v) {
            return v == null ? null : v instanceof LocalDateTime t ? t
                    : v instanceof java.sql.Timestamp t ? t.toLocalDateTime()
                    : v instanceof java.time.OffsetDateTime o ? o.toLocalDateTime()
                    : LocalDateTime.parse(v.toString().trim().replace(' ', 'T'));
        }

        /** The runs recorded. */
        int runs() {
            return produced.size();
        }
    }

    private void check(Scenario scenario) throws SQLException {
        Check check = new Check(scenario, database());
        ScenarioRunner.Result result = new ScenarioRunner(database()).play(scenario, check.atEnd(), check.afterRun());
        if (!result.passed()) {
            fail(scenario.describe() + "\nafter " + result.where() + ":\n" + String.join("\n", result.problems()));
        }
        assertThat(check.runs()).isEqualTo(scenario.engineRuns());
    }

    /** The run's finish time from the run log. */
    private static LocalDateTime finished(DataSource ds, Scenario scenario, String runId) throws SQLException {
        try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement("SELECT finished_at FROM "
                + scenario.metadataSchema() + ".itersnap_runs WHERE run_id = ?")) {
            ps.setString(1, runId);
            try (ResultSet rs = ps.executeQuery()) {
                assertThat(rs.next()).as("run %s in the run log", runId).isTrue();
                return rs.getObject(1, LocalDateTime.class);
            }
        }
    }

    /**
     * The rows of a query, each as its columns (lower case, sorted) with normalised values, sorted; only the columns
     * {@code only} (null: every one); the names of the columns read go to {@code columns} (or null).
     */
    private static List<String> rows(DataSource ds, String sql, List<String> only, List<String> columns) {
        List<String> out = new ArrayList<>();
        for (Map<String, Object> row : maps(ds, sql, columns)) {
            if (only != null) {
                row.keySet().retainAll(only);
            }
            out.add(row.toString());
        }
        out.sort(null);
        return out;
    }

    private static List<Map<String, Object>> maps(DataSource ds, String sql) {
        return maps(ds, sql, null);
    }

    /**
     * The rows of a query as maps of their columns (lower case, sorted) to normalised values (decimals as plain text
     * without trailing zeros); the names of the columns read go to {@code columns} (or null).
     */
    private static List<Map<String, Object>> maps(DataSource ds, String sql, List<String> columns) {
        List<Map<String, Object>> out = new ArrayList<>();
        try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement(sql);
             ResultSet rs = ps.executeQuery()) {
            ResultSetMetaData md = rs.getMetaData();
            for (int i = 1; columns != null && i <= md.getColumnCount(); i++) {
                columns.add(md.getColumnLabel(i).toLowerCase(Locale.ROOT));
            }
            while (rs.next()) {
                Map<String, Object> row = new TreeMap<>();
                for (int i = 1; i <= md.getColumnCount(); i++) {
                    String name = md.getColumnLabel(i).toLowerCase(Locale.ROOT);
                    Object v = name.startsWith("itersnap_known_") ? rs.getObject(i)
                            : SnapshotFixture.normalize(rs.getObject(i));
                    row.put(name, v instanceof java.math.BigDecimal b ? b.stripTrailingZeros().toPlainString() : v);
                }
                out.add(row);
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e.getMessage() + " in " + sql, e);
        }
        return out;
    }
}
