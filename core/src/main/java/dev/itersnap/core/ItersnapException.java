package dev.itersnap.core;

import java.sql.SQLException;

/**
 * The one exception itersnap throws. Unchecked; {@link #code()} says what kind of failure it is. Database failures
 * keep the step of the run, the statement and the SQLState. Secrets in the message (a password or token of a JDBC URL
 * a driver quoted) are masked ({@link Secrets}).
 */
public class ItersnapException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final ErrorCode code;
    private final String step;
    private final String sql;
    private final String sqlState;

    /** A failure of the given kind; the message is masked of secrets. */
    public ItersnapException(ErrorCode code, String message) {
        this(code, message, null, null, null);
    }

    /** A failure of the given kind with its cause; the message is masked of secrets. */
    public ItersnapException(ErrorCode code, String message, Throwable cause) {
        this(code, message, null, null, cause);
    }

    /** A database failure: the engine step and the statement that failed, and the driver's exception. */
    public ItersnapException(ErrorCode code, String message, String step, String sql, Throwable cause) {
        super(Secrets.mask(message), cause); // messages reach logs, events and the run log: no secret in them
        this.code = code;
        this.step = step;
        this.sql = sql;
        this.sqlState = cause instanceof SQLException e ? e.getSQLState() : null;
    }

    /** The kind of failure. */
    public ErrorCode code() {
        return code;
    }

    /** The step of the run that failed (for example {@code apply}), or null. */
    public String step() {
        return step;
    }

    /** The statement that failed, or null. */
    public String sql() {
        return sql;
    }

    /** The SQLState of the underlying {@link SQLException}, or null. */
    public String sqlState() {
        return sqlState;
    }
}
