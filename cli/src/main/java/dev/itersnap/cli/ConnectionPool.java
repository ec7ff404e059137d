package dev.itersnap.cli;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.core.Secrets;

import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.function.Consumer;

/** Opens the HikariCP pool a command works through. */
final class ConnectionPool {
    /** A run holds the model lock on one connection and works on another; one more for headroom. */
    static final int SIZE = 4;

    private ConnectionPool() {
    }

    /**
     * Opens a pool on {@code jdbcUrl}. Fails with a {@link ConfigException} when no driver accepts the URL or a
     * PostgreSQL or H2 URL carries a user and password before the host (those drivers take them for the host), and with
     * {@link ErrorCode#DATABASE_ERROR} when no connection can be made. {@code readOnly}: every connection is
     * read-only (the reading commands).
     *
     * <p>A DuckDB file that another process has open ("Could not set lock on file": DuckDB lets one process open a
     * file for writing) is waited for as a model lock held by another run is, retrying (50 ms growing to 1 s) for
     * {@code lockWait} (the model's {@code lock_timeout}), with one line to {@code waiting} when the wait begins; then
     * {@link ErrorCode#LOCK_TIMEOUT} (exit 3) naming the file and the process DuckDB names.
     */
    static HikariDataSource open(String jdbcUrl, String user, String password, boolean readOnly, Duration lockWait,
                                 Consumer<String> waiting) {
        return open(jdbcUrl, user, password, readOnly, SIZE, lockWait, waiting);
    }

    /** {@link #open(String, String, String, boolean, Duration, Consumer)} with a pool of {@code size} connections. */
    static HikariDataSource open(String jdbcUrl, String user, String password, boolean readOnly, int size,
                                 Duration lockWait, Consumer<String> waiting) {
        long deadline = System.nanoTime() + lockWait.toNanos();
        long pause = 50;
        boolean told = false;
        while (true) {
            try {
                return open(jdbcUrl, user, password, readOnly, size);
            } catch (ItersnapException e) {
                String held = fileLockHolder(e);
                if (held == null) {
                    throw e;
                }
                if (System.nanoTime() - deadline >= 0) {
                    throw new ItersnapException(ErrorCode.LOCK_TIMEOUT, "cannot open " + Secrets.mask(jdbcUrl)
                            + ": another process holds the DuckDB file (" + held + "), and it was not released "
                            + "within lock_timeout " + dev.itersnap.spi.ModelLock.describe(lockWait) + "; DuckDB "
                            + "lets one process open a file at a time: run the commands on one file one after "
                            + "another", e.getCause());
                }
                if (!told) {
                    waiting.accept("waiting for the DuckDB file: another process holds it (" + held + "); waiting "
                            + "up to lock_timeout " + dev.itersnap.spi.ModelLock.describe(lockWait));
                    told = true;
                }
                try {
                    Thread.sleep(Math.min(pause, Math.max(1, (deadline - System.nanoTime()) / 1_000_000)));
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
                pause = Math.min(1000, pause * 2);
            }
        }
    }

    /**
     * What DuckDB says of the process holding its file when {@code e} is its "Could not set lock on file" (the
     * conflicting lock and its process id), or null for any other failure.
     */
    static String fileLockHolder(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            String m = t.getMessage();
            if (t instanceof SQLException && m != null && m.contains("Could not set lock on file")) {
                int held = m.indexOf("Conflicting lock is held in ");
                if (held < 0) {
                    return "DuckDB: " + m.strip().lines().findFirst().orElse(m);
                }
                String holder = m.substring(held + "Conflicting lock is held in ".length());
                int end = holder.indexOf(". See also");
                return "held by " + (end < 0 ? holder : holder.substring(0, end)).strip();
            }
        }
        return null;
    }

    /** {@link #open(String, String, String, boolean, Duration, Consumer)} without waiting for a held DuckDB file. */
    static HikariDataSource open(String jdbcUrl, String user, String password, boolean readOnly) {
        return open(jdbcUrl, user, password, readOnly, SIZE);
    }

    private static HikariDataSource open(String jdbcUrl, String user, String password, boolean readOnly, int size) {
        if (Secrets.userInfoPassword(jdbcUrl) != null
                && (jdbcUrl.startsWith("jdbc:postgresql:") || jdbcUrl.startsWith("jdbc:h2:"))) {
            // the drivers read user:password@ as part of the host (and print it in their errors)
            throw new ConfigException("--jdbc-url " + Secrets.mask(jdbcUrl) + " carries a user and password before "
                    + "the host (user:***@host), which the " + (jdbcUrl.startsWith("jdbc:h2:") ? "H2"
                    : "PostgreSQL") + " driver does not read; remove them from the URL and pass --user and "
                    + "--password (or the ITERSNAP_PASSWORD environment variable)");
        }
        try {
            DriverManager.getDriver(jdbcUrl);
        } catch (SQLException e) {
            throw new ConfigException("no JDBC driver on the class path accepts " + Secrets.mask(jdbcUrl) + "; this jar bundles H2, "
                    + "PostgreSQL, Databricks and DuckDB. For another database run: java -cp itersnap.jar:<jdbc driver>.jar:<itersnap dialect>.jar "
                    + ItersnapCommand.class.getName() + " run ...", e);
        }
        HikariConfig config = new HikariConfig();
        config.setPoolName("itersnap");
        config.setJdbcUrl(jdbcUrl);
        config.setUsername(user);
        config.setPassword(password);
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(1);
        // DuckDB's driver has no read-only mode per connection and refuses the call ("Can't change read-only status
        // on connection level"); the reading commands write nothing either way
        config.setReadOnly(readOnly && !jdbcUrl.startsWith("jdbc:duckdb:"));
        try {
            return new HikariDataSource(config);
        } catch (RuntimeException e) {
            Throwable root = e;
            while (root.getCause() != null) {
                root = root.getCause();
            }
            throw new ItersnapException(ErrorCode.DATABASE_ERROR, "cannot connect to " + Secrets.mask(jdbcUrl) + ": "
                    + (root.getMessage() == null ? root : root.getMessage()), root);
        }
    }
}
