package dev.itersnap.internal;

import dev.itersnap.core.RunPlan.Reason;

import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.NavigableSet;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * Where a run replays from, and why, decided once (docs/semantics.md "Late batches" and "Restated batches"): a pure
 * function of what the run found, used by the run and by its plan ({@link dev.itersnap.core.RunPlan}, whose
 * {@link Reason}s it gives). No I/O.
 *
 * <p>The rules: the replay point is the lowest of the first late batch (a batch new to the ledger below the greatest
 * applied one), the first restated batch, the first uncomparable batch (fingerprinted over columns the source no longer
 * has as they were), the point a replay was asked for, the source's first batch for a full refresh, and the first batch
 * whose ledger entry was lost; there is none when no applied batch is at or after it (nothing to roll back). The run
 * applies, in business order, the batches new to the ledger and every applied batch from the point on.
 */
final class ReplayDecision {
    private ReplayDecision() {
    }

    /** What a run found, as the decision reads it. Sets are in business order. */
    record Found(boolean fullRefresh, Seq requested, SortedSet<Seq> applied, SortedSet<Seq> fresh,
                 SortedSet<Seq> source, SortedSet<Seq> restated, SortedSet<Seq> uncomparable, Seq lostFrom) {
    }

    /**
     * The decision: the replay point (null: none) with every cause at or above which it was set (the ones that
     * reached the point first), whether a late batch was found, the applied batches rolled back and the batches
     * applied, both in business order.
     */
    record Decision(Seq point, Set<Reason> reasons, boolean late, List<Seq> rolledBack, List<Seq> batches) {
    }

    /**
     * The first late batch: the lowest batch new to the ledger when it lies below the greatest applied one; null
     * when none does. The one place the late test is written.
     */
    static Seq lateFrom(SortedSet<Seq> fresh, SortedSet<Seq> applied) {
        return !fresh.isEmpty() && !applied.isEmpty() && fresh.first().compareTo(applied.last()) < 0 ? fresh.first()
                : null;
    }

    /** The lowest point any cause gives, before it is checked against the applied batches (null: none). */
    static Seq lowest(Found f) {
        return candidates(f).point;
    }

    static Decision decide(Found f) {
        Candidates c = candidates(f);
        Seq point = c.point;
        if (point != null && (f.applied().isEmpty() || point.compareTo(f.applied().last()) > 0)) {
            point = null; // nothing applied at or after it: nothing to roll back
        }
        TreeSet<Seq> batches = new TreeSet<>(f.fresh());
        List<Seq> rolledBack = new ArrayList<>();
        if (point != null) {
            NavigableSet<Seq> tail = new TreeSet<>(f.applied()).tailSet(point, true);
            rolledBack.addAll(tail);
            batches.addAll(tail);
        }
        Set<Reason> reasons = point == null ? Set.of() : Collections.unmodifiableSet(c.reasonsAt(point));
        return new Decision(point, reasons, c.late, List.copyOf(rolledBack), List.copyOf(batches));
    }

    private static Candidates candidates(Found f) {
        Candidates c = new Candidates();
        Seq late = lateFrom(f.fresh(), f.applied());
        c.late = late != null;
        c.offer(late, Reason.LATE);
        c.offer(f.restated().isEmpty() ? null : f.restated().first(), Reason.RESTATED);
        c.offer(f.uncomparable().isEmpty() ? null : f.uncomparable().first(), Reason.UNCOMPARABLE);
        c.offer(f.requested(), Reason.REQUESTED);
        if (f.fullRefresh() && !f.applied().isEmpty() && !f.source().isEmpty()) {
            c.offer(f.source().first(), Reason.FULL_REFRESH);
        }
        c.offer(f.lostFrom(), Reason.LOST_LEDGER_ENTRY);
        return c;
    }

    /** The causes offered, each with its point. */
    private static final class Candidates {
        Seq point;
        boolean late;
        private final List<Seq> points = new ArrayList<>();
        private final List<Reason> reasons = new ArrayList<>();

        void offer(Seq at, Reason reason) {
            if (at == null) {
                return;
            }
            points.add(at);
            reasons.add(reason);
            point = point == null || at.compareTo(point) < 0 ? at : point;
        }

        /** The causes whose point is {@code at}. */
        EnumSet<Reason> reasonsAt(Seq at) {
            EnumSet<Reason> out = EnumSet.noneOf(Reason.class);
            for (int i = 0; i < points.size(); i++) {
                if (points.get(i).compareTo(at) == 0) {
                    out.add(reasons.get(i));
                }
            }
            return out;
        }
    }
}
