package dev.itersnap.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;
import picocli.CommandLine.Spec;

import java.io.PrintStream;
import java.util.List;

/** {@code itersnap}: the top-level command; the work is done by its subcommands. */
@Command(name = "itersnap", mixinStandardHelpOptions = true, versionProvider = ItersnapCommand.Version.class,
        description = "Keeps SCD Type 2 history tables correct when batches arrive late or out of order.",
        subcommands = {DemoCommand.class, RunCommand.class, ReplayCommand.class, FullRefreshCommand.class,
                StatusCommand.class, ValidateCommand.class, DoctorCommand.class, AuditCommand.class, AdoptCommand.class,
                AsOfCommand.class,
                CommandLine.HelpCommand.class})
public final class ItersnapCommand implements Runnable {
    @Spec
    private CommandSpec spec;

    @Option(names = "--verbose", scope = ScopeType.INHERIT, description = "print the stack trace of a failure")
    private boolean verbose;

    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    /** The command line, ready to {@link CommandLine#execute execute}; never exits the JVM itself. */
    public static CommandLine commandLine() {
        CommandLine cl = new CommandLine(new ItersnapCommand())
                .setExecutionExceptionHandler(new ErrorReporter());
        // every output of the command (stdout, stderr, the error line, log lines and whatever else reaches
        // System.out or System.err while it runs) masks the secrets its own arguments carry
        cl.setExecutionStrategy(parsed -> {
            // what picocli cannot say in annotations: --config or --project, --jdbc-url unless a project's profile
            Arguments.check(parsed);
            List<String> secrets = MaskingWriter.shared(MaskingWriter.secrets(parsed));
            cl.setOut(MaskingWriter.wrap(cl.getOut(), secrets));
            cl.setErr(MaskingWriter.wrap(cl.getErr(), secrets));
            PrintStream out = System.out;
            PrintStream err = System.err;
            System.setOut(MaskingWriter.stream(out, secrets));
            System.setErr(MaskingWriter.stream(err, secrets));
            try {
                return new CommandLine.RunLast().execute(parsed);
            } finally {
                System.out.flush();
                System.err.flush();
                System.setOut(out);
                System.setErr(err);
            }
        });
        java.util.List<CommandLine> withExitCodes = new java.util.ArrayList<>(cl.getSubcommands().values());
        withExitCodes.add(cl);
        for (CommandLine c : withExitCodes) {
            c.getCommandSpec().usageMessage().exitCodeListHeading("%nExit codes:%n").exitCodeList(ExitCodes.HELP);
        }
        return cl;
    }

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "missing command: demo, run, replay, full-refresh, status, validate, doctor, audit or as-of");
    }

    /** The version from the jar's manifest, when there is one. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = ItersnapCommand.class.getPackage().getImplementationVersion();
            return new String[] {"itersnap " + (v == null ? "(development build)" : v)};
        }
    }
}
