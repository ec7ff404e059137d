package dev.itersnap.core;

import java.math.BigDecimal;

/** Canonical text of sequence values, the form the ledger stores. */
final class SequenceFormat {
    private SequenceFormat() {
    }

    static String text(Object sequence) {
        if (sequence == null) {
            return null;
        }
        return sequence instanceof BigDecimal d ? d.toPlainString() : sequence.toString();
    }
}
