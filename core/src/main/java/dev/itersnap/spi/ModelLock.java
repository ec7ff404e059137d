package dev.itersnap.spi;

/** The held lock of one model; {@link #close()} releases it. Used by one thread. */
public interface ModelLock extends AutoCloseable {
    /** Releases the lock; never throws. */
    @Override
    void close();

    /**
     * Confirms, before the engine writes history, that the lock is still held, and throws
     * {@link dev.itersnap.core.ItersnapException} with code {@code LOCK_TIMEOUT} if it is not. Locks the database
     * releases only when their holder dies (sessions, advisory locks, row locks) cannot be lost and keep the default,
     * which does nothing; an expiring lease (Databricks) checks, and renews, its lease here, so a run that lost its
     * lease stops before its next write.
     */
    default void verifyHeld() {
    }

    /** A timeout as people write it: {@code 500ms}, {@code 2s}, {@code 10m}, {@code 1h30m}. */
    static String describe(java.time.Duration d) {
        if (d.toMillis() % 1000 != 0 || d.isZero()) {
            return d.toMillis() + "ms";
        }
        long s = d.getSeconds();
        StringBuilder b = new StringBuilder();
        if (s >= 3600) {
            b.append(s / 3600).append('h');
            s %= 3600;
        }
        if (s >= 60) {
            b.append(s / 60).append('m');
            s %= 60;
        }
        if (s > 0) {
            b.append(s).append('s');
        }
        return b.toString();
    }
}
