package dev.itersnap.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.itersnap.core.Inspection;
import dev.itersnap.core.RunPlan;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;

/**
 * Prints a {@link RunPlan} (what a dry run says), as text or one JSON object: the library decides the plan with the
 * run's own steps; the command line only prints it.
 */
final class PlanPrinter {
    private PlanPrinter() {
    }

    /** {@code operation}: what the command calls it ({@code replay from 2024-03-01}, {@code full refresh}). */
    static void print(PrintWriter out, RunPlan plan, String operation) {
        out.println(plan.model() + ": dry run of " + operation + "; nothing was written");
        if (plan.recoveryFirst()) {
            out.println("a run did not finish: the run first recovers what it left, which may replay from earlier");
        }
        if (plan.lock() != null && plan.lock().state() == Inspection.LockStatus.HELD) {
            out.println("the model's lock is held now" + (plan.lock().databaseSays() == null ? ""
                    : " (" + plan.lock().databaseSays() + ")") + ": the run would wait for it and find the model as "
                    + "that run leaves it");
        }
        if (plan.lateBatchFound()) {
            out.println("a late batch is waiting in the source; the replay starts at it or earlier");
        }
        if (!plan.restated().isEmpty()) {
            out.println("restated in the source since applied: " + texts(plan.restated())
                    + "; the replay starts at the first or earlier");
        }
        if (!plan.uncomparable().isEmpty()) {
            out.println("fingerprinted over columns the source no longer has as they were: "
                    + count(plan.uncomparable().size()) + " from " + text(plan.uncomparable().get(0))
                    + "; the replay starts at the first or earlier");
        }
        if (!plan.lostEntries().isEmpty()) {
            out.println("batches the history shows but the ledger lost: " + texts(plan.lostEntries())
                    + "; replayed, never applied over");
        }
        if (plan.rolledBack().isEmpty()) {
            out.println("rolled back: nothing (no applied batch at or after the replay point)");
        } else {
            out.println("rolled back from " + text(plan.replayPoint()) + ": " + count(plan.rolledBack().size()) + " ("
                    + texts(plan.rolledBack()) + "); why: " + reasons(plan));
        }
        if (plan.upToDate()) {
            out.println("applied: nothing, the model is up to date");
        } else {
            out.println("applied in order: " + count(plan.batches().size()));
            List<List<String>> rows = new ArrayList<>();
            for (RunPlan.Batch b : plan.batches()) {
                rows.add(List.of(text(b.sequence()), b.replayed() ? "replayed" : "new", switch (b.readFrom()) {
                    case SOURCE -> "source";
                    case HISTORY -> "history (no longer in the source)";
                    case PENDING -> "pending (saved by a replay that failed)";
                }));
            }
            TablePrinter.print(out, List.of("sequence", "batch", "read from"), rows);
        }
        out.flush();
    }

    /** {@code operation}: as {@link #print} names it. */
    static String json(RunPlan plan, String operation) {
        ObjectMapper mapper = new ObjectMapper();
        ObjectNode o = mapper.createObjectNode().put("model", plan.model()).put("operation", operation)
                .put("dry_run", true).put("replay_point", text(plan.replayPoint()))
                .put("late_batch_found", plan.lateBatchFound()).put("recovery_first", plan.recoveryFirst());
        ArrayNode why = o.putArray("reasons");
        plan.reasons().stream().map(r -> r.name().toLowerCase(java.util.Locale.ROOT)).sorted().forEach(why::add);
        list(o.putArray("restated"), plan.restated());
        list(o.putArray("uncomparable"), plan.uncomparable());
        list(o.putArray("lost_ledger_entries"), plan.lostEntries());
        list(o.putArray("rolled_back"), plan.rolledBack());
        ArrayNode bs = o.putArray("batches");
        for (RunPlan.Batch b : plan.batches()) {
            bs.addObject().put("sequence", text(b.sequence())).put("replayed", b.replayed())
                    .put("read_from", b.readFrom().name().toLowerCase(java.util.Locale.ROOT));
        }
        if (plan.lock() != null) {
            o.putObject("lock").put("state", plan.lock().state().name().toLowerCase(java.util.Locale.ROOT))
                    .put("database_says", plan.lock().databaseSays());
        }
        try {
            return mapper.writeValueAsString(o);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void list(ArrayNode a, List<Object> sequences) {
        sequences.forEach(s -> a.add(text(s)));
    }

    private static String reasons(RunPlan plan) {
        return String.join(", ", plan.reasons().stream().map(r -> switch (r) {
            case LATE -> "a late batch";
            case RESTATED -> "a restated batch";
            case UNCOMPARABLE -> "a batch that cannot be compared";
            case REQUESTED -> "asked for";
            case FULL_REFRESH -> "full refresh";
            case LOST_LEDGER_ENTRY -> "a lost ledger entry";
        }).sorted().toList());
    }

    private static String text(Object sequence) {
        return SequenceText.of(sequence);
    }

    private static String texts(List<Object> sequences) {
        return String.join(", ", sequences.stream().map(PlanPrinter::text).toList());
    }

    private static String count(int n) {
        return n + (n == 1 ? " batch" : " batches");
    }
}
