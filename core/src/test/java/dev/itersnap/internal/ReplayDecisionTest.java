package dev.itersnap.internal;

import dev.itersnap.internal.ReplayDecision.Decision;
import dev.itersnap.internal.ReplayDecision.Found;
import dev.itersnap.core.RunPlan.Reason;
import dev.itersnap.spi.ValueType;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The replay decision, rule by rule (docs/semantics.md "Late batches", "Restated batches", "Rollback, replay and
 * aged-out batches", "Ownership": lost ledger entries): no database. Batches are integers; each row names what the run
 * found and what it must decide.
 */
class ReplayDecisionTest {
    /** What the run found: applied, new, the source's batches, restated, uncomparable, requested, lost from. */
    private record Case(String rule, boolean fullRefresh, Integer requested, List<Integer> applied, List<Integer> fresh,
                        List<Integer> source, List<Integer> restated, List<Integer> uncomparable, Integer lostFrom,
                        Integer point, Set<Reason> reasons, boolean late, List<Integer> rolledBack,
                        List<Integer> batches) {
        @Override
        public String toString() {
            return rule;
        }
    }

    private static List<Integer> l(Integer... v) {
        return Arrays.asList(v);
    }

    private static Case run(String rule, List<Integer> applied, List<Integer> fresh, List<Integer> restated,
                            Integer point, Set<Reason> reasons, boolean late, List<Integer> rolledBack,
                            List<Integer> batches) {
        List<Integer> source = new java.util.ArrayList<>(applied);
        source.addAll(fresh);
        return new Case(rule, false, null, applied, fresh, source, restated, l(), null, point, reasons, late,
                rolledBack, batches);
    }

    static Stream<Arguments> rules() {
        return Stream.of(
                run("nothing applied yet: a first load replays nothing", l(), l(1, 2, 3), l(), null, Set.of(), false,
                        l(), l(1, 2, 3)),
                run("new batches after the applied ones: in order, nothing rolled back", l(1, 2), l(3, 4), l(), null,
                        Set.of(), false, l(), l(3, 4)),
                run("nothing new: nothing to do", l(1, 2), l(), l(), null, Set.of(), false, l(), l()),
                run("a late batch: replayed from it, with every applied batch after it", l(1, 2, 4, 5), l(3), l(), 3,
                        Set.of(Reason.LATE), true, l(4, 5), l(3, 4, 5)),
                run("late and new batches in one run: from the lowest late one", l(1, 3, 5), l(2, 4, 6), l(), 2,
                        Set.of(Reason.LATE), true, l(3, 5), l(2, 3, 4, 5, 6)),
                run("a new batch equal to none applied but above all: not late", l(1, 2), l(3), l(), null, Set.of(),
                        false, l(), l(3)),
                run("a restated batch: replayed from it, with every applied batch after it", l(1, 2, 3), l(), l(2), 2,
                        Set.of(Reason.RESTATED), false, l(2, 3), l(2, 3)),
                run("a restated batch below a late one: from the restated one, late still reported", l(1, 2, 4),
                        l(3), l(1), 1, Set.of(Reason.RESTATED), true, l(1, 2, 4), l(1, 2, 3, 4)),
                run("a late batch below a restated one: from the late one", l(1, 3, 4), l(2), l(4), 2,
                        Set.of(Reason.LATE), true, l(3, 4), l(2, 3, 4)),
                run("late and restated at the same batch are impossible; restated at the last applied batch", l(1, 2),
                        l(3), l(2), 2, Set.of(Reason.RESTATED), false, l(2), l(2, 3)),
                new Case("a replay from a sequence: from it", false, 2, l(1, 2, 3), l(), l(1, 2, 3), l(), l(), null,
                        2, Set.of(Reason.REQUESTED), false, l(2, 3), l(2, 3)),
                new Case("a replay from a sequence between applied batches: from the next one on", false, 2, l(1, 3),
                        l(), l(1, 3), l(), l(), null, 2, Set.of(Reason.REQUESTED), false, l(3), l(3)),
                new Case("a replay from past the last applied batch: nothing to roll back", false, 9, l(1, 2), l(3),
                        l(1, 2, 3), l(), l(), null, null, Set.of(), false, l(), l(3)),
                new Case("a replay and a lower late batch: from the late one", false, 4, l(1, 3, 4, 5), l(2),
                        l(1, 2, 3, 4, 5), l(), l(), null, 2, Set.of(Reason.LATE), true, l(3, 4, 5), l(2, 3, 4, 5)),
                new Case("a full refresh: from the first batch the source holds (older history kept)", true, null,
                        l(1, 2, 3), l(4), l(2, 3, 4), l(), l(), null, 2, Set.of(Reason.FULL_REFRESH), false, l(2, 3),
                        l(2, 3, 4)),
                new Case("a full refresh of nothing applied: a first load", true, null, l(), l(1, 2), l(1, 2), l(),
                        l(), null, null, Set.of(), false, l(), l(1, 2)),
                new Case("uncomparable batches (a column dropped): from the first of them", false, null, l(1, 2, 3),
                        l(4), l(1, 2, 3, 4), l(), l(2, 3), null, 2, Set.of(Reason.UNCOMPARABLE), false, l(2, 3),
                        l(2, 3, 4)),
                new Case("a lost ledger entry: from it", false, null, l(1, 2, 3), l(), l(1, 2, 3), l(), l(), 2, 2,
                        Set.of(Reason.LOST_LEDGER_ENTRY), false, l(2, 3), l(2, 3)),
                new Case("a lost entry, a late batch and a request at one point: every cause named", false, 2,
                        l(1, 2, 4), l(3), l(1, 2, 3, 4), l(), l(), 2, 2, Set.of(Reason.LOST_LEDGER_ENTRY, Reason.REQUESTED),
                        true, l(2, 4), l(2, 3, 4))
        ).map(Arguments::of);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("rules")
    void decides(Case c) {
        Decision d = ReplayDecision.decide(new Found(c.fullRefresh(), seq(c.requested()), seqs(c.applied()),
                seqs(c.fresh()), seqs(c.source()), seqs(c.restated()), seqs(c.uncomparable()), seq(c.lostFrom())));

        assertThat(d.point()).as("replay point").isEqualTo(seq(c.point()));
        assertThat(d.reasons()).as("why").isEqualTo(c.reasons());
        assertThat(d.late()).as("late batch found").isEqualTo(c.late());
        assertThat(d.rolledBack()).as("rolled back").isEqualTo(List.copyOf(seqs(c.rolledBack())));
        assertThat(d.batches()).as("applied in order").isEqualTo(List.copyOf(seqs(c.batches())));
    }

    private static Seq seq(Integer v) {
        return v == null ? null : new Seq(ValueType.INTEGER, (long) v);
    }

    private static TreeSet<Seq> seqs(List<Integer> values) {
        TreeSet<Seq> out = new TreeSet<>();
        values.forEach(v -> out.add(seq(v)));
        return out;
    }
}
