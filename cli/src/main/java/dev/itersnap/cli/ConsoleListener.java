package dev.itersnap.cli;

import dev.itersnap.core.BatchResult;
import dev.itersnap.core.SnapshotEvent;
import dev.itersnap.core.SnapshotListener;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/** Prints the events worth a person's attention, one readable line each; run start and end are left to the command. */
final class ConsoleListener implements SnapshotListener {
    private final PrintWriter out;
    private final String indent;
    private long rowsWithoutSequence;

    ConsoleListener(PrintWriter out, String indent) {
        this.out = out;
        this.indent = indent;
    }

    /**
     * The rows without a sequence the run set aside ({@code null_sequence}): they belong to no batch, so the run
     * result's per-batch counts leave them out while the error log, and {@code status}, count them.
     */
    long rowsWithoutSequence() {
        return rowsWithoutSequence;
    }

    @Override
    public void onEvent(SnapshotEvent event) {
        if (event instanceof SnapshotEvent.RowsRejected e && e.sequence() == null) {
            rowsWithoutSequence += e.reasons().values().stream().mapToLong(Long::longValue).sum();
        }
        String line = describe(event);
        if (line != null) {
            out.println(indent + line);
            out.flush();
        }
    }

    static String describe(SnapshotEvent event) {
        if (event instanceof SnapshotEvent.WaitingForLock e) {
            return "waiting for the model lock: another run holds it (" + e.holder() + "); waiting up to lock_timeout";
        } else if (event instanceof SnapshotEvent.BatchApplied e) {
            BatchResult b = e.batch();
            return "batch " + b.sequenceText() + " applied"
                    + (b.reproduced() ? " (reproduced from history)" : "") + ": " + rows(b.sourceRows()) + ", "
                    + b.inserted() + " inserted, " + b.updated() + " updated, " + b.deleted() + " deleted, "
                    + b.rejected() + " rejected";
        } else if (event instanceof SnapshotEvent.OutOfOrder e) {
            return "late batch detected: " + SequenceText.of(below(e.incoming(), e.greatestApplied())) + " < "
                    + SequenceText.of(e.greatestApplied()) + ", replaying from " + SequenceText.of(e.replayPoint());
        } else if (event instanceof SnapshotEvent.DuplicateRecords e) {
            return "batch " + SequenceText.of(e.sequence()) + ": " + rows(e.rows())
                    + " sharing a key with a differing row (set aside), " + rows(e.copies())
                    + " repeating another row exactly (applied once)";
        } else if (event instanceof SnapshotEvent.RowsRejected e) {
            long total = e.reasons().values().stream().mapToLong(Long::longValue).sum();
            return (e.sequence() == null ? "rows without a sequence (in no batch)" : "batch "
                    + SequenceText.of(e.sequence())) + ": " + rows(total) + " set aside in the error log ("
                    + e.reasons().entrySet().stream().map(r -> r.getKey() + ": " + r.getValue())
                    .collect(Collectors.joining(", ")) + ")";
        } else if (event instanceof SnapshotEvent.SchemaChange e) {
            List<String> parts = new ArrayList<>();
            if (!e.added().isEmpty()) {
                parts.add("added " + String.join(", ", e.added()));
            }
            if (!e.missing().isEmpty()) {
                parts.add("no longer in the source (kept, NULL from now on) " + String.join(", ", e.missing()));
            }
            return "schema change: " + String.join("; ", parts);
        } else if (event instanceof SnapshotEvent.LedgerRepaired e) {
            return "ledger repaired: the history carries " + batches(e.sequences().size()) + " the ledger lost ("
                    + e.sequences().stream().map(SequenceText::of).collect(Collectors.joining(", "))
                    + "); replaying from " + SequenceText.of(e.sequences().get(0));
        } else if (event instanceof SnapshotEvent.UnfinishedRunRepaired e) {
            return "unfinished run " + String.join(", ", e.unfinishedRuns()) + ": the history holds "
                    + e.foundVersions() + " of the " + e.recordedVersions() + " versions the ledger records for "
                    + e.sequences().stream().map(SequenceText::of).collect(Collectors.joining(", "))
                    + "; replaying from " + SequenceText.of(e.sequences().get(0));
        } else if (event instanceof SnapshotEvent.RowsAddedToAppliedBatch e) {
            return "warning: batch " + SequenceText.of(e.sequence()) + ": the source holds " + rows(e.sourceRows())
                    + ", " + e.appliedRows() + " were applied; the " + rows(e.sourceRows() - e.appliedRows())
                    + " added since are not in the history (replay --from " + SequenceText.of(e.sequence())
                    + " applies them)";
        } else if (event instanceof SnapshotEvent.BatchRestated e) {
            return "restated batch: " + SequenceText.of(e.sequence()) + " changed in the source since it was applied ("
                    + rows(e.oldRows()) + " then, " + rows(e.newRows()) + " now); replaying from it";
        } else if (event instanceof SnapshotEvent.UncomparableBatches e) {
            return "columns changed: " + batches(e.batches()) + " fingerprinted over columns the source no longer has "
                    + "as they were (" + String.join(", ", e.columns()) + "); whether they were corrected since cannot "
                    + "be told: replaying from " + SequenceText.of(e.from());
        } else if (event instanceof SnapshotEvent.HistoryAdopted e) {
            return "adopted " + e.versions() + " versions through " + SequenceText.of(e.through()) + ": "
                    + batches(e.batches()) + " declared applied"
                    + (e.columnsAdded().isEmpty() ? "" : ", bookkeeping columns added " + String.join(", ",
                    e.columnsAdded()));
        } else if (event instanceof SnapshotEvent.TimelineViolation e) {
            return "timeline check failed for " + e.keys() + " keys, e.g. " + e.examples();
        }
        return null;
    }

    static String rows(long n) {
        return n + (n == 1 ? " row" : " rows");
    }

    static String batches(long n) {
        return n + (n == 1 ? " batch" : " batches");
    }

    /** The incoming sequences lower than the greatest applied one: the late ones. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    private static List<Object> below(List<Object> incoming, Object greatest) {
        try {
            List<Object> late = incoming.stream().filter(s -> ((Comparable) s).compareTo(greatest) < 0).toList();
            return late.isEmpty() ? incoming : late;
        } catch (ClassCastException e) {
            return incoming;
        }
    }
}
