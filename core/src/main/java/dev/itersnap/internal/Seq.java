package dev.itersnap.internal;

import dev.itersnap.spi.ValueType;

/** A sequence value with its type: compared typed (numbers as numbers, strings by code point), stored as text. */
record Seq(ValueType type, Object value) implements Comparable<Seq> {
    Seq {
        value = type.normalize(value);
    }

    static Seq parse(ValueType type, String text) {
        return new Seq(type, type.coerce(text));
    }

    String text() {
        return type.format(value);
    }

    @Override
    public int compareTo(Seq o) {
        return type.compare(value, o.value);
    }

    @Override
    public String toString() {
        return text();
    }
}
