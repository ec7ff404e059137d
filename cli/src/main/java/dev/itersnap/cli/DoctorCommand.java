package dev.itersnap.cli;

import com.zaxxer.hikari.HikariDataSource;
import dev.itersnap.core.Check;
import dev.itersnap.core.CheckReport;
import dev.itersnap.core.ModelSettings;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.concurrent.Callable;

/** {@code itersnap doctor}: what a first run of the model will need, checked and printed (IterativeSnapshot.check). */
@Command(name = "doctor", mixinStandardHelpOptions = true,
        description = {"Checks, before a first run on a new workspace or database, what a run of the model will need:",
                "the connection and driver version, the runtime or server version and session time zone (as the "
                + "dialect requires), the source query and the collation of its string columns, the permission to "
                + "create the metadata schema and a table in it and in the target's schema (with the table features "
                + "itersnap uses), the binding of every value type, written to a probe table and read back, and, once the "
                + "model has a history and a ledger, whether a run would refuse it as edited by hand (history).",
                "Creates and drops one probe table (itersnap_probe_<model>) in each of those schemas; writes "
                + "nothing else. Prints one line per check; exits 0 when all pass, 2 when any fails."})
public final class DoctorCommand implements Callable<Integer> {
    @Spec
    private CommandSpec spec;

    @Mixin
    private ConnectionOptions connection;

    @Mixin
    private ModelOption model;

    @Override
    public Integer call() {
        ModelSettings settings = model.load();
        PrintWriter out = spec.commandLine().getOut();
        CheckReport report;
        try (HikariDataSource dataSource = connection.open(settings)) {
            report = connection.snapshots(dataSource, event -> { }).check(settings);
        } catch (RuntimeException e) {
            // no connection, or no dialect for it: that is the first check failing
            report = new CheckReport(settings.name(), java.util.List.of(Check.failed("connection",
                    String.valueOf(e.getMessage()).lines().findFirst().orElse(e.toString()))));
        }
        out.println("doctor: model " + settings.name() + " -> " + settings.target());
        report.checks().forEach(c -> out.println(c));
        out.println(report.passed() ? "all " + report.checks().size() + " checks passed"
                : report.failures().size() + " of " + report.checks().size() + " checks failed");
        out.flush();
        return report.passed() ? ExitCodes.OK : ExitCodes.CONFIGURATION;
    }
}
