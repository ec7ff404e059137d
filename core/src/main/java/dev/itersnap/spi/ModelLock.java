package dev.itersnap.spi;

/** The held lock of one model; {@link #close()} releases it. Used by one thread. */
public interface ModelLock extends AutoCloseable {
    /** Releases the lock; never throws. */
    @Override
    void close();
}
