package dev.itersnap.conformance;

import dev.itersnap.core.HardDeletes;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.RunResult;
import dev.itersnap.core.Strategy;
import org.junit.jupiter.api.Test;

import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

import static dev.itersnap.conformance.SnapshotFixture.date;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Late delivery against in-order delivery, differentially: the same generated batches are delivered once in business
 * order and once shuffled into a few deliveries, so that runs find batches late, some deep in the history. Both
 * databases must end with the same history, the same ledger (every batch's counts, not only its presence) and the
 * same error log. This is what a key-scoped replay must keep: it recomputes only the keys a late batch changes, and
 * the counts of the batches it replays change only by what those keys do differently.
 */
public abstract class LateDeliveryTests extends ConformanceTestBase {
    private static final LocalDate DAY0 = date("2024-01-01");

    /** How many generated cases to run; a slow database may run fewer. */
    protected int cases() {
        return Integer.getInteger("itersnap.lateCases", 24);
    }

    /**
     * Whether the in-order delivery is applied in one run (every batch delivered, then one run applies them in
     * order) rather than one run per batch: the same history and ledger, fewer runs for a database where a run is
     * slow.
     */
    protected boolean appliesInOrderInOneRun() {
        return false;
    }

    /** One generated batch: its date and rows (id, status, tier, op, updated_at). */
    private record Batch(LocalDate day, List<Object[]> rows) {
    }

    @Test
    void lateDeliveryEndsWithTheHistoryLedgerAndErrorLogOfInOrderDelivery() {
        long seed = Long.getLong("itersnap.seed", 20261201L);
        for (int c = 0; c < cases(); c++) {
            Random r = new Random(seed + c);
            HardDeletes deletes = HardDeletes.values()[r.nextInt(HardDeletes.values().length)];
            Strategy strategy = r.nextInt(3) == 0 ? Strategy.TIMESTAMP : Strategy.CHECK;
            boolean explicitDeletes = r.nextBoolean();
            List<Batch> batches = generate(r, 5 + r.nextInt(6), 3 + r.nextInt(5), explicitDeletes);
            List<List<Batch>> deliveries = shuffle(r, batches);
            String where = "case " + c + " (seed " + (seed + c) + ", " + deletes + ", " + strategy
                    + (explicitDeletes ? ", delete_when" : "") + ", deliveries " + describe(deliveries) + ")";

            SnapshotFixture inOrder = newFixture();
            RawTable a = raw(inOrder);
            ModelSettings m = model(a, deletes, strategy, explicitDeletes);
            for (Batch b : batches) {
                a.insertAll(b.rows());
                if (!appliesInOrderInOneRun()) {
                    inOrder.run(m);
                }
            }
            if (appliesInOrderInOneRun()) {
                inOrder.run(m);
            }
            SnapshotFixture late = newFixture();
            RawTable l = raw(late);
            boolean found = false;
            for (List<Batch> delivery : deliveries) {
                for (Batch b : delivery) {
                    l.insertAll(b.rows());
                }
                RunResult result = late.run(m);
                found |= result.lateBatchFound();
            }
            assertThat(late.essence(m.target().toString())).as(where + ": history")
                    .isEqualTo(inOrder.essence(m.target().toString()));
            assertThat(late.ledger(m.name()).stream().map(SnapshotFixture.LedgerEntry::withoutRun).sorted().toList())
                    .as(where + ": ledger").isEqualTo(inOrder.ledger(m.name()).stream()
                            .map(SnapshotFixture.LedgerEntry::withoutRun).sorted().toList());
            assertThat(late.errors(m.name()).stream().map(SnapshotFixture.ErrorEntry::withoutRun).sorted().toList())
                    .as(where + ": error log").isEqualTo(inOrder.errors(m.name()).stream()
                            .map(SnapshotFixture.ErrorEntry::withoutRun).sorted().toList());
            assertThat(found || isSorted(deliveries)).as(where + ": a late batch was found").isTrue();
            release(inOrder);
            release(late);
        }
    }

    private RawTable raw(SnapshotFixture f) {
        return f.rawTable("raw_customers", "id INT", "status VARCHAR(20)", "tier VARCHAR(20)", "op VARCHAR(1)",
                "updated_at TIMESTAMP", "file_date DATE");
    }

    private static ModelSettings model(RawTable raw, HardDeletes deletes, Strategy strategy, boolean explicit) {
        ModelSettings.Builder b = model(raw).hardDeletes(deletes).strategy(strategy);
        if (explicit) {
            b.deleteWhen("op = 'D'");
        }
        return b.build();
    }

    /**
     * Daily files over keys 1..{@code keys}: a key is present with probability 3/4 (absent: deleted by absence under
     * full batches), changes status or tier now and then, with an updated_at that is sometimes earlier than its
     * last one (a regression); now and then an explicit delete, a conflicting duplicate or an exact copy.
     */
    private static List<Batch> generate(Random r, int count, int keys, boolean explicitDeletes) {
        List<Batch> out = new ArrayList<>();
        String[] status = new String[keys + 1];
        String[] tier = new String[keys + 1];
        for (int d = 0; d < count; d++) {
            LocalDate day = DAY0.plusDays(2L * d);
            List<Object[]> rows = new ArrayList<>();
            for (int id = 1; id <= keys; id++) {
                if (r.nextInt(4) == 0) {
                    continue;
                }
                if (status[id] == null || r.nextInt(3) == 0) {
                    status[id] = "S" + r.nextInt(3);
                }
                if (tier[id] == null || r.nextInt(4) == 0) {
                    tier[id] = r.nextInt(5) == 0 ? null : "T" + r.nextInt(2);
                }
                // mostly the batch's morning; sometimes days earlier (a regression when it changes something)
                LocalDateTime at = day.atTime(9, 0).minusHours(r.nextInt(6) == 0 ? 24L * (1 + r.nextInt(4)) : 0)
                        .plusMinutes(id);
                String op = explicitDeletes && r.nextInt(8) == 0 ? "D" : "I";
                rows.add(new Object[] {id, status[id], tier[id], op, at, day});
                if (r.nextInt(12) == 0) {
                    rows.add(new Object[] {id, status[id], tier[id], op, at, day}); // an exact copy
                } else if (r.nextInt(15) == 0) {
                    rows.add(new Object[] {id, status[id] + "x", tier[id], op, at, day}); // a conflicting duplicate
                }
            }
            if (rows.isEmpty()) {
                rows.add(new Object[] {1, "S0", "T0", "I", day.atTime(9, 0), day});
            }
            out.add(new Batch(day, rows));
        }
        return out;
    }

    /** The batches in a random order, cut into 2 to 4 deliveries (each run gets one). */
    private static List<List<Batch>> shuffle(Random r, List<Batch> batches) {
        List<Batch> order = new ArrayList<>(batches);
        Collections.shuffle(order, r);
        int parts = 2 + r.nextInt(3);
        List<List<Batch>> out = new ArrayList<>();
        for (int p = 0; p < parts; p++) {
            out.add(new ArrayList<>());
        }
        for (int k = 0; k < order.size(); k++) {
            out.get(k < parts ? k : r.nextInt(parts)).add(order.get(k));
        }
        return out;
    }

    private static boolean isSorted(List<List<Batch>> deliveries) {
        LocalDate last = null;
        for (List<Batch> d : deliveries) {
            LocalDate min = d.stream().map(Batch::day).min(LocalDate::compareTo).orElseThrow();
            if (last != null && min.isBefore(last)) {
                return false;
            }
            last = d.stream().map(Batch::day).max(LocalDate::compareTo).orElseThrow();
        }
        return true;
    }

    private static String describe(List<List<Batch>> deliveries) {
        List<String> parts = new ArrayList<>();
        for (List<Batch> d : deliveries) {
            parts.add(d.stream().map(b -> String.valueOf((b.day().toEpochDay() - DAY0.toEpochDay()) / 2)).toList()
                    .toString());
        }
        return String.join(" ", parts);
    }
}
