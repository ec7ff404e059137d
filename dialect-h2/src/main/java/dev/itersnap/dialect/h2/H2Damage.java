package dev.itersnap.dialect.h2;

import dev.itersnap.spi.DriverMessages;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Recognises a failure that says an H2 file is damaged, and says so with the way out (decision 0007): H2's recovery
 * tool, {@code org.h2.tools.Recover}, on the file named.
 *
 * <p>The signs, anywhere in the failure's causes: H2's error 90030 (FILE_CORRUPTED_1), error 90143
 * (ROW_NOT_FOUND_IN_PRIMARY_INDEX: an index holds a row the table does not, which H2 retries as if a concurrent
 * update were in the way and then reports as "Timeout trying to lock table"), and the MVStore's own errors for a
 * damaged file ({@code [2.5.252/6]}: file corrupt, 9: chunk not found, 50: block not found, 100: transaction
 * corrupt). H2's retry of 90143 lasts the session's {@code LOCK_TIMEOUT} (2 s unless the URL sets another). And any
 * error thrown while the MVStore reads its own header or a chunk's description when it opens the file (a chunk's
 * hexadecimal fields overwritten: error 90004 from {@code Chunk.<init>} under {@code readStoreHeader}): what it parses
 * there is the file's own structure, never data of a statement.
 */
final class H2Damage {
    /** H2's error codes that mean a damaged file: FILE_CORRUPTED_1, ROW_NOT_FOUND_IN_PRIMARY_INDEX. */
    private static final Set<Integer> DAMAGE = Set.of(90030, 90143);
    /** The MVStore's error codes (DataUtils.ERROR_...) for a damaged file. */
    private static final Set<Integer> STORE_DAMAGE = Set.of(6, 9, 50, 100);
    /** H2's code at the end of a message of its own exceptions: {@code ... [90143-252]}. */
    private static final Pattern H2_CODE = Pattern.compile("\\[(\\d{5})-\\d+]");
    /** The MVStore's: {@code ... [2.5.252/6]}. */
    private static final Pattern STORE_CODE = Pattern.compile("\\[\\d+(?:\\.\\d+)*/(\\d+)]");

    /** A file H2 names in a message: {@code "/path/name.mv.db"}. */
    private static final Pattern FILE = Pattern.compile("\"([^\"]+)\\.mv\\.db\"");

    private H2Damage() {
    }

    /** The sentence a run reports for {@code failure} when it says the file is damaged, else null. */
    static String describe(SQLException failure, Connection connection) {
        Throwable sign = sign(failure);
        if (sign == null) {
            return null;
        }
        String path = databasePath(connection);
        if (path == null) { // no connection (the file would not open): H2 names the file in its message
            Matcher named = FILE.matcher(String.valueOf(failure.getMessage()));
            path = named.find() ? named.group(1) : null;
        }
        String file = path == null ? "the H2 database file" : "the H2 database file " + path + ".mv.db";
        String recover = path == null ? "-dir <its folder> -db <its name>"
                : "-dir " + folder(path) + " -db " + name(path);
        String script = path == null ? "<its name>.h2.sql" : quoted(path + ".h2.sql");
        return file + " is damaged (H2: " + DriverMessages.firstLine(sign.getMessage()) + "); running again does not "
                + "repair it. H2 2.5 leaves a file so when a process using it is killed during or shortly after a "
                + "large commit (see H2 in docs/dialects.md). Stop every process that uses the file, then rebuild it "
                + "with H2's recovery tool: java -cp h2-<version>.jar org.h2.tools.Recover " + recover + " writes its "
                + "data as SQL to " + script + ", and java -cp h2-<version>.jar org.h2.tools.RunScript -url "
                + "jdbc:h2:<new file> -script " + script + " makes a new database of it (or restore a backup); a run "
                + "on the new file checks what an unfinished run recorded";
    }

    /** The cause that shows the damage, or null. */
    static Throwable sign(Throwable failure) {
        int depth = 0;
        for (Throwable t = failure; t != null && depth < 20; t = t.getCause(), depth++) {
            if (t instanceof SQLException e && DAMAGE.contains(e.getErrorCode())) {
                return t;
            }
            if (readingTheStore(t)) {
                return t;
            }
            String message = t.getMessage();
            if (message == null) {
                continue;
            }
            Matcher h2 = H2_CODE.matcher(message);
            while (h2.find()) {
                if (DAMAGE.contains(Integer.parseInt(h2.group(1)))) {
                    return t;
                }
            }
            Matcher store = STORE_CODE.matcher(message);
            while (store.find()) {
                if (STORE_DAMAGE.contains(Integer.parseInt(store.group(1)))) {
                    return t;
                }
            }
        }
        return null;
    }

    /** Whether {@code t} was thrown while the MVStore read its header or a chunk's description. */
    private static boolean readingTheStore(Throwable t) {
        for (StackTraceElement frame : t.getStackTrace()) {
            String type = frame.getClassName();
            if (type.startsWith("org.h2.mvstore.") && (frame.getMethodName().equals("readStoreHeader")
                    || type.endsWith("Chunk") && frame.getMethodName().equals("<init>"))) {
                return true;
            }
        }
        return false;
    }

    /** The database's path without {@code .mv.db} ({@code DATABASE_PATH()}), or null (in memory, no connection). */
    private static String databasePath(Connection c) {
        if (c == null) {
            return null;
        }
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT DATABASE_PATH()")) {
            return rs.next() ? rs.getString(1) : null;
        } catch (SQLException | RuntimeException e) {
            return null; // the message goes without the file's name
        }
    }

    private static String folder(String path) {
        java.nio.file.Path parent = java.nio.file.Path.of(path).getParent();
        return quoted(parent == null ? "." : parent.toString());
    }

    private static String name(String path) {
        return quoted(java.nio.file.Path.of(path).getFileName().toString());
    }

    /** A command-line argument as a shell reads it whole. */
    private static String quoted(String arg) {
        return arg.matches("[A-Za-z0-9_./:@%+=,-]+") ? arg : "'" + arg.replace("'", "'\\''") + "'";
    }
}
