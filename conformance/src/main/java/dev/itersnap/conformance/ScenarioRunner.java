package dev.itersnap.conformance;

import dev.itersnap.conformance.Scenario.Column;
import dev.itersnap.conformance.Scenario.Step;
import dev.itersnap.conformance.TestDatabase.ColumnType;
import dev.itersnap.IterativeSnapshot;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.RunResult;
import dev.itersnap.core.SnapshotEvent;

import javax.sql.DataSource;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Plays a {@link Scenario} against a real database: creates the raw table, follows the delivery plan (retention,
 * loading, runs through {@link IterativeSnapshot#run}) and reads back the history table and the error log.
 */
public final class ScenarioRunner {
    /** The error log, as the engine creates it in the default metadata schema. */
    public static final String ERROR_LOG = ModelSettings.DEFAULT_METADATA_SCHEMA + ".itersnap_errors";

    private final TestDatabase database;

    public ScenarioRunner(TestDatabase database) {
        this.database = database;
    }

    /** One row of the error log: the batch's sequence as text (null for {@code null_sequence}) and the reason. */
    public record LoggedError(String sequence, String reason) {
    }

    /** One run of the plan and what it returned. */
    public record PlannedRun(int step, Step plan, RunResult result) {
    }

    /**
     * What the database holds after the plan.
     *
     * @param history rows of the history table, column names lower-cased, values normalised
     *                (integers as Long, timestamps as LocalDateTime, dates as LocalDate)
     * @param events  every event fired, in order, as text
     */
    public record Outcome(List<Map<String, Object>> history, List<LoggedError> errors, List<PlannedRun> runs,
                          List<String> events) {
    }

    /** Runs the whole plan on a fresh database. A failing run throws, with the events so far attached. */
    public Outcome play(Scenario scenario) throws SQLException {
        DataSource ds = database.newDatabase("s" + Long.toUnsignedString(scenario.seed(), 36));
        List<String> events = Collections.synchronizedList(new ArrayList<>());
        try {
            createRawTable(ds, scenario);
            IterativeSnapshot.Builder builder = IterativeSnapshot.builder().dataSource(ds)
                    .listener(e -> events.add(describe(e)));
            if (database.dialect() != null) {
                builder.dialect(database.dialect());
            }
            IterativeSnapshot snapshots = builder.build();
            ModelSettings settings = scenario.settings();
            List<PlannedRun> runs = new ArrayList<>();
            for (int i = 0; i < scenario.plan().size(); i++) {
                Step step = scenario.plan().get(i);
                dropBatches(ds, scenario, step.drop());
                deliver(ds, scenario, step.deliver());
                for (int r = 0; r < step.runs(); r++) {
                    try {
                        runs.add(new PlannedRun(i, step, snapshots.run(settings)));
                    } catch (RuntimeException e) {
                        throw new ScenarioFailure("step " + (i + 1) + ", run " + (r + 1) + " failed: " + e, events, e);
                    }
                }
            }
            return new Outcome(readHistory(ds), readErrors(ds), runs, List.copyOf(events));
        } finally {
            database.discard(ds);
        }
    }

    /** A run threw; carries the events fired before. */
    public static final class ScenarioFailure extends RuntimeException {
        private final List<String> events;

        ScenarioFailure(String message, List<String> events, Throwable cause) {
            super(message, cause);
            this.events = List.copyOf(events);
        }

        public List<String> events() {
            return events;
        }
    }

    private void createRawTable(DataSource ds, Scenario scenario) throws SQLException {
        String columns = scenario.columns().stream().map(c -> c.name() + " " + database.sqlType(c.type()))
                .collect(Collectors.joining(", "));
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE " + Scenario.RAW_TABLE + " (" + columns + ")");
            if ((scenario.seed() & 1) == 0) {
                // half the cases index the sequence, so discovery is checked both through an index (a loose index
                // scan on PostgreSQL) and without one
                s.execute("CREATE INDEX " + Scenario.RAW_TABLE + "_seq ON " + Scenario.RAW_TABLE + " ("
                        + Scenario.SEQUENCE + ")");
            }
        }
    }

    private void dropBatches(DataSource ds, Scenario scenario, List<Integer> batches) throws SQLException {
        if (batches.isEmpty()) {
            return;
        }
        try (Connection c = ds.getConnection();
             PreparedStatement ps = c.prepareStatement(
                     "DELETE FROM " + Scenario.RAW_TABLE + " WHERE " + Scenario.SEQUENCE + " = ?")) {
            Column sequence = column(scenario, Scenario.SEQUENCE);
            for (int b : batches) {
                bind(ps, 1, sequence.type(), scenario.batches().get(b).sequence());
                ps.executeUpdate();
            }
        }
    }

    private void deliver(DataSource ds, Scenario scenario, List<Integer> batches) throws SQLException {
        if (batches.isEmpty()) {
            return;
        }
        List<Column> columns = scenario.columns();
        String sql = "INSERT INTO " + Scenario.RAW_TABLE + " ("
                + columns.stream().map(Column::name).collect(Collectors.joining(", ")) + ") VALUES ("
                + columns.stream().map(c -> "?").collect(Collectors.joining(", ")) + ")";
        try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            for (int b : batches) {
                List<Map<String, Object>> rows = new ArrayList<>(scenario.batches().get(b).rows());
                rows.addAll(scenario.nullSequenceRows().getOrDefault(b, List.of()));
                for (Map<String, Object> row : rows) {
                    for (int i = 0; i < columns.size(); i++) {
                        bind(ps, i + 1, columns.get(i).type(), row.get(columns.get(i).name()));
                    }
                    ps.addBatch();
                }
            }
            ps.executeBatch();
        }
    }

    private static void bind(PreparedStatement ps, int index, ColumnType type, Object value) throws SQLException {
        if (value == null) {
            ps.setNull(index, switch (type) {
                case INTEGER -> Types.INTEGER;
                case VARCHAR -> Types.VARCHAR;
                case DATE -> Types.DATE;
                case TIMESTAMP -> Types.TIMESTAMP;
            });
        } else if (value instanceof Long l) {
            ps.setInt(index, Math.toIntExact(l));
        } else {
            ps.setObject(index, value);
        }
    }

    private static Column column(Scenario scenario, String name) {
        return scenario.columns().stream().filter(c -> c.name().equals(name)).findFirst().orElseThrow();
    }

    private static List<Map<String, Object>> readHistory(DataSource ds) throws SQLException {
        List<Map<String, Object>> rows = new ArrayList<>();
        try (Connection c = ds.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT * FROM " + Scenario.HISTORY_TABLE)) {
            ResultSetMetaData md = rs.getMetaData();
            while (rs.next()) {
                Map<String, Object> row = new LinkedHashMap<>();
                for (int i = 1; i <= md.getColumnCount(); i++) {
                    Object value = md.getColumnType(i) == Types.OTHER || md.getColumnTypeName(i).contains("JSON")
                            ? rs.getString(i) : rs.getObject(i);
                    row.put(md.getColumnLabel(i).toLowerCase(Locale.ROOT), normalise(value));
                }
                rows.add(row);
            }
        }
        return rows;
    }

    private static List<LoggedError> readErrors(DataSource ds) throws SQLException {
        List<LoggedError> errors = new ArrayList<>();
        try (Connection c = ds.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT sequence_value, reason FROM " + ERROR_LOG)) {
            while (rs.next()) {
                errors.add(new LoggedError(rs.getString(1), rs.getString(2)));
            }
        }
        return errors;
    }

    /** Integers as Long, timestamps as LocalDateTime, dates as LocalDate, JSON and CLOB as text. */
    static Object normalise(Object value) throws SQLException {
        if (value instanceof Integer || value instanceof Short || value instanceof Byte) {
            return ((Number) value).longValue();
        }
        if (value instanceof BigDecimal d && d.scale() <= 0) {
            return d.longValueExact();
        }
        if (value instanceof java.sql.Timestamp t) {
            return t.toLocalDateTime();
        }
        if (value instanceof OffsetDateTime t) {
            return t.toLocalDateTime();
        }
        if (value instanceof java.sql.Date d) {
            return d.toLocalDate();
        }
        if (value instanceof byte[] b) {
            return new String(b, StandardCharsets.UTF_8);
        }
        if (value instanceof java.sql.Clob clob) {
            return clob.getSubString(1, (int) clob.length());
        }
        return value;
    }

    private static String describe(SnapshotEvent e) {
        if (e instanceof SnapshotEvent.BatchApplied b) {
            return "batch applied " + b.batch();
        }
        if (e instanceof SnapshotEvent.RunFinished f) {
            return "run finished: " + f.result().batchesApplied() + " batches, late=" + f.result().lateBatchFound()
                    + ", replay point=" + f.result().replayPoint() + ", timeline violations="
                    + f.result().timelineViolations();
        }
        return e.toString();
    }
}
