package dev.itersnap.cli;

import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.core.Secrets;
import picocli.CommandLine;

import java.io.PrintWriter;

/**
 * Turns a failed command into one line on stderr ({@code itersnap: <what went wrong>}) and its exit code; the stack
 * trace only with {@code --verbose}. Secrets (passwords, tokens, the password of the URL's user information wherever a
 * driver quotes it) are masked in both.
 */
final class ErrorReporter implements CommandLine.IExecutionExceptionHandler {

    @Override
    public int handleExecutionException(Exception error, CommandLine command, CommandLine.ParseResult parsed) {
        PrintWriter err = command.getErr();
        java.util.List<String> secrets = MaskingWriter.secrets(parsed);
        err.println("itersnap: " + Secrets.mask(describe(error), secrets));
        if (verbose(parsed)) {
            java.io.StringWriter trace = new java.io.StringWriter();
            error.printStackTrace(new PrintWriter(trace));
            // the causes' messages may quote a URL with its password, or the password alone
            err.print(Secrets.mask(trace.toString(), secrets));
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
        return Secrets.mask(message.strip().replaceAll("\\s*\\R\\s*", " "));
    }

    static boolean verbose(CommandLine.ParseResult parsed) {
        for (CommandLine.ParseResult p = parsed; p != null; p = p.subcommand()) {
            if (p.hasMatchedOption("--verbose")) {
                return true;
            }
        }
        return false;
    }
}
