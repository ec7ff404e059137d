package dev.itersnap.core;

import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * What a run, a replay or a full refresh of a model would do now, decided by the code the run itself executes
 * ({@link dev.itersnap.IterativeSnapshot#plan}); read-only: making it takes no lock and writes nothing. Sequences are
 * shown as {@link RunResult} shows them (a value of the sequence's type; a list for a {@code sequence_by} list).
 * Immutable.
 *
 * <p>A run that starts right after the plan, with the source and the metadata unchanged, rolls back and applies
 * exactly these batches from this replay point. Two things can make it differ, and the plan says when they apply: a
 * run that did not finish ({@link #recoveryFirst}: the run first undoes what it left, and checks what it recorded),
 * and the model's lock ({@link #lock}: another run holds it now, so this one would wait and find the model as that one
 * left it).
 *
 * @param model            the model's name
 * @param operation        {@code run}, {@code full_check}, {@code replay} or {@code full_refresh}
 * @param replayPoint      the batch the history is rolled back to (replayed from), or null when nothing is rolled back
 * @param reasons          why the replay starts there: every cause whose point it is (empty without a replay point)
 * @param lateBatchFound   whether a batch new to the ledger lies below the greatest applied one
 * @param restated         applied batches whose rows in the source changed since they were applied, in business order
 * @param uncomparable     applied batches fingerprinted over columns the source no longer has as they were (replayed,
 *                         since whether they were corrected cannot be told), in business order
 * @param lostEntries      batches the history shows but the ledger lost (replayed, never applied over)
 * @param rolledBack       the applied batches undone, in business order
 * @param batches          the batches applied, in business order, with where each is read from
 * @param recoveryFirst    a run did not finish: the run first recovers (undoes what the ledger does not record and
 *                         checks what that run recorded), which may move the replay point down
 * @param lock             what the model's lock says now
 */
public record RunPlan(String model, String operation, Object replayPoint, Set<Reason> reasons, boolean lateBatchFound,
                      List<Object> restated, List<Object> uncomparable, List<Object> lostEntries,
                      List<Object> rolledBack, List<Batch> batches, boolean recoveryFirst, Inspection.Lock lock) {
    public RunPlan {
        Objects.requireNonNull(model, "model");
        Objects.requireNonNull(operation, "operation");
        reasons = Set.copyOf(reasons);
        restated = List.copyOf(restated);
        uncomparable = List.copyOf(uncomparable);
        lostEntries = List.copyOf(lostEntries);
        rolledBack = List.copyOf(rolledBack);
        batches = List.copyOf(batches);
    }

    /** Why a replay starts where it does. */
    public enum Reason {
        /** A batch new to the ledger lies below the greatest applied one. */
        LATE,
        /** An applied batch's rows in the source changed since it was applied. */
        RESTATED,
        /** An applied batch was fingerprinted over columns the source no longer has as they were. */
        UNCOMPARABLE,
        /** A replay from this sequence was asked for. */
        REQUESTED,
        /** A full refresh: from the first batch the source holds. */
        FULL_REFRESH,
        /** The ledger lost the entry of a batch the history shows. */
        LOST_LEDGER_ENTRY
    }

    /** Where a batch's rows are read from. */
    public enum ReadFrom {
        /** The source query. */
        SOURCE,
        /** The history and the archive: the batch left the source (aged out), its effect is reproduced. */
        HISTORY,
        /** The rows a replay that failed saved before its roll back (databases without transactions). */
        PENDING
    }

    /**
     * One batch the run applies.
     *
     * @param sequence the batch
     * @param replayed whether it was applied before (rolled back and applied again), else new to the ledger
     * @param readFrom where its rows come from
     */
    public record Batch(Object sequence, boolean replayed, ReadFrom readFrom) {
    }

    /** True when the run would apply nothing. */
    public boolean upToDate() {
        return batches.isEmpty();
    }
}
