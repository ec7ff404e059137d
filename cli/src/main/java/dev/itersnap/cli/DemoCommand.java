package dev.itersnap.cli;

import com.zaxxer.hikari.HikariDataSource;
import dev.itersnap.IterativeSnapshot;
import dev.itersnap.core.Inspection;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.RunResult;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

import javax.sql.DataSource;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code itersnap demo}: three daily files on embedded H2, Tuesday's arriving after Wednesday's. Shows the late file
 * detected and the history repaired: Alice Active, then Premium, then Gold.
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = {"Shows a late daily file detected and the history repaired, on an in-memory H2 database.",
                "Monday's, Wednesday's, then Tuesday's customer export arrive; after each, itersnap runs and prints "
                        + "the history table and the ledger."})
public final class DemoCommand implements Callable<Integer> {
    static final String JDBC_URL = "jdbc:h2:mem:itersnap_demo;DB_CLOSE_DELAY=-1";

    private static final ModelSettings MODEL = ModelSettings.builder("customers")
            .target("customers_history")
            .source("SELECT customer_id, name, status, tier, updated_at, file_date FROM raw_customers")
            .uniqueKey("customer_id").updatedAt("updated_at").sequenceBy("file_date")
            .build();

    private static final List<DailyFile> ARRIVALS = List.of(
            new DailyFile("Monday's file arrives", LocalDate.of(2024, 1, 1), List.of(
                    new Customer(1, "Alice", "Active", "standard", at(1, 9, 0)),
                    new Customer(2, "Bob", "Active", "standard", at(1, 10, 30)))),
            new DailyFile("Wednesday's file arrives; Tuesday's is stuck upstream", LocalDate.of(2024, 1, 3), List.of(
                    new Customer(1, "Alice", "Gold", "priority", at(3, 8, 15)),
                    new Customer(2, "Bob", "Active", "priority", at(2, 11, 0)),
                    new Customer(3, "Carol", "Premium", "standard", at(3, 12, 0)))),
            new DailyFile("Tuesday's file finally arrives, after Wednesday's", LocalDate.of(2024, 1, 2), List.of(
                    new Customer(1, "Alice", "Premium", "standard", at(2, 14, 0)),
                    new Customer(2, "Bob", "Active", "priority", at(2, 11, 0)),
                    new Customer(3, "Carol", "Active", "standard", at(2, 16, 45)))));

    @Spec
    private CommandSpec spec;

    @Override
    public Integer call() throws SQLException {
        PrintWriter out = spec.commandLine().getOut();
        try (HikariDataSource dataSource = ConnectionPool.open(JDBC_URL, null, null, false)) {
            createRawTable(dataSource);
            IterativeSnapshot snapshots = IterativeSnapshot.builder().dataSource(dataSource)
                    .listener(new ConsoleListener(out, "  > ")).build();
            int step = 1;
            RunResult last = null;
            for (DailyFile file : ARRIVALS) {
                out.printf("%n=== %d. %s (file_date %s) ===%n%n", step++, file.title(), file.date());
                load(dataSource, file);
                try (Connection c = dataSource.getConnection()) {
                    TablePrinter.print(out, c, "SELECT customer_id, name, status, tier, updated_at, file_date"
                            + " FROM raw_customers WHERE file_date = ? ORDER BY customer_id", file.date());
                }
                out.println();
                out.println("  itersnap run:");
                last = snapshots.run(MODEL);
                out.println();
                printOutcome(out, last);
                printHistoryAndLedger(out, dataSource, snapshots.inspect(MODEL));
            }
            printConclusion(out, dataSource, last);
        }
        return ExitCodes.OK;
    }

    private static void createRawTable(DataSource dataSource) throws SQLException {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            s.execute("DROP ALL OBJECTS");
            s.execute("CREATE TABLE raw_customers (customer_id INT, name VARCHAR(20), status VARCHAR(20),"
                    + " tier VARCHAR(20), updated_at TIMESTAMP, file_date DATE)");
        }
    }

    private static void load(DataSource dataSource, DailyFile file) throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("INSERT INTO raw_customers VALUES (?, ?, ?, ?, ?, ?)")) {
            for (Customer row : file.rows()) {
                ps.setInt(1, row.id());
                ps.setString(2, row.name());
                ps.setString(3, row.status());
                ps.setString(4, row.tier());
                ps.setObject(5, row.updatedAt());
                ps.setObject(6, file.date());
                ps.addBatch();
            }
            ps.executeBatch();
        }
    }

    private static void printOutcome(PrintWriter out, RunResult r) {
        out.println("Run outcome:");
        List<String> batches = new ArrayList<>();
        r.batches().forEach(b -> batches.add(b.sequenceText()));
        TablePrinter.print(out,
                List.of("batches applied", "late batch detected", "replay point", "inserted", "updated", "deleted",
                        "rejected"),
                List.of(List.of(r.batchesApplied() + " (" + String.join(", ", batches) + ")",
                        r.lateBatchFound() ? "yes" : "no",
                        r.replayPoint() == null ? "-" : r.replayPointText(),
                        "" + r.inserted(), "" + r.updated(), "" + r.deleted(), "" + r.rejected())),
                false, false, false, true, true, true, true);
    }

    private static void printHistoryAndLedger(PrintWriter out, DataSource dataSource, Inspection inspection)
            throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            out.println();
            out.println("History table customers_history:");
            TablePrinter.print(out, c, "SELECT customer_id, name, status, tier, dbt_valid_from, dbt_valid_to,"
                    + " dbt_change_type, changed_attributes FROM customers_history ORDER BY customer_id, dbt_valid_from");
        }
        out.println();
        out.println("Ledger (metadata schema " + inspection.metadataSchema() + "):");
        List<List<String>> rows = new ArrayList<>();
        inspection.ledger().forEach(r -> rows.add(List.of(r.sequence(), r.runId(), "" + r.sourceRows(),
                "" + r.inserted(), "" + r.updated(), "" + r.deleted(), "" + r.rejected(), r.reproduced() ? "yes" : "")));
        TablePrinter.print(out, List.of("sequence", "run_id", "source", "inserted", "updated", "deleted",
                "rejected", "reproduced"), rows, false, false, true, true, true, true, true, false);
    }

    private static void printConclusion(PrintWriter out, DataSource dataSource, RunResult last) throws SQLException {
        List<String> versions = new ArrayList<>();
        String current = null;
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("SELECT status, dbt_valid_to FROM customers_history"
                     + " WHERE customer_id = 1 ORDER BY dbt_valid_from")) {
            try (var rs = ps.executeQuery()) {
                while (rs.next()) {
                    versions.add(rs.getString(1));
                    if (rs.getObject(2) == null) {
                        current = rs.getString(1);
                    }
                }
            }
        }
        out.println();
        if (last.lateBatchFound()) {
            out.printf("Tuesday's file arrived after Wednesday's: itersnap detected it, rolled the history back to %s"
                    + " and replayed.%n", last.replayPointText());
        }
        out.printf("Alice's history reads in business order: %s (current: %s).%n", String.join(" -> ", versions),
                current);
    }

    private static LocalDateTime at(int day, int hour, int minute) {
        return LocalDateTime.of(2024, 1, day, hour, minute);
    }

    /** One daily export file. */
    private record DailyFile(String title, LocalDate date, List<Customer> rows) { }

    /** One row of a daily export file. */
    private record Customer(int id, String name, String status, String tier, LocalDateTime updatedAt) { }
}
