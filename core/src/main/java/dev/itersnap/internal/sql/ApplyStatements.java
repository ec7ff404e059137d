package dev.itersnap.internal.sql;

import dev.itersnap.spi.Statement;

import java.util.List;

/**
 * The statements that apply a run's batches to the history together, in a fixed number whatever the number of
 * batches ({@link SqlSteps#applyBatches}). The engine runs them in this order:
 *
 * <ol>
 *   <li>{@code listBatches} (before the source is staged: a key-scoped replay stages by it), then the stage;</li>
 *   <li>{@code prepare}: the batches' deletion times, the columns introduced at the first batch filled in place, and
 *   the keys the run may change;</li>
 *   <li>for a key-scoped replay ({@link BatchRun#keyScoped()}): the replayed batches' rows of the keys it recomputes
 *   are staged, the history of those keys rolled back, and {@code before} derived: what the replayed batches did to
 *   those keys without the late batches (their ledger counts change by the difference); then
 *   {@code resetRegressions} and the scratch tables emptied;</li>
 *   <li>{@code derivation};</li>
 *   <li>{@code closeCurrent} (the versions current before the run that the run closes), {@code insertVersions}
 *   (every version the run opens, already closed where a later batch of the run closes it), or where the counts say
 *   both have rows to write, {@code writeVersions} (both in one MERGE; null where the model cannot: then both),
 *   {@code logRejected} and {@code archive} when the counts say there is something to log or archive;</li>
 *   <li>the ledger, one entry per batch, from the counts.</li>
 * </ol>
 *
 * @param before           the derivation without the late batches, for a key-scoped replay; null otherwise
 * @param resetRegressions puts back, in the stage, the rows {@code before} set aside as regressions
 */
public record ApplyStatements(List<Statement> listBatches, List<Statement> prepare, Derivation before,
                              Statement resetRegressions, Derivation derivation, Statement closeCurrent,
                              Statement insertVersions, Statement writeVersions, Statement logRejected,
                              Statement archive) {
    /** The row of {@code counts} counting a batch's rows in the stage. */
    public static final String SOURCE_ROWS = "itersnap_source_rows";
    /** The row of {@code counts} counting the regressions found (set them aside and derive again). */
    public static final String REGRESSIONS = "itersnap_regressions";
    /** The row of {@code counts} giving a batch's deletion time. */
    public static final String DELETION_TIME = "itersnap_deletion_time";
    /** The row of {@code counts} counting the rows of a statement it was given ({@link Derivation#counting}). */
    public static final String PROBED = "itersnap_probed";

    public ApplyStatements {
        listBatches = List.copyOf(listBatches);
        prepare = List.copyOf(prepare);
    }

    /**
     * What the batches do to the keys: {@code derive}, {@code derived} (a dialect's statistics of the work table; none
     * by default), then the {@code counts} query; while it reports regressions (a change or delete earlier than the
     * version it would close), {@code setAsideRegressions} (the earliest per key is set aside, and the work table
     * emptied) and again {@code derive}, {@code derived}, {@code counts}.
     *
     * @param counts one query of rows (position, what, rows, deletion time): {@code what} is {@link #SOURCE_ROWS}
     *               (the batch's rows in the stage), a reason rows were set aside ({@code duplicate_copy} counts exact
     *               copies), an action ({@code insert}, {@code return}, {@code change}, {@code delete},
     *               {@code absent}, {@code noop}, {@code delnoop}), {@link #REGRESSIONS} (rows to set aside before
     *               writing), or {@link #DELETION_TIME} (the batch's deletion time in the fourth column)
     * @param clear  empties the scratch table it fills (before another derivation)
     */
    public record Derivation(Statement derive, List<Statement> derived, Statement counts,
                             List<Statement> setAsideRegressions, List<Statement> clear) {
        public Derivation {
            derived = List.copyOf(derived);
            setAsideRegressions = List.copyOf(setAsideRegressions);
            clear = List.copyOf(clear);
        }

        /**
         * This derivation whose counts query also counts the rows of {@code query} (a row {@link #PROBED}, at
         * position 0), so that a check reading the same moment costs no statement of its own.
         */
        public Derivation counting(Statement query) {
            Statement both = Statement.builder(counts.step()).sql(counts).sql(" UNION ALL SELECT 0, '" + PROBED
                    + "', COUNT(*), NULL FROM (").sql(query).sql(") itersnap_probe").build();
            return new Derivation(derive, derived, both, setAsideRegressions, clear);
        }
    }
}
