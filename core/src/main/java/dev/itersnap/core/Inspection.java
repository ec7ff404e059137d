package dev.itersnap.core;

import java.time.Duration;
import java.time.LocalDateTime;
import java.util.List;
import java.util.Optional;

/**
 * What the metadata tables say about one model, read without writing anything: the ledger, the run log, the model
 * lock, the rows set aside, the recorded logic and the adoption point. What {@code itersnap status} shows, for an
 * application to read ({@code IterativeSnapshot.inspect(model)}).
 *
 * <pre>{@code
 * Inspection info = snapshots.inspect(customers);
 * for (Inspection.Batch b : info.ledger()) {
 *     System.out.println(b.sequence() + " " + b.inserted() + " inserted by run " + b.runId());
 * }
 * Inspection.Lock lock = info.lock();
 * if (lock.state() == Inspection.LockStatus.HELD) {
 *     System.out.println("running since " + lock.since());
 * }
 * }</pre>
 *
 * <p>Each method opens a connection of the data source, reads, and returns immutable values; nothing is cached, so
 * two calls may see two states. Before the model (or another of its metadata schema) first ran, the metadata tables
 * do not exist: {@link #metadataExists()} is false, the lists are empty and the lock is free or unknown. Thread-safe.
 * Not meant to be implemented outside itersnap.
 *
 * <p>Every method throws {@link ItersnapException} ({@code DATABASE_ERROR}) when the database cannot be read.
 */
public interface Inspection {
    /** The model's name. */
    String model();

    /** The metadata schema as the database names it (folded the way it folds unquoted identifiers). */
    String metadataSchema();

    /** Whether the metadata tables exist: false until the model (or another model of the schema) first ran. */
    boolean metadataExists();

    /**
     * The ledger: every applied batch with its counts, in business order (sequence order) when the source query can
     * be described, else in the order the batches were applied.
     */
    List<Batch> ledger();

    /** The model's runs from the run log, newest first: at most {@code limit} (every run when 0). */
    List<Run> runs(int limit);

    /**
     * The model lock as the database tells it, without taking it or waiting for it, with the run that holds it (or
     * left it) from the run log.
     */
    Lock lock();

    /**
     * The rows set aside in the error log, counted by batch and reason, in sequence text order (rows without a
     * sequence, {@code null_sequence}, have a null sequence).
     */
    List<SetAsideCount> setAsideCounts();

    /**
     * The rows of batch {@code sequence} set aside in the error log, at most {@code limit} (all when 0), in the order
     * they were logged. {@code sequence} is a value of the sequence column's Java type or its text form ({@code
     * 2024-03-01}, {@code 42}, for a {@code sequence_by} list a {@code List} or {@code (2024-03-01, 3)}); null reads
     * the rows without a sequence, which belong to no batch.
     */
    List<SetAsideRow> setAside(Object sequence, int limit);

    /**
     * The model's logic ({@link ModelSettings#logic()}) as the last successful run recorded it, and whether it
     * equals the settings this inspection was made with (a run refuses a change with {@link ErrorCode#LOGIC_CHANGE}
     * unless told to accept it); empty before a successful run.
     */
    Optional<RecordedLogic> recordedLogic();

    /** The model's latest adoption ({@code IterativeSnapshot.adopt}), if it was adopted. */
    Optional<Adoption> adoption();

    /**
     * The applied batches whose rows the source holds differently now than when they were applied (their
     * fingerprint differs from the ledger's), as sequence texts in business order: the batches the next run replays
     * from the first of (with {@code restatements: detect}); an entry fingerprinted before columns were added to
     * the source is compared over the columns it covers. Reads every applied batch the source still holds, so its
     * cost grows with the source; empty with {@code restatements: ignore} and before the first run.
     */
    List<String> restatedBatches();

