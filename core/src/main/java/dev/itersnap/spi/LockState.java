package dev.itersnap.spi;

/**
 * What the database says about a model's lock now, observed without taking it or waiting for it ({@link
 * Dialect#lockState}; {@code itersnap status}). A run killed without closing its lock leaves its run log row
 * {@code running}; only the lock itself tells whether a live process still holds it.
 *
 * @param held   whether a live process holds the lock
 * @param holder what the database tells of the holder (a lease's owner and expiry, a session), or of a lease a dead
 *               run left; null when it tells nothing
 */
public record LockState(Held held, String holder) {
    /** Whether the lock is held. */
    public enum Held {
        /** A live process holds it (a session of the database, or a lease that has not expired). */
        HELD,
        /** Nobody holds it: a run that did not release it died, and its lock went with it (or expired). */
        FREE,
        /** This dialect cannot observe its lock without taking it. */
        UNKNOWN
    }

    /** A dialect that cannot observe its lock. */
    public static LockState unknown() {
        return new LockState(Held.UNKNOWN, null);
    }
}
