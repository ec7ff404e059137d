package dev.itersnap.cli;

import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.ItersnapException;
import picocli.CommandLine;

import java.io.PrintWriter;

/**
 * Turns a failed command into one line on stderr ({@code itersnap: <what went wrong>}) and its exit code; the stack
 * trace only with {@code --verbose}.
 */
final class ErrorReporter implements CommandLine.IExecutionExceptionHandler {

    @Override
    public int handleExecutionException(Exception error, CommandLine command, CommandLine.ParseResult parsed) {
        PrintWriter err = command.getErr();
        err.println("itersnap: " + describe(error));
        if (verbose(parsed)) {
            error.printStackTrace(err);
        }
        err.flush();
        return ExitCodes.of(error);
    }

    /** One line naming the problem. */
    static String describe(Throwable error) {
        String message = error.getMessage() == null ? error.getClass().getName() : error.getMessage();
        if (error instanceof ItersnapException e && e.code() == ErrorCode.DATABASE_ERROR && e.sqlState() != null
                && !message.contains(e.sqlState())) {
            message += " (SQLState " + e.sqlState() + ")";
        }
        return message.strip().replaceAll("\\s*\\R\\s*", " ");
    }

    private static boolean verbose(CommandLine.ParseResult parsed) {
        for (CommandLine.ParseResult p = parsed; p != null; p = p.subcommand()) {
            if (p.hasMatchedOption("--verbose")) {
                return true;
            }
        }
        return false;
    }
}