    /**
     * The repairs that superseded versions of the history (a late or restated batch's replay, {@code replay --from},
     * a full refresh), newest first, at most {@code limit} (every one when 0), with what each superseded: read from
     * the model's superseded versions ({@code keep_superseded}), so empty before its first repair and when the model
     * never kept any (repairs kept before {@code keep_superseded} was turned off are still listed). Without
     * transactions, a run that took over the copies of a run that failed lists them as its own. Reads the whole table
     * of superseded versions, in two statements.
     *
     * @throws ItersnapException {@code INVALID_SOURCE} when the source cannot be described (the key columns of the
     *                           table come from it), {@code DATABASE_ERROR} when the table cannot be read
     */
    List<Repair> repairs(int limit);

    /**
     * One repair and what it superseded, each superseded version kept as it was in
     * {@code <metadata_schema>.itersnap_superseded_<model>}.
     *
     * @param runId          the run that made it (its row in {@link #runs})
     * @param supersededAt   when it copied what it superseded (the clock of the JVM that ran it)
     * @param everyKey       true when it computed every key again (a replay of every key, a full refresh); false for
     *                       a late batch's replay of the keys it changes
     * @param keysRecomputed the keys it computed again when not {@code everyKey}, else null
     * @param keys           the keys of which it superseded at least one version
     * @param versions       the versions it superseded (deleted or changed)
     * @param ledgerEntries  the ledger entries it replaced (the batches it applied again)
     * @param exampleKeys    up to five of those keys, the least first, as {@code ID=42} ({@code A=1, B=x} for a
     *                       composite key; each key column named as the database names it, the value as text)
     */
    record Repair(String runId, LocalDateTime supersededAt, boolean everyKey, Long keysRecomputed, long keys,
                  long versions, long ledgerEntries, List<String> exampleKeys) {
        public Repair {
            exampleKeys = List.copyOf(exampleKeys);
        }
    }

    /**
     * One applied batch, as the ledger records it.
     *
     * @param sequence        the batch's sequence as the ledger writes it ({@code 2024-03-04}, {@code 42},
     *                        {@code (2024-03-04, 3)} for a {@code sequence_by} list)
     * @param runId           the run that applied it (or last replayed it)
     * @param appliedAt       when that run recorded it (the clock of the JVM that ran it)
     * @param sourceRows      rows of the batch read from the source (or reproduced from the history)
     * @param duplicateCopies rows that repeated another row of the batch in every column, applied once
     * @param inserted        versions inserted
     * @param updated         versions closed by a change
     * @param deleted         versions closed by a deletion
     * @param rejected        rows set aside in the error log
     * @param reproduced      true when the batch had aged out of the source and was reproduced from the history
     * @param fingerprint     what the ledger knows of the batch's content, against which a restatement is detected
     */
    record Batch(String sequence, String runId, LocalDateTime appliedAt, long sourceRows, long duplicateCopies,
                 long inserted, long updated, long deleted, long rejected, boolean reproduced,
                 FingerprintState fingerprint) {
    }

    /** What the ledger knows of an applied batch's content, against which a restatement is detected. */
    enum FingerprintState {
        /**
         * A content hash over the source's columns as they are (or, when the source cannot be described, a content
         * hash): a run that compares the batch detects a restatement.
         */
        RECORDED,
        /**
         * A content hash over other columns (a column was added, dropped or changed type since): the next run compares
         * the batch over the columns it covers, or replays it when one of them left the source or changed type.
         */
        OTHER_COLUMNS,
        /**
         * No content hash: recorded under {@code restatements: ignore} (a run under {@code detect} records one
         * without comparing: the setting declared the source append-only).
         */
        NONE,
        /** The batch was reproduced from the history, not read from the source: there is nothing to compare. */
        REPRODUCED
    }

