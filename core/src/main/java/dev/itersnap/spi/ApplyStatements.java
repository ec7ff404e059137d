package dev.itersnap.spi;

import java.util.List;

/**
 * The statements that apply a run's batches to the history together, in a fixed number whatever the number of
 * batches ({@link Dialect#applyBatches}). The engine runs them in this order:
 *
 * <ol>
 *   <li>{@code prepare}: fill the batches table, and fill the columns introduced at the first batch in place;</li>
 *   <li>{@code events}, {@code derive}, then the {@code counts} query; while it reports regressions (a change or
 *   delete earlier than the version it would close), {@code setAsideRegressions} (the earliest per key is set
 *   aside, and the two scratch tables emptied) and again {@code events}, {@code derive}, {@code counts};</li>
 *   <li>{@code closeCurrent} (the versions current before the run that the run closes), {@code insertVersions}
 *   (every version the run opens, already closed where a later batch of the run closes it), {@code logRejected} and
 *   {@code archive} when the counts say there is something to log or archive;</li>
 *   <li>the ledger, one entry per batch, from the counts.</li>
 * </ol>
 *
 * @param counts one query of rows (position, what, rows, deletion time): {@code what} is {@link #SOURCE_ROWS} (the
 *               batch's rows in the stage), a reason rows were set aside ({@code duplicate_copy} counts exact copies),
 *               an action ({@code insert}, {@code return}, {@code change}, {@code delete}, {@code absent},
 *               {@code noop}, {@code delnoop}), {@link #REGRESSIONS} (rows to set aside before writing), or
 *               {@link #DELETION_TIME} (the batch's deletion time in the fourth column)
 */
public record ApplyStatements(List<Statement> prepare, Statement events, Statement derive, Statement counts,
                              List<Statement> setAsideRegressions, Statement closeCurrent, Statement insertVersions,
                              Statement logRejected, Statement archive) {
    /** The row of {@code counts} counting a batch's rows in the stage. */
    public static final String SOURCE_ROWS = "itersnap_source_rows";
    /** The row of {@code counts} counting the regressions found (set them aside and derive again). */
    public static final String REGRESSIONS = "itersnap_regressions";
    /** The row of {@code counts} giving a batch's deletion time. */
    public static final String DELETION_TIME = "itersnap_deletion_time";

    public ApplyStatements {
        prepare = List.copyOf(prepare);
        setAsideRegressions = List.copyOf(setAsideRegressions);
    }
}
