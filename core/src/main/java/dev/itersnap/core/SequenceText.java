package dev.itersnap.core;

/** The canonical text of a sequence or time value, as the ledger stores it (ISO-8601, plain digits). */
final class SequenceText {
    private SequenceText() {
    }

    static String of(Object v) {
        if (v == null) {
            return null;
        }
        return dev.itersnap.spi.ValueType.text(v);
    }
}
