package dev.itersnap.internal;

import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.SnapshotListener;
import dev.itersnap.internal.sql.SqlSteps;
import dev.itersnap.spi.Dialect;
import dev.itersnap.spi.ModelLock;

/**
 * What the parts of one {@link SnapshotRun} share and none of them changes: the connection, the dialect and the
 * engine's SQL on it, the listener, the model's settings, the run's id and operation (with the point a replay or an
 * adoption names, and the status the previous run left), the metadata store, the lock (null for a plan), whether the
 * database has transactional DML, and whether the run only plans. What a step finds it returns instead: the run holds
 * it and passes it on.
 */
record RunContext(Jdbc jdbc, Dialect dialect, SqlSteps sql, SnapshotListener listener, ModelSettings settings,
                  String runId, SnapshotRun.Operation operation, Object replayFrom, String previousStatus,
                  MetadataStore store, ModelLock lock, boolean transactional, boolean planning) {
}
