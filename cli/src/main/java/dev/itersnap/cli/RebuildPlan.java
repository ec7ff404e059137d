package dev.itersnap.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.itersnap.core.Inspection;

import java.io.PrintWriter;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.NavigableMap;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * What a replay or full refresh would do, worked out read-only from the ledger and the source's distinct sequences,
 * with the engine's rules: the replay point is the requested sequence (replay), the source's first batch (full
 * refresh), the first late batch or the first restated batch (an applied batch whose rows changed in the source),
 * whichever is lower; nothing is rolled back when no applied batch is at or after it. Every applied batch from the point on is undone and replayed, from the source when it still holds it, else
 * reproduced from the history; new batches are applied after.
 */
record RebuildPlan(String model, String operation, String replayPoint, boolean lateBatchFound,
                   List<String> restated, List<String> rolledBack, List<Batch> batches) {

    /** One batch the rebuild would apply, in order. */
    record Batch(String sequence, boolean inLedger, boolean fromSource) {
    }

    /** {@code from} is the replay sequence's text, or null for a full refresh. */
    static RebuildPlan of(ModelInspection m, Inspection inspection, String operation, String from)
            throws SQLException {
        TreeMap<Comparable<?>, String> applied = m.ledgerSequences(inspection);
        TreeSet<Comparable<?>> source = m.sourceSequences();
        List<String> restated = inspection.restatedBatches();
        TreeSet<Comparable<?>> fresh = new TreeSet<>(source);
        fresh.removeAll(applied.keySet());
        Comparable<?> point = null;
        if (from != null) {
            point = m.typed(from);
        } else if (!applied.isEmpty() && !source.isEmpty()) {
            point = source.first();
        }
        boolean late = false;
        if (!fresh.isEmpty() && !applied.isEmpty() && m.sequenceType.compare(fresh.first(), applied.lastKey()) < 0) {
            late = true;
            point = point == null || m.sequenceType.compare(fresh.first(), point) < 0 ? fresh.first() : point;
        }
        if (!restated.isEmpty()) {
            Comparable<?> first = m.typed(restated.get(0));
            point = point == null || m.sequenceType.compare(first, point) < 0 ? first : point;
        }
        if (point != null && (applied.isEmpty() || m.sequenceType.compare(point, applied.lastKey()) > 0)) {
            point = null;
        }
        NavigableMap<Comparable<?>, String> undone = point == null ? new TreeMap<>() : applied.tailMap(point, true);
        TreeSet<Comparable<?>> all = new TreeSet<>(fresh);
        all.addAll(undone.keySet());
        List<Batch> batches = new ArrayList<>();
        for (Comparable<?> s : all) {
            batches.add(new Batch(m.text(s), applied.containsKey(s), source.contains(s)));
        }
        return new RebuildPlan(m.settings.name(), operation, point == null ? null : m.text(point), late, restated,
                undone.keySet().stream().map(m::text).toList(), batches);
    }

    void print(PrintWriter out) {
        out.println(model + ": dry run of " + operation + "; nothing was written");
        if (lateBatchFound) {
            out.println("a late batch is waiting in the source; the replay starts at it or earlier");
        }
        if (!restated.isEmpty()) {
            out.println("restated in the source since applied: " + String.join(", ", restated)
                    + "; the replay starts at the first or earlier");
        }
        if (rolledBack.isEmpty()) {
            out.println("rolled back: nothing (no applied batch at or after the replay point)");
        } else {
            out.println("rolled back from " + replayPoint + ": " + count(rolledBack.size()) + " ("
                    + String.join(", ", rolledBack) + ")");
        }
        if (batches.isEmpty()) {
            out.println("applied: nothing, the model is up to date");
        } else {
            out.println("applied in order: " + count(batches.size()));
            List<List<String>> rows = new ArrayList<>();
            for (Batch b : batches) {
                rows.add(List.of(b.sequence(), b.inLedger() ? "replayed" : "new",
                        b.fromSource() ? "source" : "history (no longer in the source)"));
            }
            TablePrinter.print(out, List.of("sequence", "batch", "read from"), rows);
        }
        out.flush();
    }

    String json() {
        ObjectMapper mapper = new ObjectMapper();
        ObjectNode o = mapper.createObjectNode().put("model", model).put("operation", operation).put("dry_run", true)
                .put("replay_point", replayPoint).put("late_batch_found", lateBatchFound);
        ArrayNode rs = o.putArray("restated");
        restated.forEach(rs::add);
        ArrayNode rb = o.putArray("rolled_back");
        rolledBack.forEach(rb::add);
        ArrayNode bs = o.putArray("batches");
        for (Batch b : batches) {
            bs.addObject().put("sequence", b.sequence()).put("replayed", b.inLedger())
                    .put("read_from", b.fromSource() ? "source" : "history");
        }
        try {
            return mapper.writeValueAsString(o);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String count(int n) {
        return n + (n == 1 ? " batch" : " batches");
    }
}
