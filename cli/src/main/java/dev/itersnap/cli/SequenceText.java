package dev.itersnap.cli;

import java.util.List;
import java.util.stream.Collectors;

/**
 * Renders sequence values as the ledger stores them: ISO-8601 for dates and times ({@code toString} of java.time),
 * plain digits for numbers, a {@code sequence_by} list as {@code (2024-03-01, 3)} (the library's
 * {@link dev.itersnap.core.SequenceText}).
 */
final class SequenceText {
    private SequenceText() {
    }

    static String of(Object sequence) {
        return dev.itersnap.core.SequenceText.of(sequence);
    }

    static String of(List<?> sequences) {
        return sequences.stream().map(SequenceText::of).collect(Collectors.joining(", "));
    }
}
