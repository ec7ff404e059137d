package dev.itersnap.core;

/**
 * What one batch did, as recorded in the ledger.
 *
 * @param sequence      the batch's {@code sequence_by} value (LocalDate, LocalDateTime, OffsetDateTime, Long,
 *                      BigDecimal or String, by the column's type)
 * @param sourceRows    rows of the batch read from the source (or reproduced from the history)
 * @param inserted      versions inserted (new keys, new versions of changed keys, deletion records)
 * @param updated       versions closed because the key changed
 * @param deleted       versions closed because the key was deleted
 * @param rejected      rows set aside in the error log
 * @param reproduced    true when the batch had aged out of the source and was reproduced from the history
 * @param duplicateCopies rows that repeated another row of the batch in every column (a file loaded twice); applied
 *                      once, not set aside
 */
public record BatchResult(Object sequence, long sourceRows, long inserted, long updated, long deleted, long rejected,
                          boolean reproduced, long duplicateCopies) {

    /** The sequence as the ledger stores it (ISO-8601 for dates and times, plain digits for numbers). */
    public String sequenceText() {
        return SequenceText.of(sequence);
    }
}
