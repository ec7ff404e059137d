package dev.itersnap.dialect.duckdb;

import dev.itersnap.IterativeSnapshot;
import dev.itersnap.core.DriverDataSource;
import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.core.LogicChange;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.RunResult;
import dev.itersnap.core.SnapshotEvent;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import javax.sql.DataSource;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A folder of daily files as a model's source (docs/dialects.md, "DuckDB: a folder of files as the source"): the source
 * query reads every file of the folder with its name ({@code read_csv} / {@code read_parquet} with
 * {@code filename = true}), and the batch's sequence is the date in the file name or a column of the file. A late file,
 * a replaced file, a removed file, a file with a new column and a malformed file, each on CSV and Parquet, against the
 * history one run over the same files in a fresh database writes.
 */
class DuckDbFolderSourceTest {
    /** Where the batch's sequence comes from. */
    enum SequenceFrom { FILE_NAME, COLUMN }

    /** The files' format. */
    enum Format { CSV, PARQUET }

    static Stream<Arguments> cases() {
        return Stream.of(Arguments.of(Format.CSV, SequenceFrom.FILE_NAME), Arguments.of(Format.CSV, SequenceFrom.COLUMN),
                Arguments.of(Format.PARQUET, SequenceFrom.FILE_NAME),
                Arguments.of(Format.PARQUET, SequenceFrom.COLUMN));
    }

    @TempDir
    Path dir;

    /** One row of a daily file. */
    record Row(int id, String status, String updatedAt) {
    }

    /** Day d's full picture: keys 1..4, key k changing on the days e with (k + e) % 3 == 0. */
    private static List<Row> day(int d) {
        List<Row> rows = new ArrayList<>();
        for (int id = 1; id <= 4; id++) {
            int changed = 0;
            for (int e = 1; e <= d; e++) {
                if ((id + e) % 3 == 0) {
                    changed = e;
                }
            }
            rows.add(new Row(id, changed == 0 ? "Active" : "S" + changed,
                    changed == 0 ? "2023-12-31 09:00:00" : date(changed) + " 09:00:00"));
        }
        return rows;
    }

    private static String date(int d) {
        return "2024-01-0" + d;
    }

    // ------------------------------------------------------------------ the pattern

    /**
     * The model over the folder {@code exports}: every file with its name, the name's date (or the file's
     * {@code extract_date} column) as the sequence. CSV: the columns named and typed (the select list and {@code
     * types}), matched by name in each file ({@code union_by_name}); every file of the folder ({@code glob}) must give
     * rows, and rows with at least one of the named columns, else the read stops with an error naming the file; so
     * does a name without a valid date. So a malformed file (no header, other column names, one line without a
     * header, a header alone) is never read with made-up columns ({@code column0}, ...) as a schema change nor
     * skipped (issue 36); a new column is read once the model names it ({@code tier}). Parquet: the files' own
     * columns, which their schema types.
     */
    private ModelSettings model(Format format, SequenceFrom from) {
        return model(format, from, false);
    }

    private ModelSettings model(Format format, SequenceFrom from, boolean tier) {
        Path exports = dir.resolve("exports");
        String glob = exports.toString().replace("'", "''") + "/customers_*." + extension(format);
        String source;
        if (format == Format.CSV) {
            String fileDate = "COALESCE(TRY_CAST(regexp_extract(file, 'customers_(\\d{4}-\\d{2}-\\d{2})\\.csv$', 1) "
                    + "AS DATE), error('file ' || file || ': no valid date (YYYY-MM-DD) in its name'))";
            String read = "read_csv('" + glob + "', filename = true, union_by_name = true, header = true, types = "
                    + "{'id': 'INTEGER', 'status': 'VARCHAR', 'updated_at': 'TIMESTAMP', 'extract_date': 'DATE'"
                    + (tier ? ", 'tier': 'VARCHAR'" : "") + "})";
            String guard = " WHERE CASE WHEN rows.filename IS NULL THEN error('file ' || file || ': no rows (one line "
                    + "without a header, or a header alone?)') WHEN id IS NULL AND status IS NULL AND updated_at IS "
                    + "NULL AND extract_date IS NULL THEN error('file ' || file || ': a row without id, status, "
                    + "updated_at and extract_date (no header, other column names, or rows of another width?)') ELSE "
                    + "TRUE END";
            source = "SELECT id, status, updated_at, " + (from == SequenceFrom.FILE_NAME ? fileDate + " AS file_date"
                    : "extract_date") + (tier ? ", tier" : "") + " FROM glob('" + glob + "') AS files LEFT JOIN "
                    + read + " AS rows ON rows.filename = files.file" + guard;
        } else {
            String fileDate = "COALESCE(TRY_CAST(regexp_extract(filename, 'customers_(\\d{4}-\\d{2}-\\d{2})"
                    + "\\.parquet$', 1) AS DATE), error('file ' || filename || ': no valid date (YYYY-MM-DD) in "
                    + "its name'))";
            String read = "read_parquet('" + glob + "', filename = true, union_by_name = true)";
            source = from == SequenceFrom.FILE_NAME
                    ? "SELECT * EXCLUDE (filename, extract_date), " + fileDate + " AS file_date FROM " + read
                    : "SELECT * EXCLUDE (filename) FROM " + read;
        }
        return ModelSettings.builder("customers").target("snap_customers").source(source).uniqueKey("id")
                .updatedAt("updated_at").sequenceBy(from == SequenceFrom.FILE_NAME ? "file_date" : "extract_date")
                .build();
    }

