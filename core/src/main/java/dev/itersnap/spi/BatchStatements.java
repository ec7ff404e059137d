package dev.itersnap.spi;

import java.util.List;

/**
 * The statements that apply one batch from the stage to the history, in the order the engine runs them; it skips the
 * optional ones the batch's counts make pointless. The engine empties the work table before {@code classify}.
 *
 * @param classify        fills the work table with the batch's rows and what the batch does with each
 * @param fillIntroduced  fills each column introduced by the batch on the current versions, in place
 * @param count           one query counting the work table by reject reason and action: rows of (reason, action,
 *                        rows, rows to archive); plus one row whose reason is {@link #SOURCE_ROWS} counting the
 *                        batch's rows in the stage (the work table may leave out rows that change nothing)
 * @param logRejected     copies the set-aside rows of the work table into the error log (run when some are)
 * @param archive         copies the work table's rows the history cannot reproduce into the archive (run when
 *                        {@code count} reports some)
 * @param closeAbsent     closes the current versions whose keys the batch lacks, at its deletion time; null when the
 *                        batch has no deletion time
 * @param merge           closes changed and deleted versions and inserts new ones
 * @param deletionRecords inserts a deletion record for each version the batch closed by deletion; null without
 *                        deletion records
 */
public record BatchStatements(Statement classify, List<Statement> fillIntroduced, Statement count,
                              Statement logRejected, Statement archive, Statement closeAbsent, Statement merge,
                              Statement deletionRecords) {
    /** The reason of {@link #count}'s row that counts the batch's rows in the stage. */
    public static final String SOURCE_ROWS = "itersnap_source_rows";

    public BatchStatements {
        fillIntroduced = List.copyOf(fillIntroduced);
    }
}
