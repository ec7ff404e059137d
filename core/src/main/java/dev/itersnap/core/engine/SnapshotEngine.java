package dev.itersnap.core.engine;

import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.RunResult;
import dev.itersnap.core.SnapshotListener;
import dev.itersnap.spi.Dialect;

import javax.sql.DataSource;

/** Runs one model: the algorithm of SPEC §4. Internal; use {@link dev.itersnap.core.IterativeSnapshot}. */
public final class SnapshotEngine {
    public SnapshotEngine(DataSource dataSource, Dialect dialect, SnapshotListener listener, ModelSettings model) {
    }

    public RunResult run() {
        throw new UnsupportedOperationException("engine under construction");
    }

    public RunResult fullRefresh() {
        throw new UnsupportedOperationException("engine under construction");
    }

    public RunResult replayFrom(Object sequence) {
        throw new UnsupportedOperationException("engine under construction");
    }
}
