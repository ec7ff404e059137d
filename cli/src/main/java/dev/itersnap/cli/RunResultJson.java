package dev.itersnap.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.itersnap.core.BatchResult;
import dev.itersnap.core.RunResult;

/** A {@link RunResult} as one JSON object, snake_case keys, sequences as text. */
final class RunResultJson {
    private static final ObjectMapper JSON = new ObjectMapper();

    private RunResultJson() {
    }

    /**
     * {@code withoutSequence}: the rows without a sequence the run set aside; {@code rejected} counts them (as the
     * error log and {@code status} do), the batches' {@code rejected} do not (they belong to no batch).
     */
    static String render(RunResult result, long withoutSequence) {
        try {
            return JSON.writeValueAsString(node(result, withoutSequence));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot render the run result as JSON", e);
        }
    }

    /** The object {@link #render} prints. */
    static ObjectNode node(RunResult result, long withoutSequence) {
        ObjectNode run = JSON.createObjectNode()
                .put("run_id", result.runId())
                .put("model", result.model())
                .put("batches_applied", result.batchesApplied())
                .put("late_batch_found", result.lateBatchFound())
                .put("replay_point", result.replayPointText())
                .put("inserted", result.inserted())
                .put("updated", result.updated())
                .put("deleted", result.deleted())
                .put("rejected", result.rejected() + withoutSequence)
                .put("rejected_without_sequence", withoutSequence)
                .put("timeline_violations", result.timelineViolations())
                .put("duration_ms", result.duration().toMillis());
        ArrayNode batches = run.putArray("batches");
        for (BatchResult b : result.batches()) {
            batches.addObject()
                    .put("sequence", b.sequenceText())
                    .put("source_rows", b.sourceRows())
                    .put("inserted", b.inserted())
                    .put("updated", b.updated())
                    .put("deleted", b.deleted())
                    .put("rejected", b.rejected())
                    .put("reproduced", b.reproduced());
        }
        return run;
    }
}