    private static String extension(Format format) {
        return format == Format.CSV ? "csv" : "parquet";
    }

    private Path file(Format format, int d) {
        return dir.resolve("exports").resolve("customers_" + date(d) + "." + extension(format));
    }

    /** Writes day d's file (rows as given, with a {@code tier} column when {@code tier}). */
    private void deliver(Format format, int d, List<Row> rows, boolean tier) throws Exception {
        Files.createDirectories(dir.resolve("exports"));
        StringBuilder csv = new StringBuilder("id,status,updated_at,extract_date" + (tier ? ",tier" : "") + "\n");
        for (Row r : rows) {
            csv.append(r.id()).append(',').append(r.status()).append(',').append(r.updatedAt()).append(',')
                    .append(date(d)).append(tier ? ",T" + r.id() : "").append('\n');
        }
        if (format == Format.CSV) {
            Files.writeString(file(format, d), csv.toString(), StandardCharsets.UTF_8);
            return;
        }
        Path text = dir.resolve("day.csv");
        Files.writeString(text, csv.toString(), StandardCharsets.UTF_8);
        try (Connection c = DriverDataSource.of("jdbc:duckdb:").getConnection(); Statement s = c.createStatement()) {
            s.execute("COPY (SELECT * FROM read_csv('" + text + "', header = true, types = {'id': 'INTEGER', "
                    + "'updated_at': 'TIMESTAMP', 'extract_date': 'DATE'})) TO '" + file(format, d)
                    + "' (FORMAT parquet)");
        }
        Files.delete(text);
    }

    private void deliver(Format format, int d) throws Exception {
        deliver(format, d, day(d), false);
    }

    /** A DuckDB file in the test's folder, a new one per name. */
    private DataSource database(String name) {
        return DriverDataSource.of("jdbc:duckdb:" + dir.resolve(name + ".duckdb"));
    }

    private static RunResult run(DataSource ds, ModelSettings m, List<SnapshotEvent> events) {
        return IterativeSnapshot.builder().dataSource(ds).listener(events::add).build().run(m);
    }

    /** The history in a comparable form: key, status, validity, sequences opened and closed. */
    private static List<String> history(DataSource ds, String... extra) throws SQLException {
        List<String> out = new ArrayList<>();
        String columns = "id, status, dbt_valid_from, dbt_valid_to, dbt_opened_seq, dbt_closed_seq"
                + (extra.length == 0 ? "" : ", " + String.join(", ", extra));
        try (Connection c = ds.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT " + columns + " FROM snap_customers ORDER BY ALL")) {
            int n = rs.getMetaData().getColumnCount();
            while (rs.next()) {
                List<String> row = new ArrayList<>();
                for (int i = 1; i <= n; i++) {
                    row.add(String.valueOf(rs.getObject(i)));
                }
                out.add(String.join(" | ", row));
            }
        }
        return out;
    }

    /** The history one run over the folder as it is now writes in a fresh database. */
    private List<String> cleanHistory(Format format, SequenceFrom from, String... extra) throws SQLException {
        DataSource clean = database("clean");
        run(clean, model(format, from), new ArrayList<>());
        return history(clean, extra);
    }

