package dev.itersnap.cli;

import java.math.BigDecimal;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.stream.Collectors;

/** Renders sequence values as text: ISO-8601 for dates and times, plain digits for numbers. */
final class SequenceText {
    private SequenceText() {
    }

    static String of(Object sequence) {
        if (sequence == null) {
            return null;
        }
        if (sequence instanceof LocalDateTime t) {
            return DateTimeFormatter.ISO_LOCAL_DATE_TIME.format(t);
        }
        if (sequence instanceof BigDecimal d) {
            return d.toPlainString();
        }
        return sequence.toString();
    }

    static String of(List<?> sequences) {
        return sequences.stream().map(SequenceText::of).collect(Collectors.joining(", "));
    }
}
