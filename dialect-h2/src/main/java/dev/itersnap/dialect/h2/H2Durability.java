package dev.itersnap.dialect.h2;

import dev.itersnap.core.Check;
import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.ItersnapException;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * Makes a run's commits durable on H2: its {@code WRITE_DELAY} must be 0 (decision 0007).
 *
 * <p>With H2's default of 500 ms a commit returns before the store has written it; a process killed in that window
 * leaves a large transaction that H2 finishes at the next open, and H2 2.5 finishes it only in part: a history with a
 * fraction of the versions the committed ledger records, indexes that disagree with the table, and rows locked by a
 * transaction that no longer exists ("Timeout trying to lock table"). With 0 a commit writes the store before it
 * returns. The setting is the open database's, not saved with it (each open takes it from the URL, default 500), so a
 * run sets it whenever it finds it above 0; that needs admin rights, without which the run stops before writing.
 */
final class H2Durability {
    /** H2's error code for a statement that needs admin rights. */
    private static final int ADMIN_RIGHTS_REQUIRED = 90040;

    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger("dev.itersnap");

    private H2Durability() {
    }

    /**
     * The database's {@code WRITE_DELAY} in milliseconds, the largest of the rows named so (H2 lists the value in
     * effect and the one last set by {@code SET WRITE_DELAY}, which is not applied at the next open). 0 for an
     * in-memory database.
     */
    static long writeDelay(Connection c) throws SQLException {
        long delay = 0;
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT SETTING_VALUE FROM "
                + "INFORMATION_SCHEMA.SETTINGS WHERE SETTING_NAME = 'WRITE_DELAY'")) {
            while (rs.next()) {
                delay = Math.max(delay, Long.parseLong(rs.getString(1).trim()));
            }
        }
        return delay;
    }

    /**
     * Whether the open database is a file that reuses the space of dead chunks ({@code REUSE_SPACE}, a setting of the
     * URL, default true): after a kill, H2 2.2.220 to 2.5.252 may open an older state than the last commit (decision
     * 0007).
     */
    static boolean reusesSpace(Connection c) throws SQLException {
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT DATABASE_PATH(), (SELECT "
                + "SETTING_VALUE FROM INFORMATION_SCHEMA.SETTINGS WHERE SETTING_NAME = 'REUSE_SPACE')")) {
            return rs.next() && rs.getString(1) != null && !"false".equalsIgnoreCase(rs.getString(2));
        }
    }

    /**
     * Sets {@code WRITE_DELAY} to 0 when it is not (on a connection in auto-commit: the command commits). Refuses with
     * {@link ErrorCode#DATABASE_ERROR} when the user may not set it, naming the setting and the ways to set it.
     */
    static void requireDurableCommits(Connection c, String model) throws SQLException {
        long delay = writeDelay(c);
        if (delay == 0) {
            return;
        }
        try (Statement st = c.createStatement()) {
            st.execute("SET WRITE_DELAY 0");
        } catch (SQLException e) {
            if (e.getErrorCode() == ADMIN_RIGHTS_REQUIRED || "90040".equals(e.getSQLState())) {
                throw new ItersnapException(ErrorCode.DATABASE_ERROR, "model '" + model + "': H2's WRITE_DELAY is "
                        + delay + " ms, so a commit is not on disk when it returns, and a process killed then can "
                        + "leave the history with part of a run the ledger records; this user may not set it to 0 "
                        + "(SET WRITE_DELAY needs admin rights). Nothing was written. Open the database with "
                        + "WRITE_DELAY=0 in the URL as an admin (jdbc:h2:/path/db;WRITE_DELAY=0), or run as an "
                        + "admin user", "lock", "SET WRITE_DELAY 0", e);
            }
            throw e;
        }
        LOG.info("[{}] H2 WRITE_DELAY was {} ms: set to 0 until the database closes, so that a commit is durable "
                + "when it returns", model, delay);
    }

    /**
     * The {@code doctor} line: whether commits are durable, or a run will make them so, or cannot; and, on a file
     * that reuses space (H2's default), that H2 may still lose them to a kill (decision 0007).
     */
    static Check check(Connection c) throws SQLException {
        long delay = writeDelay(c);
        String reuse = reusesSpace(c) ? "; REUSE_SPACE TRUE: H2 (2.2.220 to 2.5.252 at least) can reopen a file whose "
                + "process was killed right after a commit without that commit, and 2.5 with a large one half applied "
                + "(;REUSE_SPACE=FALSE in the URL avoids it, and the file then only grows; see H2 in docs/dialects.md)"
                : "";
        if (delay == 0) {
            return Check.ok("write delay", "WRITE_DELAY 0: a commit is on disk when it returns" + reuse);
        }
        boolean admin;
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT IS_ADMIN FROM "
                + "INFORMATION_SCHEMA.USERS WHERE USER_NAME = CURRENT_USER")) {
            admin = rs.next() && rs.getBoolean(1);
        }
        return admin
                ? Check.ok("write delay", "WRITE_DELAY " + delay + " ms; each run sets it to 0 until the database "
                        + "closes (a commit must be on disk when it returns)" + reuse)
                : Check.failed("write delay", "WRITE_DELAY " + delay + " ms, and this user may not set it to 0 "
                        + "(admin rights): a run would stop. Open the database with ;WRITE_DELAY=0 in the URL as an "
                        + "admin, or run as an admin user");
    }
}