    private static long ledgerEntries(DataSource ds) throws SQLException {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM itersnap_metadata.itersnap_ledger")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    // ------------------------------------------------------------------ scenarios

    @ParameterizedTest(name = "{0}, sequence from the {1}")
    @MethodSource("cases")
    void aLateFileIsReplayedIntoTheHistoryOfTheFilesInOrder(Format format, SequenceFrom from) throws Exception {
        DataSource ds = database("warehouse");
        ModelSettings m = model(format, from);
        for (int d : new int[] {1, 2, 4}) {
            deliver(format, d);
        }
        assertThat(run(ds, m, new ArrayList<>()).batchesApplied()).isEqualTo(3);

        deliver(format, 3); // dropped into the folder after day 4 was applied
        List<SnapshotEvent> events = new ArrayList<>();
        RunResult late = run(ds, m, events);

        assertThat(late.lateBatchFound()).isTrue();
        assertThat(events).filteredOn(SnapshotEvent.OutOfOrder.class::isInstance).hasSize(1);
        assertThat(history(ds)).isEqualTo(cleanHistory(format, from)).hasSizeGreaterThan(4);
        assertThat(run(ds, m, new ArrayList<>()).batchesApplied()).as("nothing left to do").isZero();
    }

    @ParameterizedTest(name = "{0}, sequence from the {1}")
    @MethodSource("cases")
    void aReplacedFileIsARestatementAndReplayed(Format format, SequenceFrom from) throws Exception {
        DataSource ds = database("warehouse");
        ModelSettings m = model(format, from);
        for (int d = 1; d <= 3; d++) {
            deliver(format, d);
        }
        run(ds, m, new ArrayList<>());

        List<Row> corrected = new ArrayList<>(day(3));
        corrected.set(0, new Row(1, "Corrected", "2024-01-03 10:00:00"));
        corrected.add(new Row(5, "Active", "2024-01-03 10:00:00"));
        Files.delete(file(format, 3));
        deliver(format, 3, corrected, false); // the newest file sent again, corrected
        List<SnapshotEvent> events = new ArrayList<>();
        run(ds, m, events);

        assertThat(events).filteredOn(SnapshotEvent.BatchRestated.class::isInstance).singleElement()
                .satisfies(e -> assertThat(((SnapshotEvent.BatchRestated) e).newRows()).isEqualTo(5));
        assertThat(history(ds)).isEqualTo(cleanHistory(format, from)).anyMatch(r -> r.contains("Corrected"));
    }

    @ParameterizedTest(name = "{0}, sequence from the {1}")
    @MethodSource("cases")
    void aRemovedFileAgesOutAndIsReproducedWhenALateFileNeedsIt(Format format, SequenceFrom from) throws Exception {
        DataSource ds = database("warehouse");
        ModelSettings m = model(format, from);
        for (int d : new int[] {1, 2, 4}) {
            deliver(format, d);
        }
        run(ds, m, new ArrayList<>());
        List<String> before = history(ds);

        Files.delete(file(format, 1)); // the folder keeps the newest files only
        assertThat(run(ds, m, new ArrayList<>()).batchesApplied()).isZero();
        assertThat(history(ds)).as("a file that left the folder changes nothing").isEqualTo(before);

        Files.delete(file(format, 4)); // day 4 leaves the folder too, and day 3 arrives late: day 4 is replayed
        deliver(format, 3);
        RunResult late = run(ds, m, new ArrayList<>());
        assertThat(late.lateBatchFound()).isTrue();

        // what one run over days 1..4 in order writes, day 4 reproduced from the history
        deliver(format, 1);
        deliver(format, 4);
        assertThat(history(ds)).isEqualTo(cleanHistory(format, from));
    }

    @ParameterizedTest(name = "{0}, sequence from the {1}")
    @MethodSource("cases")
    void aFileWithANewColumnAddsItToTheHistory(Format format, SequenceFrom from) throws Exception {
        DataSource ds = database("warehouse");
        ModelSettings m = model(format, from);
        deliver(format, 1);
        deliver(format, 2);
        run(ds, m, new ArrayList<>());

        deliver(format, 3, day(3), true);
        List<SnapshotEvent> events = new ArrayList<>();
        if (format == Format.CSV) {
            // the files' columns are the model's: the new one is read once the model names it, a change of its
            // logic the run is told to accept (the files without it give NULL)
            IterativeSnapshot.builder().dataSource(ds).listener(events::add).build()
                    .run(model(format, from, true), LogicChange.ACCEPT);
        } else {
            run(ds, m, events);
        }

        assertThat(events).filteredOn(SnapshotEvent.SchemaChange.class::isInstance).singleElement()
                .satisfies(e -> assertThat(((SnapshotEvent.SchemaChange) e).added()).containsExactly("tier"));
        // day 3 is the column's introduction batch (docs/semantics.md, "Schema evolution"): the versions current in it
        // take its value in place, no version opens for its appearance alone; older versions keep NULL
        assertThat(history(ds, "tier")).containsExactly(
                "1 | Active | 2023-12-31 09:00:00.0 | 2024-01-02 09:00:00.0 | 2024-01-01 | 2024-01-02 | null",
                "1 | S2 | 2024-01-02 09:00:00.0 | null | 2024-01-02 | null | T1",
                "2 | S1 | 2024-01-01 09:00:00.0 | null | 2024-01-01 | null | T2",
                "3 | Active | 2023-12-31 09:00:00.0 | 2024-01-03 09:00:00.0 | 2024-01-01 | 2024-01-03 | T3",
                "3 | S3 | 2024-01-03 09:00:00.0 | null | 2024-01-03 | null | T3",
                "4 | Active | 2023-12-31 09:00:00.0 | 2024-01-02 09:00:00.0 | 2024-01-01 | 2024-01-02 | null",
                "4 | S2 | 2024-01-02 09:00:00.0 | null | 2024-01-02 | null | T4");
    }

    @ParameterizedTest(name = "{0}, sequence from the {1}")
    @MethodSource("cases")
    void aMalformedFileStopsTheRunNamingTheFileAndNothingIsWritten(Format format, SequenceFrom from)
            throws Exception {
        DataSource ds = database("warehouse");
        ModelSettings m = model(format, from);
        deliver(format, 1);
        deliver(format, 2);
        run(ds, m, new ArrayList<>());
        List<String> before = history(ds);
        long ledger = ledgerEntries(ds);

        deliver(format, 3);
        Path broken = file(format, 4);
        List<Path> brokenFiles = new ArrayList<>();
        if (format == Format.CSV) {
            String row = "1,Gold,2024-01-04 09:00:00,2024-01-04\n";
            Path badName = dir.resolve("exports").resolve("customers_2024-01-32.csv");
            for (Object[] bad : new Object[][] {
                    {broken, "id,status,updated_at,extract_date\n" + row + "two,Gold,2024-01-04 09:00:00,2024-01-04\n"},
                    // issue 36: without its header DuckDB read the file with made-up columns (column0 .. column3),
                    // applied as a schema change with exit 0; with other column names too
                    {broken, row + "2,Gold,2024-01-04 09:00:00,2024-01-04\n"},
                    {broken, "key,state,changed,extracted\n" + row},
                    {broken, "id,status,updated_at,extract_date\n" + row + "2,Gold\n"},
                    // one line without its header was taken for the header: a file of no rows, skipped with exit 0
                    {broken, row},
                    {broken, "id,status,updated_at,extract_date\n"},
                    // and a bad date in a file's name (the sequence's) was reported without the file
                    {from == SequenceFrom.FILE_NAME ? badName : broken, "id,status,updated_at,extract_date\n"
                            + row.replace("2024-01-04\n", "2024-01-32\n")}}) {
                Files.writeString((Path) bad[0], (String) bad[1], StandardCharsets.UTF_8);
                brokenFiles.add((Path) bad[0]);
                assertStopsNamingTheFile(ds, m, (Path) bad[0], before, ledger);
                Files.delete((Path) bad[0]);
            }
        } else {
            Files.write(broken, "not a parquet file".getBytes(StandardCharsets.UTF_8));
            assertStopsNamingTheFile(ds, m, broken, before, ledger);
            Files.delete(broken);
        }
        assertThat(brokenFiles).hasSize(format == Format.CSV ? 7 : 0);

        deliver(format, 4);
        assertThat(run(ds, m, new ArrayList<>()).batchesApplied()).as("once the file is fixed").isEqualTo(2);
        assertThat(history(ds)).isEqualTo(cleanHistory(format, from));
    }

    /** A run over the folder with {@code broken} in it fails naming it, and writes nothing. */
    private static void assertStopsNamingTheFile(DataSource ds, ModelSettings m, Path broken, List<String> before,
                                                 long ledger) throws SQLException {
        assertThatThrownBy(() -> run(ds, m, new ArrayList<>())).as(broken.toString())
                .isInstanceOfSatisfying(ItersnapException.class, e -> {
                    // a file DuckDB cannot open fails the source's description, a bad value or row the reading
                    assertThat(e.code()).isIn(ErrorCode.INVALID_SOURCE, ErrorCode.DATABASE_ERROR);
                    assertThat(e.getMessage()).as("names the file").contains(broken.getFileName().toString())
                            .doesNotContain("column0");
                });
        assertThat(history(ds)).as("nothing written").isEqualTo(before);
        assertThat(ledgerEntries(ds)).as("no batch recorded, not even the good file of day 3").isEqualTo(ledger);
    }
}
