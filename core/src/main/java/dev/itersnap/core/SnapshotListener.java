package dev.itersnap.core;

/**
 * Receives the events of runs. Called on the thread that runs the model, in order; must not throw (an exception is
 * logged and ignored). Implementations used with one engine from several threads must be thread-safe.
 */
@FunctionalInterface
public interface SnapshotListener {
    /** Receives one event of a run, on the run's thread. */
    void onEvent(SnapshotEvent event);

    /** The default listener: logs every event through SLF4J (logger {@code dev.itersnap}). */
    static SnapshotListener logging() {
        return Slf4jListener.INSTANCE;
    }

    /** Sends each event to this listener, then to {@code next}. */
    default SnapshotListener andThen(SnapshotListener next) {
        return e -> {
            onEvent(e);
            next.onEvent(e);
        };
    }
}
