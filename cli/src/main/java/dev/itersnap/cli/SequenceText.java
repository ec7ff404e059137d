package dev.itersnap.cli;

import java.math.BigDecimal;
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
        if (sequence == null) {
            return null;
        }
        return sequence instanceof BigDecimal d ? d.toPlainString() : sequence.toString();
    }

    static String of(List<?> sequences) {
        return sequences.stream().map(SequenceText::of).collect(Collectors.joining(", "));
    }
}
