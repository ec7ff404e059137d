package dev.itersnap.cli;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.core.Secrets;

import java.sql.DriverManager;
import java.sql.SQLException;

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
     */
    static HikariDataSource open(String jdbcUrl, String user, String password, boolean readOnly) {
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
                    + "PostgreSQL and Databricks. For another database run: java -cp itersnap.jar:<jdbc driver>.jar:<itersnap dialect>.jar "
                    + ItersnapCommand.class.getName() + " run ...", e);
        }
        HikariConfig config = new HikariConfig();
        config.setPoolName("itersnap");
        config.setJdbcUrl(jdbcUrl);
        config.setUsername(user);
        config.setPassword(password);
        config.setMaximumPoolSize(SIZE);
        config.setMinimumIdle(1);
        config.setReadOnly(readOnly);
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
