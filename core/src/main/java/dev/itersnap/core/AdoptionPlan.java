package dev.itersnap.core;

import java.util.List;
import java.util.Objects;

/**
 * What an adoption of a model's target would do with the source's batches, read now from the source without writing
 * ({@link dev.itersnap.IterativeSnapshot#planAdopt}, {@link dev.itersnap.IterativeSnapshot#planAdoptRebuildingFrom}):
 * the point asked for, read as a sequence, and the batches. Sequences are shown as {@link RunPlan} shows them (a value
 * of the sequence's type; a list for a {@code sequence_by} list; {@link SequenceText} writes their text). It neither
 * audits the table nor makes the adoption's own checks (the table's columns and owner, the point against the source's
 * newest batch and the table's first version): the adoption makes them before it writes. Immutable.
 *
 * @param model      the model's name
 * @param point      the sequence asked for: the last batch the table holds, or the batch a rebuild starts from
 * @param rebuilding whether the adoption rebuilds the history from {@code point} on
 *                   ({@link dev.itersnap.IterativeSnapshot#adoptRebuildingFrom})
 * @param batches    in business order: through a point, the batches declared applied (the source's up to the point,
 *                   and the point itself); rebuilding, the source's batches from the point on, which the rebuild applies
 */
public record AdoptionPlan(String model, Object point, boolean rebuilding, List<Object> batches) {
    public AdoptionPlan {
        Objects.requireNonNull(model, "model");
        Objects.requireNonNull(point, "point");
        batches = List.copyOf(batches);
    }
}
