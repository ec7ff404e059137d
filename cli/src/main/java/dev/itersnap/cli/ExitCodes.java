package dev.itersnap.cli;

import dev.itersnap.core.ItersnapException;
import picocli.CommandLine;

import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The exit codes of the itersnap command, and which failure gets which. */
final class ExitCodes {
    static final int OK = 0;
    static final int FAILED = 1;
    static final int CONFIGURATION = 2;
    static final int LOCK_TIMEOUT = 3;
    static final int DATABASE = 4;
    /** {@code audit} ran and found at least one problem in the table. */
    static final int AUDIT_PROBLEMS = 5;
    /** The model's logic changed since its last successful run; nothing was written. */
    static final int LOGIC_CHANGE = 6;
    /** A batch at or before the point the history was adopted through arrived later; nothing was written. */
    static final int LATE_BEFORE_ADOPTION = 7;
    /** The history was edited by hand into a state no run leaves; nothing was written (or it was rolled back). */
    static final int HISTORY_EDITED = 8;

    /**
     * The order of severity of the codes, most severe first, for a command over many models ({@code --project}):
     * the codes that need a person (a configuration to fix, an edited history, a late batch before the adoption, a
     * logic change to decide on, an audit's problems) before the unknown failure, and that before the ones a retry
     * may cure (the database, a lock held by another run). Documented in docs/command-line.md.
     */
    static final List<Integer> SEVERITY = List.of(CONFIGURATION, HISTORY_EDITED, LATE_BEFORE_ADOPTION, LOGIC_CHANGE,
            AUDIT_PROBLEMS, FAILED, DATABASE, LOCK_TIMEOUT, OK);

    /** The most severe of {@code codes} by {@link #SEVERITY}; {@link #OK} when there is none. */
    static int mostSevere(java.util.Collection<Integer> codes) {
        return codes.stream().min(java.util.Comparator.comparingInt(c -> SEVERITY.contains(c) ? SEVERITY.indexOf(c)
                : SEVERITY.indexOf(FAILED))).orElse(OK);
    }

    /** For the {@code --help} text; keep in step with {@link #of(Throwable)}. */
    static final Map<String, String> HELP = help();

    private ExitCodes() {
    }

    private static Map<String, String> help() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put(" " + OK, "success");
        m.put(" " + FAILED, "any other failure, e.g. a source column type change the database cannot widen");
        m.put(" " + CONFIGURATION, "usage or configuration error: bad arguments, unreadable model file, invalid "
                + "setting, unusable source query, no JDBC driver or dialect for the database, a target the model "
                + "does not own (TARGET_NOT_OWNED)");
        m.put(" " + LOCK_TIMEOUT, "lock timeout: another run of the model held the lock longer than lock_timeout (on "
                + "DuckDB also: another process kept the database file open that long)");
        m.put(" " + DATABASE, "database error: cannot connect, or the database rejected a statement");
        m.put(" " + AUDIT_PROBLEMS, "audit, adopt: the audit ran and found at least one problem in the table (adopt: "
                + "nothing was written; --accept-problems adopts it anyway)");
        m.put(" " + LOGIC_CHANGE, "logic change: the model's settings changed since its last successful run; "
                + "nothing was written. Rebuild with replay --from SEQ, or run --accept-logic-change");
        m.put(" " + LATE_BEFORE_ADOPTION, "late before adoption: a batch at or before the point the history was "
                + "adopted through arrived (or changed) later; nothing was written (LATE_BEFORE_ADOPTION)");
        m.put(" " + HISTORY_EDITED, "history edited: keys the run would write are in a state no run leaves (versions "
                + "deleted, closed or reopened by hand), or a batch's versions are not as many as the ledger counts; "
                + "nothing was written. Rebuild with replay --from SEQ or full-refresh --yes (HISTORY_EDITED)");
        return m;
    }

    /** The exit code for a command that failed with {@code error}. */
    static int of(Throwable error) {
        if (error instanceof ConfigException || error instanceof CommandLine.ParameterException) {
            return CONFIGURATION;
        }
        if (error instanceof ItersnapException e) {
            return switch (e.code()) {
                case INVALID_SETTING, INVALID_SOURCE, INVALID_SEQUENCE, NO_DIALECT, TARGET_NOT_OWNED -> CONFIGURATION;
                case LOCK_TIMEOUT -> LOCK_TIMEOUT;
                case LOGIC_CHANGE -> LOGIC_CHANGE;
                case LATE_BEFORE_ADOPTION -> LATE_BEFORE_ADOPTION;
                case HISTORY_EDITED -> HISTORY_EDITED;
                case DATABASE_ERROR -> DATABASE;
                default -> FAILED;
            };
        }
        for (Throwable t = error; t != null; t = t.getCause()) {
            if (t instanceof SQLException) {
                return DATABASE;
            }
        }
        return FAILED;
    }
}
