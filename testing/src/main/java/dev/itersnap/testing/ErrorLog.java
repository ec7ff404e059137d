package dev.itersnap.testing;

import java.util.List;

/**
 * The rows a model set aside instead of applying them (its error log), as read after a run. Immutable. Assert on it
 * with {@link ItersnapAssertions#assertThat(ErrorLog)}.
 *
 * @param rows every row set aside, in no particular order
 */
public record ErrorLog(List<SetAsideRow> rows) {
    /** Copies the list. */
    public ErrorLog {
        rows = List.copyOf(rows);
    }
}
