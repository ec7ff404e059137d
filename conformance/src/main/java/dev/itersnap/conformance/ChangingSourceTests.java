package dev.itersnap.conformance;

import dev.itersnap.conformance.SnapshotFixture.Essence;
import dev.itersnap.core.HardDeletes;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.RunResult;
import dev.itersnap.core.SnapshotEvent;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

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
import java.util.stream.Stream;

import static dev.itersnap.conformance.SnapshotFixture.date;
import static dev.itersnap.conformance.SnapshotFixture.ts;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A source that changes while a run reads it (docs/semantics.md, "Restated batches" and "Reading the source"): a
 * loader that replaces a file by deleting its rows and inserting them again, in two transactions, between two
 * statements of one run. The changes are made by a {@link FaultInjectingDataSource#hook} on the engine's own thread,
 * on another connection that commits each, right before or after a chosen statement of the run, so that every case is
 * reproducible. Whatever the run saw:
 * <ul>
 *   <li>the ledger records what the run applied: a batch's {@code source_rows} are the rows the run staged of it
 *   (the file as it was at the staging statement), never rows it did not apply;</li>
 *   <li>the run after the loader finished finds every difference (the batch is restated, found by the comparison of
 *   applied batches: the default {@code restatement_lookback} of 1 covers the newest batch), replays it, and the
 *   history, the ledger's rows and the error log equal those of one clean run over the source as it is then: no row
 *   lost;</li>
 *   <li>a third run finds nothing to do.</li>
 * </ul>
 */
public abstract class ChangingSourceTests extends ConformanceTestBase {
    private static final LocalDate D1 = date("2024-01-01");

    /** What the loader makes of the file it replaces. */
    public enum Change {
        /** The same rows again (a file loaded twice). */
        UNCHANGED,
        /** The same rows and one of a new key. */
        ONE_ROW_MORE,
        /** One row's values corrected. */
        ONE_ROW_CHANGED
    }

    /** When, within the run, the loader deletes the file's rows and when it inserts them again. */
    public enum Race {
        /** Deleted right after the statement that read what the run decides by (discovery, or the comparison of
         *  applied batches), inserted again once the run ended: the run stages none of the file's rows. */
        EMPTY_WHEN_STAGED,
        /** Deleted after that statement, inserted again right before staging: the run stages the new file. */
        RELOADED_BEFORE_STAGING,
        /** Deleted and inserted again right after staging: the run applies the file as it was. */
        RELOADED_AFTER_STAGING
    }

    /** Which file the loader replaces. */
    public enum Target {
        /** Day 3, the newest file, not applied yet (days 1 and 2 are): the run applies it. */
        NEW_FILE,
        /** Day 4, applied; day 3 is delivered late, so the run replays day 4 (key by key where it can). */
        REPLAYED_FILE
    }

    static Stream<Arguments> cases() {
        List<Arguments> out = new ArrayList<>();
        for (Target t : Target.values()) {
            for (Race r : Race.values()) {
                for (Change c : Change.values()) {
                    out.add(Arguments.of(t, r, c));
                }
            }
        }
        return out.stream();
    }

    private static LocalDate day(int d) {
        return D1.plusDays(d - 1);
    }

    /** Daily full picture d: keys 1..6, key k changing on the days e with (k + e) % 3 == 0, key 6 absent on day 2. */
    private static List<Object[]> file(int d) {
        List<Object[]> rows = new ArrayList<>();
        for (int id = 1; id <= 6; id++) {
            if (id == 6 && d == 2) {
                continue;
            }
            int changed = 0;
            for (int e = 1; e <= d; e++) {
                if ((id + e) % 3 == 0) {
                    changed = e;
                }
            }
            rows.add(new Object[] {id, changed == 0 ? "Active" : "S" + changed, "A",
                    changed == 0 ? ts("2023-12-31 09:00") : ts(day(changed) + " 09:00"), day(d)});
        }
        return rows;
    }

    /** File d as the loader inserts it again. */
    private static List<Object[]> reloaded(int d, Change change) {
        List<Object[]> rows = new ArrayList<>(file(d));
        switch (change) {
            case UNCHANGED -> { }
            case ONE_ROW_MORE -> rows.add(new Object[] {7, "New", "B", ts(day(d) + " 08:00"), day(d)});
            case ONE_ROW_CHANGED -> rows.set(0, new Object[] {rows.get(0)[0], "Corrected", "C",
                    ts(day(d) + " 10:00"), day(d)});
        }
        return rows;
    }

    private static ModelSettings build(RawTable raw) {
        return model(raw).hardDeletes(HardDeletes.NEW_RECORD).build();
    }

    /**
     * The loader replaces a file between two statements of a run; the run records what it applied, and the run after
     * the loader finished ends in the history, ledger rows and error log of one clean run over the final source.
     */
    @ParameterizedTest(name = "{0}, {1}, reloaded {2}")
    @MethodSource("cases")
    void aFileReplacedWhileTheRunReadsTheSourceLosesNoRow(Target target, Race loaderRace, Change change) {
        // what the run sees: on a database that reads one snapshot per transaction, staging reads the snapshot its
        // transaction took before the loader inserted the file again, so it sees the file gone
        Race race = snapshotPerTransaction() && loaderRace == Race.RELOADED_BEFORE_STAGING ? Race.EMPTY_WHEN_STAGED
                : loaderRace;
        RawTable raw = customers(fixture);
        ModelSettings m = build(raw);
        int replaced = target == Target.NEW_FILE ? 3 : 4;
        int[] before = target == Target.NEW_FILE ? new int[] {1, 2} : new int[] {1, 2, 4};
        for (int d : before) {
            raw.insertAll(file(d));
        }
        fixture.run(m);
        raw.insertAll(file(3)); // the new file, or (days 1, 2 and 4 applied) the late one

        FaultInjectingDataSource source = new FaultInjectingDataSource(fixture.dataSource());
        Loader loader = new Loader(raw, target, loaderRace, replaced, reloaded(replaced, change));
        source.hook(loader);
        RunResult during = fixture.engine(source.dataSource(), null).run(m);
        source.hook(null);
        if (loaderRace == Race.EMPTY_WHEN_STAGED) {
            loader.insertAgain(); // the loader's second transaction, after the run
        }

        assertThat(loader.deleted).as("the loader deleted the file during the run").isTrue();
        assertThat(loader.inserted).as("the loader inserted the file again during the run").isTrue();
        assertThat(during.lateBatchFound()).isEqualTo(target == Target.REPLAYED_FILE);
        SnapshotFixture.Counts entry = fixture.ledgerEntry(MODEL, day(replaced).toString());
        if (target == Target.NEW_FILE) {
            // the rows the run staged of the new file; none staged: not applied, no entry
            if (race == Race.EMPTY_WHEN_STAGED) {
                assertThat(entry).as("a file gone before it was staged is not applied").isNull();
            } else {
                assertThat(entry.sourceRows()).as("rows recorded for the new file").isEqualTo(
                        race == Race.RELOADED_BEFORE_STAGING ? reloaded(replaced, change).size() : file(3).size());
            }
        } else {
            // a key-scoped replay records a replayed file's rows as the comparison read them (the file as applied
            // before); its content hash is 0 (restated by the next comparison) unless the rows it staged are the
            // file's rows of the keys it recomputed, as compared
            assertThat(entry.sourceRows()).as("rows recorded for the replayed file").isEqualTo(file(4).size());
        }

        RecordingListener events = new RecordingListener();
        RunResult after = fixture.engine(events).run(m);

        Clean clean = clean(replaced, change);
        assertThat(fixture.essence(TARGET)).as("history after the run that follows the loader")
                .containsExactlyInAnyOrderElementsOf(clean.history);
        assertThat(rowsBySequence(fixture.ledger(MODEL))).as("ledger rows after the run that follows the loader")
                .isEqualTo(rowsBySequence(clean.ledger)).isEqualTo(sourceRows(raw));
        assertThat(fixture.errors(MODEL).stream().map(SnapshotFixture.ErrorEntry::withoutRun).toList())
                .containsExactlyInAnyOrderElementsOf(clean.errors);
        assertThat(fixture.timelineProblems(TARGET, "id")).isEmpty();
        // whether the history the run wrote holds the replaced file as the source holds it now
        boolean appliedAsNow = change == Change.UNCHANGED ? race != Race.EMPTY_WHEN_STAGED
                : race == Race.RELOADED_BEFORE_STAGING && target == Target.NEW_FILE;
        if (appliedAsNow) {
            assertThat(after.batchesApplied()).as("nothing left to apply").isZero();
            assertThat(events.of(SnapshotEvent.BatchRestated.class)).isEmpty();
        } else {
            assertThat(after.batchesApplied()).as("the next run applies the replaced file again").isPositive();
            if (target == Target.REPLAYED_FILE || race == Race.RELOADED_AFTER_STAGING) {
                assertThat(events.of(SnapshotEvent.BatchRestated.class)).singleElement()
                        .satisfies(e -> assertThat(e.sequence()).isEqualTo(day(replaced)));
            }
        }

        RunResult third = fixture.run(m);
        assertThat(third.batchesApplied()).isZero();
        assertThat(fixture.essence(TARGET)).containsExactlyInAnyOrderElementsOf(clean.history);
    }

    /**
     * Deletes the replaced file right after the statement that read what the run decides by (discovery for a new file,
     * the comparison of the applied batches for a replayed one), and inserts it again at the point {@link Race} names.
     * Runs once per run.
     */
    private static final class Loader implements FaultInjectingDataSource.StatementHook {
        private final RawTable raw;
        private final Target target;
        private final Race race;
        private final int day;
        private final List<Object[]> again;
        boolean deleted;
        boolean inserted;

        Loader(RawTable raw, Target target, Race race, int day, List<Object[]> again) {
            this.raw = raw;
            this.target = target;
            this.race = race;
            this.day = day;
            this.again = again;
        }

        @Override
        public void on(String sql, boolean after) {
            String s = sql == null ? "" : sql.toLowerCase(Locale.ROOT);
            boolean readsSource = s.contains(raw.name().toLowerCase(Locale.ROOT));
            boolean stages = readsSource && s.startsWith("insert into") && s.contains("itersnap_stage_");
            // the metadata read names the source too (it describes it, no row read): not what the run decides by
            boolean decides = readsSource && !s.startsWith("insert") && !s.contains("itersnap_ledger")
                    && (target == Target.NEW_FILE
                    ? s.contains("distinct") : s.contains("count(*)") && !s.contains("itersnap_stage_"));
            if (!deleted && after && (race == Race.RELOADED_AFTER_STAGING ? stages : decides)) {
                raw.deleteWhere("file_date", day(day));
                deleted = true;
                if (race == Race.RELOADED_AFTER_STAGING) {
                    insertAgain();
                }
                return;
            }
            if (deleted && !inserted && stages && !after && race == Race.RELOADED_BEFORE_STAGING) {
                insertAgain();
            }
        }

        /** Inserts the file again (for {@link Race#EMPTY_WHEN_STAGED} called by the test once the run ended). */
        void insertAgain() {
            raw.insertAll(again);
            inserted = true;
        }
    }

    /** The history, ledger and error log of one clean run over days 1..4 with {@code day} reloaded. */
    private record Clean(List<Essence> history, List<SnapshotFixture.LedgerEntry> ledger, List<String> errors) {
    }

    private Clean clean(int day, Change change) {
        SnapshotFixture f = newFixture();
        RawTable raw = customers(f);
        int last = day == 3 ? 3 : 4;
        for (int d = 1; d <= last; d++) {
            raw.insertAll(d == day ? reloaded(d, change) : file(d));
        }
        f.run(build(raw));
        Clean c = new Clean(f.essence(TARGET), f.ledger(MODEL),
                f.errors(MODEL).stream().map(SnapshotFixture.ErrorEntry::withoutRun).toList());
        release(f);
        return c;
    }

    private static Map<String, Long> rowsBySequence(List<SnapshotFixture.LedgerEntry> ledger) {
        Map<String, Long> out = new TreeMap<>();
        ledger.forEach(e -> out.put(e.sequence(), e.sourceRows()));
        return out;
    }

    private static Map<String, Long> sourceRows(RawTable raw) {
        Map<String, Long> out = new TreeMap<>();
        raw.fixture().query("SELECT file_date AS d, COUNT(*) AS n FROM " + raw.name() + " GROUP BY file_date")
                .forEach(r -> out.put(String.valueOf(r.get("d")), ((Number) r.get("n")).longValue()));
        return out;
    }

    /** Whether the database's connections hold transactions whose isolation can be measured (not Delta's). */
    protected boolean readsInTransactions() {
        return true;
    }

    /**
     * Whether every transaction reads one snapshot, taken at its first statement, whatever isolation level the
     * connection asks for (DuckDB: snapshot isolation only). Then two reads of one transaction see the same rows at
     * READ COMMITTED too, and a file the loader inserts again after the run's transaction began is not staged by it:
     * the run behaves as when the file is still gone ({@link Race#EMPTY_WHEN_STAGED}). Default: no.
     */
    protected boolean snapshotPerTransaction() {
        return false;
    }

    /**
     * What two reads of one transaction see when a loader replaces a file between them (docs/semantics.md, "Reading
     * the source"): at READ COMMITTED each statement reads the rows committed when it starts (the second read sees
     * the file gone); at REPEATABLE READ both read the snapshot the transaction took at its first read.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(ints = {Connection.TRANSACTION_READ_COMMITTED, Connection.TRANSACTION_REPEATABLE_READ})
    void twoReadsOfOneTransactionWhileALoaderReplacesAFile(int isolation) throws SQLException {
        assumeTrue(readsInTransactions(),
                "the database has no transactions to measure");
        DataSource ds = database().newDatabase("rr");
        try (Connection run = ds.getConnection(); Connection loader = ds.getConnection();
             Statement r = run.createStatement(); Statement l = loader.createStatement()) {
            l.execute("CREATE TABLE raw_rows (id INT, file_date DATE)");
            l.execute("INSERT INTO raw_rows VALUES (1, DATE '2024-01-03'), (2, DATE '2024-01-03')");
            run.setAutoCommit(false);
            run.setTransactionIsolation(isolation);
            long first = count(r);
            l.execute("DELETE FROM raw_rows WHERE file_date = DATE '2024-01-03'"); // commits: autocommit
            long second = count(r);
            l.execute("INSERT INTO raw_rows VALUES (1, DATE '2024-01-03'), (2, DATE '2024-01-03'), "
                    + "(3, DATE '2024-01-03')");
            long third = count(r);
            run.commit();
            long after = count(r);
            assertThat(first).isEqualTo(2);
            if (isolation == Connection.TRANSACTION_READ_COMMITTED && !snapshotPerTransaction()) {
                assertThat(new long[] {second, third}).containsExactly(0, 3);
            } else {
                assertThat(new long[] {second, third}).containsExactly(2, 2);
            }
            assertThat(after).isEqualTo(3);
            run.rollback();
        } finally {
            database().discard(ds);
        }
    }

    private static long count(Statement s) throws SQLException {
        try (ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM raw_rows")) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
