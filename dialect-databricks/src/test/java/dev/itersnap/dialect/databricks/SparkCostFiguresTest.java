package dev.itersnap.dialect.databricks;

import dev.itersnap.conformance.FaultInjectingDataSource;
import dev.itersnap.conformance.RawTable;
import dev.itersnap.conformance.SnapshotFixture;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.RunResult;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

import static dev.itersnap.conformance.SnapshotFixture.date;
import static dev.itersnap.conformance.SnapshotFixture.ts;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a run costs on Delta: statements per run and per batch (through the facade, by kind) and Delta commits (table
 * versions from {@code DESCRIBE HISTORY}, before and after each run). Four runs: the first batch, one batch in order,
 * two batches in order, and a late batch that replays the three after it. Prints the figures; opt-in
 * ({@code -Ditersnap.spark.figures=true}) because it is a measurement, not a guarantee.
 */
@EnabledIfSystemProperty(named = "itersnap.spark.figures", matches = "true")
class SparkCostFiguresTest {
    private final SparkTestDatabase database = new SparkTestDatabase();

    @Test
    void statementsAndCommitsPerRunAndPerBatch() throws SQLException {
        DataSource ds = database.newDatabase("figures");
        SnapshotFixture f = new SnapshotFixture(ds, database::type);
        RawTable raw = f.rawTable("raw_customers", "id INT", "status VARCHAR(20)", "tier VARCHAR(20)",
                "updated_at TIMESTAMP", "file_date DATE");
        ModelSettings m = ModelSettings.builder("customers").target("snap_customers").source(raw.selectAll())
                .uniqueKey("id").updatedAt("updated_at").sequenceBy("file_date").build();
        FaultInjectingDataSource counting = new FaultInjectingDataSource(ds);

        deliver(raw, date("2024-01-01"), 0);
        measure("first run, 1 batch (creates the tables)", f, counting, m, 1);
        deliver(raw, date("2024-01-03"), 1);
        measure("1 batch in order", f, counting, m, 1);
        deliver(raw, date("2024-01-04"), 2);
        deliver(raw, date("2024-01-05"), 3);
        measure("2 batches in order", f, counting, m, 2);
        deliver(raw, date("2024-01-02"), 4);
        RunResult late = measure("late batch: 1 new + 3 replayed", f, counting, m, 4);
        assertThat(late.lateBatchFound()).isTrue();
        measure("nothing new", f, counting, m, 0);

        // a first load of 30 batches by a second model, its metadata schema already there
        RawTable raw30 = f.rawTable("raw_load30", "id INT", "status VARCHAR(20)", "tier VARCHAR(20)",
                "updated_at TIMESTAMP", "file_date DATE");
        List<Object[]> rows = new java.util.ArrayList<>();
        for (int n = 0; n < 30; n++) {
            LocalDate day = date("2024-02-01").plusDays(n);
            for (int id = 1; id <= 3; id++) {
                rows.add(new Object[] {id, "S" + ((id + n / 3) % 2), "T" + (n / 5 % 2), day.atTime(9, id), day});
            }
        }
        raw30.insertAll(rows);
        ModelSettings m30 = ModelSettings.builder("load30").target("snap_load30").source(raw30.selectAll())
                .uniqueKey("id").updatedAt("updated_at").sequenceBy("file_date").build();
        measure("first load, 30 batches (a second model)", f, counting, m30, 30);
    }

    private static void deliver(RawTable raw, LocalDate day, int n) {
        for (int id = 1; id <= 3; id++) {
            raw.insert(id, "S" + ((id + n) % 2), "T" + (n % 2), day.atTime(9, id), day);
        }
    }

    private RunResult measure(String what, SnapshotFixture f, FaultInjectingDataSource counting, ModelSettings m,
                              int batches) throws SQLException {
        long before = commits(f.dataSource());
        counting.failAt(0);
        long start = System.nanoTime();
        RunResult r = f.engine(counting.dataSource(), null).run(m);
        long millis = (System.nanoTime() - start) / 1_000_000;
        long commits = commits(f.dataSource()) - before;
        List<String> statements = counting.statements();
        assertThat(r.batchesApplied()).isEqualTo(batches);
        System.out.printf(Locale.ROOT, "cost [%s]: %d statements %s, %d Delta commits, %.1f s%n", what,
                statements.size(), kinds(statements), commits, millis / 1000.0);
        for (List<String> batch : batches(statements)) {
            System.out.printf(Locale.ROOT, "cost [%s]   one batch: %d statements %s%n", what, batch.size(),
                    kinds(batch));
        }
        return r;
    }

    /** The statements of each batch: from clearing the work table to its ledger entry. */
    private static List<List<String>> batches(List<String> statements) {
        List<List<String>> out = new ArrayList<>();
        List<String> current = null;
        for (String s : statements) {
            String flat = s == null ? "" : s.replaceAll("\\s+", " ");
            if (flat.startsWith("DELETE FROM `itersnap_metadata`.`itersnap_work_")) {
                current = new ArrayList<>();
                out.add(current);
            }
            if (current != null) {
                current.add(flat);
                if (flat.startsWith("INSERT INTO `itersnap_metadata`.`itersnap_ledger`")) {
                    current = null;
                }
            }
        }
        return out;
    }

    private static Map<String, Integer> kinds(List<String> statements) {
        Map<String, Integer> out = new TreeMap<>();
        for (String s : statements) {
            String word = s == null ? "?" : s.strip().split("\\s+")[0].toUpperCase(Locale.ROOT);
            out.merge(word, 1, Integer::sum);
        }
        return out;
    }

    /** Delta commits so far over every table of the database's schemas: the sum of (latest version + 1). */
    private static long commits(DataSource ds) throws SQLException {
        long total = 0;
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            String current = c.getSchema();
            for (String schema : List.of(current, current + "_itersnap_metadata")) {
                List<String> tables = new ArrayList<>();
                try (ResultSet rs = s.executeQuery("SHOW TABLES IN " + schema)) {
                    while (rs.next()) {
                        tables.add(rs.getString("tableName"));
                    }
                } catch (SQLException e) {
                    continue; // the metadata schema before the first run
                }
                for (String t : tables) {
                    try (ResultSet rs = s.executeQuery("DESCRIBE HISTORY " + schema + "." + t + " LIMIT 1")) {
                        rs.next();
                        total += rs.getLong("version") + 1;
                    }
                }
            }
        }
        return total;
    }
}
