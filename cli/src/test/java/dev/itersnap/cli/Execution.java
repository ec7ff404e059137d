package dev.itersnap.cli;

import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Arrays;
import java.util.List;

/** One in-process execution of the itersnap command, with its exit code and captured output. */
record Execution(int exitCode, String out, String err) {

    static Execution of(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = ItersnapCommand.commandLine();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        int code = cl.execute(args);
        return new Execution(code, out.toString(), err.toString());
    }

    /** The non-empty lines written to stderr. */
    List<String> errLines() {
        return Arrays.stream(err.split("\\R")).filter(l -> !l.isBlank()).toList();
    }
}