    /**
     * One run, as the run log records it.
     *
     * @param runId          the run's id (also in the ledger, the error log and every event)
     * @param operation      {@code run}, {@code full_check}, {@code full_refresh}, {@code replay} or {@code adopt}
     * @param status         running, success or failed
     * @param startedAt      when it started (the clock of the JVM that ran it)
     * @param finishedAt     when it finished, null while running (or when it died without finishing)
     * @param batchesApplied batches it applied or replayed, null while running
     * @param lateBatch      whether it found a late batch, null while running
     * @param replayPoint    the sequence it rolled back to, as text (for an adoption, the sequence it adopted
     *                       through), or null
     * @param error          its error message (secrets masked) when it failed, else null
     * @param holder         the process and thread that ran it
     */
    record Run(String runId, String operation, RunStatus status, LocalDateTime startedAt, LocalDateTime finishedAt,
               Integer batchesApplied, Boolean lateBatch, String replayPoint, String error, String holder) {
        /** How long it ran, or null while it runs (or when it died without finishing). */
        public Duration duration() {
            return startedAt == null || finishedAt == null ? null : Duration.between(startedAt, finishedAt);
        }
    }

    /** A run's status in the run log. */
    enum RunStatus {
        /** Running, or died without finishing (the lock tells which: {@link Inspection#lock()}). */
        RUNNING,
        /** Finished successfully. */
        SUCCESS,
        /** Failed; the history is as after the last batch recorded in the ledger. */
        FAILED
    }

    /** Whether the model lock is held. */
    enum LockStatus {
        /** A live process holds it (a database session, or a lease that has not expired). */
        HELD,
        /** Nobody holds it. */
        FREE,
        /**
         * This database cannot observe its lock without taking it; {@link Lock#holder()} is the run the run log
         * shows running, which may have died without finishing.
         */
        UNKNOWN
    }

    /**
     * The model lock now.
     *
     * @param state        held, free, or unknown (the database cannot tell)
     * @param holder       the run holding it: the newest run the run log shows running; null when free, or when a
     *                     run holds it that the run log does not show yet
     * @param leftBy       when free while the newest run is still running in the run log: that run, which died
     *                     without releasing the lock (the next run recovers what it left); else null
     * @param databaseSays what the database tells of the holder (a lease's owner and expiry, a session), or null
     */
    record Lock(LockStatus state, Run holder, Run leftBy, String databaseSays) {
        /** Since when the lock is held, or null when free or not known. */
        public LocalDateTime since() {
            return holder == null ? null : holder.startedAt();
        }
    }

    /**
     * Rows set aside, counted.
     *
     * @param sequence the batch (as the ledger writes it), null for rows without a sequence
     * @param reason   why: {@code null_sequence}, {@code null_key}, {@code duplicate_key}, {@code null_updated_at}
     *                 or {@code updated_at_regression} (docs/semantics.md, "Applying a batch")
     * @param rows     how many
     */
    record SetAsideCount(String sequence, String reason, long rows) {
    }

    /**
     * One row set aside in the error log.
     *
     * @param sequence the batch, as the ledger writes it; null for a row without a sequence
     * @param reason   why it was set aside
     * @param runId    the run that set it aside
     * @param record   the source row as a JSON object, column by column
     * @param loggedAt when
     */
    record SetAsideRow(String sequence, String reason, String runId, String record, LocalDateTime loggedAt) {
    }

    /**
     * The model's logic as a successful run recorded it.
     *
     * @param runId      the last successful run that recorded it
     * @param recordedAt when that run started
     * @param logic      the recorded fingerprint ({@link ModelSettings#logic()}: one {@code setting: value} line
     *                   per setting that shapes the history)
     * @param current    whether it equals the logic of the settings the inspection was made with
     */
    record RecordedLogic(String runId, LocalDateTime recordedAt, String logic, boolean current) {
    }

    /**
     * An adoption of an existing table as the model's history.
     *
     * @param runId   the adopting run
     * @param through the sequence adopted through, as text: a batch at or before it is refused later
     *                ({@link ErrorCode#LATE_BEFORE_ADOPTION})
     */
    record Adoption(String runId, String through) {
    }
}
