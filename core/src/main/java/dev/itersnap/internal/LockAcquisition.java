package dev.itersnap.internal;

import dev.itersnap.core.SnapshotEvent;
import dev.itersnap.core.SnapshotListener;
import dev.itersnap.spi.Dialect;
import dev.itersnap.spi.lease.LeaseLock;
import dev.itersnap.spi.ModelLock;

import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import javax.sql.DataSource;

/**
 * Takes a run's model lock through the dialect, with two things a person waiting for it needs: a failure to get the
 * lock's connection says that a run holds two connections at once (one for the lock, one for its work, which it holds
 * already), so a pool of one is recognised as such; and a wait longer than {@link #NOTICE_AFTER} is reported once
 * ({@link SnapshotEvent.WaitingForLock}, naming the holder) instead of a silence up to {@code lock_timeout}. A lock
 * taken in attempts (a lease, {@link LeaseLock.Attempts}) counts as waited for only once an attempt has found it held
 * by another run: a slow attempt of its own (a Delta MERGE of seconds) is no wait, and costs no read of the run log.
 */
final class LockAcquisition {
    /** How long a run waits for the lock before it says so. */
    static final Duration NOTICE_AFTER = Duration.ofSeconds(2);

    private LockAcquisition() {
    }

    /**
     * The dialect's lock of {@code m}. {@code describeHolder} reads the run log on the run's work connection, which is
     * idle meanwhile; the notice and the return are serialised, so that connection is never used by two threads.
     */
    static ModelLock take(Dialect dialect, DataSource dataSource, ResolvedModel m, Duration timeout, String runId,
                          Supplier<String> describeHolder, SnapshotListener listener) throws SQLException {
        Notice notice = new Notice(m.name(), runId, describeHolder, listener, System.nanoTime());
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "itersnap-lock-wait-" + m.name());
            t.setDaemon(true);
            return t;
        });
        timer.schedule(notice::due, NOTICE_AFTER.toMillis(), TimeUnit.MILLISECONDS);
        try {
            return dialect.lock(new LockConnections(dataSource, m.name()), m, timeout, notice);
        } finally {
            notice.done();
            timer.shutdownNow();
        }
    }

    /**
     * The notice of one acquisition, said at most once: when {@link #NOTICE_AFTER} has passed (the timer) and, for a
     * lock taken in attempts, an attempt has found it held by another run (whichever comes last). Every method holds
     * the monitor, so the notice and the end of the acquisition never overlap.
     */
    private static final class Notice implements LeaseLock.Attempts {
        private final String model;
        private final String runId;
        private final Supplier<String> describeHolder;
        private final SnapshotListener listener;
        private final long start;
        private boolean due;
        private boolean inAttempts;
        private boolean held;
        private boolean over;

        Notice(String model, String runId, Supplier<String> describeHolder, SnapshotListener listener, long start) {
            this.model = model;
            this.runId = runId;
            this.describeHolder = describeHolder;
            this.listener = listener;
            this.start = start;
        }

        /** The holder, for a timeout's message. */
        @Override
        public String get() {
            return describeHolder.get();
        }

        @Override
        public synchronized void attempting() {
            inAttempts = true;
        }

        @Override
        public synchronized void heldByAnother() {
            held = true;
            sayIfWaiting();
        }

        synchronized void due() {
            due = true;
            sayIfWaiting();
        }

        synchronized void done() {
            over = true;
        }

        private void sayIfWaiting() {
            if (over || !due || (inAttempts && !held)) {
                return;
            }
            over = true; // once
            listener.onEvent(new SnapshotEvent.WaitingForLock(model, runId, describeHolder.get(),
                    Duration.ofNanos(System.nanoTime() - start)));
        }
    }

    /** The run's data source, whose failure to hand out a connection names the two connections a run needs. */
    private record LockConnections(DataSource delegate, String model) implements DataSource {
        @Override
        public Connection getConnection() throws SQLException {
            try {
                return delegate.getConnection();
            } catch (SQLException e) {
                throw explained(e);
            }
        }

        @Override
        public Connection getConnection(String user, String password) throws SQLException {
            try {
                return delegate.getConnection(user, password);
            } catch (SQLException e) {
                throw explained(e);
            }
        }

        private SQLException explained(SQLException e) {
            return new SQLException("cannot get a second connection, for the model lock: "
                    + Jdbc.firstLine(e.getMessage()) + ". A run of model '" + model + "' holds two connections at "
                    + "once, one for the model lock and one for its work: give the data source or pool two "
                    + "connections for every run at the same time (HikariCP: maximumPoolSize 2 or more)",
                    e.getSQLState(), e.getErrorCode(), e);
        }

        @Override
        public PrintWriter getLogWriter() throws SQLException {
            return delegate.getLogWriter();
        }

        @Override
        public void setLogWriter(PrintWriter out) throws SQLException {
            delegate.setLogWriter(out);
        }

        @Override
        public void setLoginTimeout(int seconds) throws SQLException {
            delegate.setLoginTimeout(seconds);
        }

        @Override
        public int getLoginTimeout() throws SQLException {
            return delegate.getLoginTimeout();
        }

        @Override
        public java.util.logging.Logger getParentLogger() throws SQLFeatureNotSupportedException {
            return delegate.getParentLogger();
        }

        @Override
        public <T> T unwrap(Class<T> type) throws SQLException {
            return type.isInstance(delegate) ? type.cast(delegate) : delegate.unwrap(type);
        }

        @Override
        public boolean isWrapperFor(Class<?> type) throws SQLException {
            return type.isInstance(delegate) || delegate.isWrapperFor(type);
        }
    }
}
