package dev.itersnap.spi;

import dev.itersnap.core.TableName;

import java.util.List;

/**
 * How a database's planner is helped to the plans the engine's statements assume, where it would not find them
 * alone: probes of the source's indexes behind a check of the catalog, another form of a join, statistics of a
 * scratch table once it is filled. Optional ({@link Dialect#planHints}); every method may answer null (or nothing),
 * and the engine then runs its own form. A hint changes how rows are found, never which: the rows a hinted form gives
 * must be exactly those of the engine's form (a dialect's tests compare both).
 */
public interface PlanHints {
    /**
     * The batches table's boolean column (a name, before {@link ModelView#id}): the batch is already applied and a
     * key-scoped replay stages its rows only for the keys it recomputes.
     */
    String REPLAYED = "itersnap_replayed";

    /**
     * The keys table's column (a name, before {@link ModelView#id}): 1 for a key a key-scoped replay computes again
     * from the start of the run.
     */
    String RECOMPUTED_FROM = "itersnap_from";

    /** No hints: every statement as the engine writes it. */
    PlanHints NONE = new PlanHints() { };

    /**
     * The discovery of the source's distinct sequences (one column; NULL once when some rows have none), in place of
     * {@code SELECT DISTINCT} over {@code relation} (a quoted table name, or a derived table in parentheses). Null:
     * the engine's form.
     */
    default Statement discoverSequences(ModelView m, String relation) {
        return null;
    }

    /**
     * The source rows a key-scoped replay stages (alias {@code s0}, every source column, as a relation for
     * {@code FROM}), in place of {@code joined}, the engine's joins of {@code relation} with the batches table
     * ({@link StageScope#FRESH}) or with the batches and keys tables ({@link StageScope#REPLAYED_KEYS}); {@code from}
     * names the slot of the first replayed sequence. Null: {@code joined}.
     */
    default String scopedRows(ModelView m, String relation, StageScope scope, String from, String joined) {
        return null;
    }

    /**
     * What the timeline check reads after {@code FROM}: the history rows {@code h} of the keys with a version opened
     * or closed from the sequence expression {@code p} on. Null: the engine's form (the touched keys collected by a
     * union, joined to their versions).
     */
    default String touchedVersions(ModelView m, String p) {
        return null;
    }

    /**
     * Statements that give the planner statistics of scratch table {@code table} once a run has filled it (the stage,
     * the keys table, the work table); run in the run's transaction. Default: none.
     */
    default List<Statement> statistics(TableName table) {
        return List.of();
    }
}
