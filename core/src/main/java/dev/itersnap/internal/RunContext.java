package dev.itersnap.internal;

import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.SnapshotListener;
import dev.itersnap.internal.sql.SqlSteps;
import dev.itersnap.spi.Dialect;
import dev.itersnap.spi.ModelLock;

/**
 * What the parts of one {@link SnapshotRun} share: the connection, the dialect and the engine's SQL on it, the
 * listener, the model's settings, the run's id and operation (with the point a replay or an adoption names, and the
 * status the previous run left), the metadata store, the lock once the run holds it ({@link Phase}: none while it only
 * decides), and whether the database has transactional DML. What a step finds it returns instead: the run holds
 * it and passes it on.
 */
record RunContext(Jdbc jdbc, Dialect dialect, SqlSteps sql, SnapshotListener listener, ModelSettings settings,
                  String runId, SnapshotRun.Operation operation, Object replayFrom, String previousStatus,
                  MetadataStore store, Phase phase, boolean transactional) {

    /** The lock; null while the run only decides ({@link #planning}). */
    ModelLock lock() {
        return phase.lock;
    }

    /** True while the run only decides: a plan, or a run deciding before it takes the lock; it writes nothing. */
    boolean planning() {
        return phase.lock == null;
    }

    /**
     * Whether a run holds its lock: none while it decides (a plan throughout, a run before it takes the lock), the
     * lock once taken ({@link #holding}). The one part of the context that changes, once.
     */
    static final class Phase {
        private ModelLock lock;

        Phase(ModelLock lock) {
            this.lock = lock;
        }

        /** The run took {@code lock}: from now on it writes under it. */
        void holding(ModelLock lock) {
            if (this.lock != null || lock == null) {
                throw new IllegalStateException("a run takes its lock once");
            }
            this.lock = lock;
        }

        ModelLock lock() {
            return lock;
        }
    }
}
