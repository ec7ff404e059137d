package dev.itersnap.conformance;

import dev.itersnap.core.HardDeletes;
import dev.itersnap.core.ModelSettings;
import org.junit.jupiter.api.Test;

import java.time.LocalDate;
import java.util.List;
import java.util.Locale;

import static dev.itersnap.conformance.SnapshotFixture.date;
import static dev.itersnap.conformance.SnapshotFixture.ts;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * How many statements, and how many writes (INSERT, UPDATE, DELETE, MERGE: each at most one commit where every
 * statement commits on its own, as on Delta Lake), a run costs: the same whatever the number of batches a run applies
 * and however deep in the history a late batch lands (up to the chunking of the ledger's entries). Measured through a
 * counting data source on full daily files with deletions by absence, printed, and held to a budget so that a change
 * that adds statements per batch, or per replayed batch, shows up here.
 * {@code -Ditersnap.printStatements=true} also prints every statement of each measured run.
 */
public abstract class StatementCountTests extends ConformanceTestBase {

    /**
     * Statements of one run, all connections (the model lock's included); writes among them; and catalog reads
     * ({@code DatabaseMetaData} calls that return rows: round trips too, not statements).
     */
    public record Count(int statements, int writes, int catalog) {
        Count minus(Count o) {
            return new Count(statements - o.statements, writes - o.writes, catalog - o.catalog);
        }

        Count times(int k) {
            return new Count(statements * k, writes * k, catalog * k);
        }

        @Override
        public String toString() {
            return statements + " statements (" + writes + " writes) + " + catalog + " catalog reads";
        }
    }

    /**
     * Most catalog reads an in-order run, or one with nothing new, may make: the history's owner mark and the
     * scratch tables' shape (each a table's comment), and the pending table looked up where DML is not transactional.
     * The history and its archive are described without a catalog read once the model has run.
     */
    protected int catalogReadsPerRun() {
        return 2;
    }

    /**
     * Most statements an in-order run of one batch may cost, the model lock's, the ownership checks' reads, the
     * fingerprints of the batch applied and of the batches compared, and the scratch tables emptied (one statement or
     * one per table; five CREATE OR REPLACE on Delta) included. Was 52 before the metadata tables were checked once
     * and the scratch tables reused (H2: 48 then, 35 later, 32 since what a run reads of its metadata first is one
     * statement, 30 since the ledger's probe counts the compared batches' versions and the history, archive and
     * pending table are described together, 26 since the history's description also says whether it has a row, the
     * batches are listed with their deletion times in one statement, the versions a run closes and opens are written
     * by one MERGE and the edited-history check is counted by the counts query). Each database's test pins its own
     * count, so that a change adding one fails.
     */
    protected int budgetPerRun() {
        return 40;
    }

    /**
     * Most statements a run that finds nothing new may cost: the metadata read, the source's sequences and the
     * fingerprint comparison of the sweep, the ownership checks' reads, and one write (its row in the run log), no lock.
     * Each database's test pins its own count.
     */
    protected int budgetNothingNew() {
        return 12;
    }

    /**
     * Statements a run of {@code batches} batches may add to the run of one: the ledger entries and the run's list of
     * batches are written a few rows per statement (18 and 60), so that no statement carries thousands of values.
     */
    protected static int chunking(int batches) {
        return (batches - 1) / 18 + (batches - 1) / 60;
    }

    /**
     * Statements keep_superseded adds to a repair (issue 41): the history described and the companion table found (or
     * created, or described), and three INSERTs: the versions replaced, what the repair computes again, the ledger
     * entries it replaces (one per 200). An in-order run costs none.
     */
    protected static final int KEEP_SUPERSEDED = 6;

    private static final LocalDate D1 = date("2024-01-01");

    private static LocalDate day(int d) {
        return D1.plusDays(d - 1);
    }

    /**
     * A full daily file: keys 1..3, key {@code d % 3 + 1} changes on day d (and keeps its value after), key 4 present
     * on odd days only (absent: deleted; back: a new version).
     */
    private static void file(RawTable raw, int d) {
        List<Object[]> rows = new java.util.ArrayList<>();
        for (int id = 1; id <= 4; id++) {
            if (id == 4 && d % 2 == 0) {
                continue;
            }
            int changed = 0;
            for (int e = 1; e <= d; e++) {
                if (id == e % 3 + 1) {
                    changed = e;
                }
            }
            rows.add(new Object[] {id, changed == 0 ? "Active" : "S" + changed, "A",
                    changed == 0 ? ts("2023-12-31 09:00") : ts(day(changed) + " 09:00"), day(d)});
        }
        raw.insertAll(rows); // one statement per file: on Delta each is a commit
    }

    /** The larger first load compared with a first load of one batch. */
    protected int manyBatches() {
        return 30;
    }

    /** The largest first load compared with a first load of one batch. */
    protected int mostBatches() {
        return 100;
    }

    /** How deep the deep late batch lands (the shallow one lands 1 deep). */
    protected int deepLate() {
        return 20;
    }

    private static Count measure(SnapshotFixture f, ModelSettings m) {
        FaultInjectingDataSource counting = new FaultInjectingDataSource(f.dataSource());
        counting.failAt(0);
        f.engine(counting.dataSource(), null).run(m);
        List<String> sql = counting.statements().stream().filter(s -> !s.equals("COMMIT")).toList();
        if (Boolean.getBoolean("itersnap.printStatements")) {
            counting.timedStatements().forEach(s -> System.out.println("  " + s.replaceAll("\\s+", " ")));
        }
        int writes = (int) sql.stream().filter(StatementCountTests::isWrite).count();
        return new Count(sql.size(), writes, counting.count(FaultInjectingDataSource.Call.CATALOG));
    }

    private static boolean isWrite(String sql) {
        String s = sql.stripLeading().toUpperCase(Locale.ROOT);
        return s.startsWith("INSERT") || s.startsWith("UPDATE") || s.startsWith("DELETE") || s.startsWith("MERGE");
    }

    /** Delivers files 1..{@code batches} at once and measures the run that applies them. */
    private Count firstLoad(int batches) {
        SnapshotFixture f = newFixture();
        RawTable raw = customers(f);
        ModelSettings m = model(raw).hardDeletes(HardDeletes.INVALIDATE).build();
        for (int d = 1; d <= batches; d++) {
            file(raw, d);
        }
        Count c = measure(f, m);
        release(f);
        return c;
    }

    /**
     * Applies files 1..{@code batches} except {@code late} in one run, then delivers {@code late} and measures the
     * run that finds it ({@code batches - late} batches deep).
     */
    private Count lateRun(int batches, int late) {
        SnapshotFixture f = newFixture();
        RawTable raw = customers(f);
        ModelSettings m = model(raw).hardDeletes(HardDeletes.INVALIDATE).build();
        for (int d = 1; d <= batches; d++) {
            if (d != late) {
                file(raw, d);
            }
        }
        f.run(m);
        file(raw, late);
        Count c = measure(f, m);
        release(f);
        return c;
    }

    /**
     * Applies file 1, then measures the run that applies file 2 (the everyday run) and the run after it, which finds
     * nothing new: it decides so from reads and writes its row in the run log, complete (no lock, whose lease would be
     * a write where the lock is a table; no row while it runs; nothing else).
     */
    private Count[] inOrderRunThenNothingNew() {
        SnapshotFixture f = newFixture();
        RawTable raw = customers(f);
        ModelSettings m = model(raw).hardDeletes(HardDeletes.INVALIDATE).build();
        file(raw, 1);
        f.run(m);
        file(raw, 2);
        Count c = measure(f, m);
        Count idle = measure(f, m);
        assertThat(f.runs(MODEL)).as("the run log holds every run, complete").hasSize(3).allSatisfy(r -> {
            assertThat(r.status()).isEqualTo("success");
            assertThat(r.finishedAt()).isNotNull();
        });
        release(f);
        return new Count[] {c, idle};
    }

    @Test
    void statementsPerRunStayTheSameWhateverTheNumberOfBatchesAndHowDeepALateOneIs() {
        Count[] runs = inOrderRunThenNothingNew();
        Count daily = runs[0];
        Count idle = runs[1];
        Count b1 = firstLoad(1);
        int many = manyBatches();
        int most = mostBatches();
        int deep = deepLate();
        Count b100 = firstLoad(most);
        Count b30 = many == most ? b100 : firstLoad(many); // a lean form may measure one size only
        Count l1 = lateRun(deep + 1, deep);
        Count l20 = lateRun(deep + 1, 1);
        System.out.printf("statements [%s]: an in-order run of one batch: %s; a first load of 1 / %d / %d batches: "
                        + "%s / %s / %s; a late batch 1 / %d deep: %s / %s; nothing new: %s%n",
                getClass().getSimpleName(), daily, many, most, b1, b30, b100, deep, l1, l20, idle);
        assertThat(idle.writes()).as("writes of a run with nothing new: its row in the run log").isEqualTo(1);
        assertThat(idle.statements()).as("statements of a run with nothing new").isLessThanOrEqualTo(
                budgetNothingNew());
        assertThat(daily.statements()).as("statements of an in-order run of one batch")
                .isLessThanOrEqualTo(budgetPerRun());
        assertThat(daily.catalog()).as("catalog reads of an in-order run of one batch")
                .isLessThanOrEqualTo(catalogReadsPerRun());
        assertThat(idle.catalog()).as("catalog reads of a run with nothing new")
                .isLessThanOrEqualTo(catalogReadsPerRun());
        // a first load of one batch closes nothing and has no row to archive (every row opens a version): the MERGE
        // that closes versions and the archive's INSERT, each skipped when the counts say it has nothing to write, are
        // the two statements more that more batches may cost besides the ledger's chunks
        assertThat(b30.statements()).as("statements of a run applying " + many + " batches vs 1")
                .isLessThanOrEqualTo(b1.statements() + 2 + chunking(many));
        assertThat(b100.statements()).as("statements of a run applying " + most + " batches vs 1")
                .isLessThanOrEqualTo(b1.statements() + 2 + chunking(most));
        assertThat(b100.writes()).as("writes of a run applying " + most + " batches vs 1")
                .isLessThanOrEqualTo(b1.writes() + 2 + chunking(most));
        assertThat(l20.statements()).as("statements of a run finding a batch " + deep + " deep vs 1 deep")
                .isLessThanOrEqualTo(l1.statements() + chunking(deep + 1));
        assertThat(l20.writes()).as("writes of a run finding a batch " + deep + " deep vs 1 deep")
                .isLessThanOrEqualTo(l1.writes() + chunking(deep + 1));
        // a late batch: the replayed batches' rows of the keys it changes staged, the ledger entries replaced, three
        // roll-back MERGEs (versions, reopenings, archive), and the replayed batches derived without the late one
        // (events, derive, counts, two clears): their counts change by the difference; and one read of the run log
        // for an adoption point the replay may not reach below (a run without a replay point skips it); and the check
        // that the replayed batches' rows staged for those keys are the ones compared (a source changing meanwhile);
        // and what keep_superseded costs a repair (KEEP_SUPERSEDED)
        assertThat(l1.statements()).as("statements to detect a late batch and roll back, beyond an in-order run")
                .isLessThanOrEqualTo(daily.statements() + 13 + KEEP_SUPERSEDED);
    }
}
