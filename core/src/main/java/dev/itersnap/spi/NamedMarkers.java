package dev.itersnap.spi;

/**
 * Marks a JDBC connection that binds named parameter markers {@code :_p1 … :_pN} instead of {@code ?}: a connection
 * for which {@code isWrapperFor(NamedMarkers.class)} is true gets every {@link Statement} rendered with them, and the
 * value set at index i is bound to {@code :_pi}. Used by connections over engines whose positional binding cannot be
 * trusted (Spark 4.2.0 misorders five or more positional values); ordinary drivers need nothing.
 */
public interface NamedMarkers {
    /** The marker of the i-th value, from 1: {@code :_pi}. */
    static String marker(int i) {
        return ":_p" + i;
    }

    /** The name the i-th value is bound to, from 1: {@code _pi}. */
    static String name(int i) {
        return "_p" + i;
    }
}
