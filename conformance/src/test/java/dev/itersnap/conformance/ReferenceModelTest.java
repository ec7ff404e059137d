package dev.itersnap.conformance;

import dev.itersnap.core.HardDeletes;
import dev.itersnap.core.Strategy;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.Test;

import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The oracle itself, on hand-written stories whose histories can be checked by reading docs/semantics.md. */
class ReferenceModelTest {
    private static final LocalDate MON = LocalDate.of(2024, 3, 4);
    private static final LocalDate TUE = MON.plusDays(1);
    private static final LocalDate WED = MON.plusDays(2);

    /** Alice: Monday Active, Tuesday Premium, Wednesday Gold; Tuesday's file arrives last. */
    @ParameterizedTest
    @EnumSource(Strategy.class)
    void aliceGetsThreeVersionsWhateverTheArrivalOrder(Strategy strategy) {
        ReferenceModel.Config config = config(List.of("id", "name", "status"), strategy, HardDeletes.IGNORE, false,
                true);
        ReferenceModel.Batch mon = batch(MON, row("id", 1, "name", "Alice", "status", "Active",
                "updated_at", MON.atTime(9, 0)));
        ReferenceModel.Batch tue = batch(TUE, row("id", 1, "name", "Alice", "status", "Premium",
                "updated_at", TUE.atTime(10, 0)));
        ReferenceModel.Batch wed = batch(WED, row("id", 1, "name", "Alice", "status", "Gold",
                "updated_at", WED.atTime(11, 0)));

        ReferenceModel model = ReferenceModel.ofBatches(config, List.of(mon, wed, tue), List.of());

        assertThat(lines(model)).containsExactly(
                "[1] Active from 2024-03-04T09:00 to 2024-03-05T10:00 update [status]",
                "[1] Premium from 2024-03-05T10:00 to 2024-03-06T11:00 update [status]",
                "[1] Gold from 2024-03-06T11:00 to null insert null");
        assertThat(model.rejections()).isEmpty();
    }

    /**
     * Full batches with integer ids 9, 10, 11: the deletion time is the batch's greatest updated_at; a version is
     * never closed before it opened (clamp); a returning key starts at the later of its updated_at and the end of its
     * last version.
     */
    @Test
    void fullBatchesDeleteAtTheGreatestUpdatedAtClampedAndReturningKeysStartAfterTheDeletion() {
        ReferenceModel.Config config = config(List.of("id", "status"), Strategy.CHECK, HardDeletes.INVALIDATE, false,
                false);
        LocalDateTime t0700 = MON.atTime(7, 0);
        LocalDateTime t0800 = MON.atTime(8, 0);
        LocalDateTime t1200 = MON.atTime(12, 0);
        ReferenceModel.Batch b9 = batch(9L,
                row("id", 1, "status", "A", "updated_at", t0800),
                row("id", 2, "status", "B", "updated_at", t1200),
                row("id", 3, "status", "C", "updated_at", t0700));
        ReferenceModel.Batch b10 = batch(10L, row("id", 1, "status", "A", "updated_at", t0800));
        ReferenceModel.Batch b11 = batch(11L,
                row("id", 1, "status", "A", "updated_at", t0800),
                row("id", 2, "status", "B", "updated_at", t1200),
                row("id", 3, "status", "C", "updated_at", t0700));

        ReferenceModel model = ReferenceModel.ofBatches(config, List.of(b10, b11, b9), List.of());

        assertThat(lines(model)).containsExactlyInAnyOrder(
                "[1] A from 2024-03-04T08:00 to null insert null",
                // batch 10's deletion time is 08:00, before id 2 opened: closed at its own valid_from
                "[2] B from 2024-03-04T12:00 to 2024-03-04T12:00 delete null",
                "[2] B from 2024-03-04T12:00 to null insert null",
                "[3] C from 2024-03-04T07:00 to 2024-03-04T08:00 delete null",
                // returns with updated_at 07:00, starts where its last version ended
                "[3] C from 2024-03-04T08:00 to null insert null");
    }

    /**
     * new_record with DATE sequences: the deletion time is the batch date at midnight; the deletion record carries
     * the closed version's values and is closed by the returning row like any version.
     */
    @Test
    void newRecordInsertsADeletionRecordThatTheReturningRowCloses() {
        ReferenceModel.Config config = config(List.of("id", "status", "score"), Strategy.TIMESTAMP,
                HardDeletes.NEW_RECORD, false, true);
        ReferenceModel.Batch mon = batch(MON, row("id", 1, "status", "A", "score", 1, "updated_at", MON.atTime(10, 0)));
        ReferenceModel.Batch tue = batch(TUE, row("id", 2, "status", "X", "score", null, "updated_at", TUE.atTime(9, 0)));
        ReferenceModel.Batch wed = batch(WED,
                row("id", 1, "status", "A", "score", 2, "updated_at", WED.atTime(10, 0)),
                row("id", 2, "status", "X", "score", null, "updated_at", TUE.atTime(9, 0)));

        ReferenceModel model = ReferenceModel.ofBatches(config, List.of(mon, tue, wed), List.of());

        assertThat(lines(model)).containsExactlyInAnyOrder(
                "[1] A 1 from 2024-03-04T10:00 to 2024-03-05T00:00 delete null",
                "[1] A 1 from 2024-03-05T00:00 to 2024-03-06T10:00 update [score] DELETION RECORD",
                "[1] A 2 from 2024-03-06T10:00 to null insert null",
                "[2] X null from 2024-03-05T09:00 to null insert null");
    }

