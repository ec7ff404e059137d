package dev.itersnap.dialect.databricks;

import dev.itersnap.conformance.FaultInjectingDataSource;
import dev.itersnap.conformance.RawTable;
import dev.itersnap.conformance.SnapshotFixture;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.RunResult;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

import javax.sql.DataSource;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

import static dev.itersnap.conformance.SnapshotFixture.date;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The scratch tables a run empties (stage, batches, keys, work) replaced by {@code CREATE OR REPLACE TABLE} (what the
 * dialect does) against reused and emptied by {@code TRUNCATE TABLE} (after the stage's comment says their shape is
 * the run's; {@link DatabricksDialect#truncatingScratchTables()}): for each way, a model's first run and then
 * {@value #RUNS} runs of one new batch each, and per way the statements per run (and of those the scratch tables'),
 * the scratch tables' Delta commits, the files left in their directories (data files and log files) and the wall time
 * per run; each way twice, in the order A B B A. Prints the figures (docs/benchmarks.md); opt-in
 * ({@code -Ditersnap.spark.figures=true}): a measurement.
 */
@EnabledIfSystemProperty(named = "itersnap.spark.figures", matches = "true")
class SparkScratchTablesFiguresTest {
    private static final int RUNS = 5;
    private static final List<String> SCRATCH = List.of("itersnap_stage_customers", "itersnap_batches_customers",
            "itersnap_keys_customers", "itersnap_work_customers");

    private final SparkTestDatabase database = new SparkTestDatabase();

    @Test
    void replacedAgainstTruncated() throws SQLException {
        // in the order A B B A, so that a JVM warming up or a machine loaded by other work favours neither way
        List<String> figures = new ArrayList<>();
        figures.add(measure("CREATE OR REPLACE", new DatabricksDialect()));
        figures.add(measure("TRUNCATE", DatabricksDialect.truncatingScratchTables()));
        figures.add(measure("TRUNCATE", DatabricksDialect.truncatingScratchTables()));
        figures.add(measure("CREATE OR REPLACE", new DatabricksDialect()));
        figures.forEach(line -> System.out.println("scratch tables [" + line + "]"));
    }

    private String measure(String way, DatabricksDialect dialect) throws SQLException {
        DataSource ds = database.newDatabase("scratch");
        SnapshotFixture f = new SnapshotFixture(ds, database::type).dialect(dialect);
        RawTable raw = f.rawTable("raw_customers", "id INT", "status VARCHAR(20)", "tier VARCHAR(20)",
                "updated_at TIMESTAMP", "file_date DATE");
        ModelSettings m = ModelSettings.builder("customers").target("snap_customers").source(raw.selectAll())
                .uniqueKey("id").updatedAt("updated_at").sequenceBy("file_date").build();
        deliver(raw, date("2024-01-01"), 0);
        f.run(m);
        FaultInjectingDataSource counting = new FaultInjectingDataSource(ds);
        long commitsBefore = commits(ds);
        int statements = 0;
        int scratchStatements = 0;
        long millis = 0;
        for (int n = 1; n <= RUNS; n++) {
            deliver(raw, date("2024-01-01").plusDays(n), n);
            counting.failAt(0);
            long start = System.nanoTime();
            RunResult r = f.engine(counting.dataSource(), null).run(m);
            millis += (System.nanoTime() - start) / 1_000_000;
            assertThat(r.batchesApplied()).isEqualTo(1);
            List<String> sql = counting.statements();
            statements += sql.size();
            scratchStatements += (int) sql.stream().filter(SparkScratchTablesFiguresTest::emptiesScratch).count();
        }
        long commits = commits(ds) - commitsBefore;
        long[] files = files(ds);
        return String.format(Locale.ROOT, "%s: per run %.1f statements (%.1f of them replace or empty a scratch "
                        + "table), %.1f scratch-table commits, %.1f s; after %d runs (and the first) %d data files "
                        + "and %d log files in the four scratch tables' directories", way, statements / (double) RUNS,
                scratchStatements / (double) RUNS, commits / (double) RUNS, millis / 1000.0 / RUNS, RUNS, files[0],
                files[1]);
    }

    private static boolean emptiesScratch(String sql) {
        String s = sql == null ? "" : sql.stripLeading().toUpperCase(Locale.ROOT);
        return (s.startsWith("CREATE OR REPLACE") || s.startsWith("TRUNCATE") || s.startsWith("DROP")
                || s.startsWith("CREATE TABLE")) && SCRATCH.stream().anyMatch(t -> s.contains(t.toUpperCase(Locale.ROOT)));
    }

    private static void deliver(RawTable raw, LocalDate day, int n) {
        List<Object[]> rows = new ArrayList<>();
        for (int id = 1; id <= 20; id++) {
            rows.add(new Object[] {id, "S" + ((id + n) % 3), "T" + (n % 2), day.atTime(9, id % 60), day});
        }
        raw.insertAll(rows);
    }

    /** Delta commits of the four scratch tables so far: the sum of (latest version + 1). */
    private static long commits(DataSource ds) throws SQLException {
        long total = 0;
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            for (String t : SCRATCH) {
                try (ResultSet rs = s.executeQuery("DESCRIBE HISTORY itersnap_metadata." + t + " LIMIT 1")) {
                    rs.next();
                    total += rs.getLong("version") + 1;
                }
            }
        }
        return total;
    }

    /** Data files (outside _delta_log) and files in _delta_log under the scratch tables' locations. */
    private static long[] files(DataSource ds) throws SQLException {
        long data = 0;
        long log = 0;
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            for (String t : SCRATCH) {
                String location;
                try (ResultSet rs = s.executeQuery("DESCRIBE DETAIL itersnap_metadata." + t)) {
                    rs.next();
                    location = rs.getString("location");
                }
                Path dir = Path.of(URI.create(location.startsWith("file:") ? location : "file:" + location));
                try (Stream<Path> all = Files.walk(dir)) {
                    for (Path p : (Iterable<Path>) all.filter(Files::isRegularFile)::iterator) {
                        if (p.toString().contains("_delta_log")) {
                            log++;
                        } else if (p.getFileName().toString().endsWith(".parquet")) {
                            data++;
                        }
                    }
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        }
        return new long[] {data, log};
    }
}
