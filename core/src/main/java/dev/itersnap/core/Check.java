package dev.itersnap.core;

/**
 * One line of a pre-flight check ({@code IterativeSnapshot.check}, {@code itersnap doctor}): what was checked,
 * whether it passed, and what was found (a version, a type, the reason it failed and what to do).
 *
 * @param name   short name, e.g. {@code connection}, {@code binding}, {@code session time zone}
 * @param passed whether the run will have what it needs here
 * @param detail what was found
 */
public record Check(String name, boolean passed, String detail) {
    /** A check that passed. */
    public static Check ok(String name, String detail) {
        return new Check(name, true, detail);
    }

    /** A check that failed. */
    public static Check failed(String name, String detail) {
        return new Check(name, false, detail);
    }

    /** {@code ok    name: detail} or {@code FAIL  name: detail}. */
    @Override
    public String toString() {
        return (passed ? "ok    " : "FAIL  ") + name + ": " + detail;
    }
}