    /** Rejections in priority order; regression under check, plain "unchanged" under timestamp. */
    @ParameterizedTest
    @EnumSource(Strategy.class)
    void rowsAreSetAsideInPriorityOrder(Strategy strategy) {
        ReferenceModel.Config config = config(List.of("id", "status", "op"), strategy, HardDeletes.IGNORE, true,
                false);
        LocalDateTime t0 = MON.atTime(6, 0);
        LocalDateTime t1 = MON.atTime(8, 0);
        LocalDateTime t2 = TUE.atTime(8, 0);
        ReferenceModel.Batch b1 = batch(1L,
                row("id", 1, "status", "A", "op", "U", "updated_at", t1),
                row("id", 2, "status", "B", "op", "I", "updated_at", t1),
                row("id", null, "status", "Z", "op", "I", "updated_at", t1));
        ReferenceModel.Batch b2 = batch(2L,
                row("id", 1, "status", "A", "op", "U", "updated_at", t2), // timestamp: newer, nothing changed: []
                row("id", 2, "status", "C", "op", "U", "updated_at", t2),
                row("id", 2, "status", "D", "op", "U", "updated_at", null), // duplicate key beats NULL updated_at
                row("id", 3, "status", "E", "op", "D", "updated_at", t2), // explicit delete of no version: nothing
                row("id", 4, "status", "F", "op", "I", "updated_at", null));
        ReferenceModel.Batch b3 = batch(3L,
                row("id", 1, "status", "B", "op", "U", "updated_at", t0),
                row("id", 2, "status", "B", "op", "D", "updated_at", t0));
        Map<String, Object> noSequence = row("id", 5, "status", "G", "op", "I", "updated_at", t1);
        noSequence.put("batch_seq", null);

        ReferenceModel model = ReferenceModel.ofBatches(config, List.of(b1, b2, b3), List.of(noSequence));

        List<String> rejected = model.rejections().stream()
                .map(r -> r.sequence() + " " + r.reason() + " id=" + r.row().get("id")).toList();
        if (strategy == Strategy.CHECK) {
            assertThat(lines(model)).containsExactly(
                    "[1] A U from 2024-03-04T08:00 to null insert null",
                    "[2] B I from 2024-03-04T08:00 to null insert null");
            assertThat(rejected).containsExactly("null null_sequence id=5", "1 null_key id=null",
                    "2 duplicate_key id=2", "2 duplicate_key id=2", "2 null_updated_at id=4",
                    "3 updated_at_regression id=1", "3 updated_at_regression id=2");
        } else {
            assertThat(lines(model)).contains(
                    "[1] A U from 2024-03-04T08:00 to 2024-03-05T08:00 update []",
                    "[1] A U from 2024-03-05T08:00 to null insert null");
            assertThat(rejected).containsSubsequence("null null_sequence id=5", "1 null_key id=null",
                    "2 duplicate_key id=2", "2 duplicate_key id=2", "2 null_updated_at id=4")
                    .doesNotContain("3 updated_at_regression id=1");
        }
    }

    private static ReferenceModel.Config config(List<String> dataColumns, Strategy strategy, HardDeletes hardDeletes,
                                                boolean deleteWhen, boolean temporalSequence) {
        List<String> columns = new ArrayList<>(dataColumns);
        columns.add("updated_at");
        columns.add("batch_seq");
        return new ReferenceModel.Config(columns, List.of("id"), "updated_at", "batch_seq", strategy, null,
                hardDeletes, deleteWhen ? r -> "D".equals(r.get("op")) : null, temporalSequence, false, false);
    }

    @SafeVarargs
    private static ReferenceModel.Batch batch(Comparable<?> sequence, Map<String, Object>... rows) {
        List<Map<String, Object>> list = new ArrayList<>();
        for (Map<String, Object> row : rows) {
            row.put("batch_seq", sequence);
            list.add(row);
        }
        return new ReferenceModel.Batch(sequence, list);
    }

    private static Map<String, Object> row(Object... namesAndValues) {
        Map<String, Object> row = new LinkedHashMap<>();
        for (int i = 0; i < namesAndValues.length; i += 2) {
            row.put((String) namesAndValues[i], namesAndValues[i + 1]);
        }
        return row;
    }

    /** "[key] tracked values from .. to .. change_type changed_attributes [DELETION RECORD]", in creation order. */
    private static List<String> lines(ReferenceModel model) {
        return model.versions().stream().map(v -> {
            StringBuilder s = new StringBuilder(v.key().toString());
            v.values().forEach((c, value) -> {
                if (!c.equals("id") && !c.equals("updated_at") && !c.equals("batch_seq") && !c.equals("name")) {
                    s.append(' ').append(value);
                }
            });
            s.append(" from ").append(v.validFrom()).append(" to ").append(v.validTo()).append(' ')
                    .append(v.changeType()).append(' ').append(v.changedAttributes());
            if (v.deletionRecord()) {
                s.append(" DELETION RECORD");
            }
            return s.toString();
        }).toList();
    }
}
