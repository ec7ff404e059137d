package dev.itersnap.cli;

import dev.itersnap.spi.ValueType;

import java.util.List;
import java.util.stream.Collectors;

/**
 * Renders sequence values as the ledger stores them: ISO-8601 for dates and times ({@code toString} of java.time),
 * plain digits for numbers.
 */
final class SequenceText {
    private SequenceText() {
    }

    static String of(Object sequence) {
        return ValueType.text(sequence);
    }

    static String of(List<?> sequences) {
        return sequences.stream().map(SequenceText::of).collect(Collectors.joining(", "));
    }
}
