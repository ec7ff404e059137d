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
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
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
                + "nothing else. Prints one line per check; exits 0 when all pass, 2 when any fails.",
                "With --project, checks each model of a project folder and prints one table, a row per model with "
                + "its failed checks; each failed check is also a line on stderr."})
public final class DoctorCommand implements Callable<Integer> {
    @Spec
    private CommandSpec spec;

    @Mixin
    private ConnectionOptions connection;

    @Mixin
    private ProjectOptions model;

    @Override
    public Integer call() {
        if (model.isProject()) {
            return doctorProject();
        }
        ModelSettings settings = model.load();
        PrintWriter out = spec.commandLine().getOut();
        CheckReport report;
        try (HikariDataSource dataSource = connection.open(settings)) {
            report = connection.snapshots(dataSource, event -> { }).check(settings);
        } catch (RuntimeException e) {
            report = noConnection(settings, e);
        }
        out.println("doctor: model " + settings.name() + " -> " + settings.target());
        report.checks().forEach(c -> out.println(c));
        out.println(report.passed() ? "all " + report.checks().size() + " checks passed"
                : report.failures().size() + " of " + report.checks().size() + " checks failed");
        out.flush();
        return report.passed() ? ExitCodes.OK : ExitCodes.CONFIGURATION;
    }

    /** No connection, or no dialect for it: that is the first check failing. */
    private static CheckReport noConnection(ModelSettings settings, RuntimeException e) {
        return new CheckReport(settings.name(), List.of(Check.failed("connection",
                String.valueOf(e.getMessage()).lines().findFirst().orElse(e.toString()))));
    }

    /**
     * {@code doctor --project}: every selected model checked, one table (a row per model: how many checks passed,
     * the failed ones); a model with a failed check fails with exit code 2, as the command does for one model, and
     * a connection that cannot be made is each model's failed first check.
     */
    private int doctorProject() {
        List<ProjectRun.Outcome<CheckReport>> outcomes = ProjectRun.execute(spec, connection, model, false,
                (snapshots, progress, settings) -> {
                    try {
                        return snapshots.check(settings);
                    } catch (RuntimeException e) {
                        return noConnection(settings, e);
                    }
                },
                report -> report.passed() ? null : new ProjectRun.Failure(ExitCodes.CONFIGURATION,
                        report.failures().size() + " of " + report.checks().size() + " checks failed: "
                                + String.join("; ", report.failures().stream().map(c -> c.name() + ": "
                                + c.detail()).toList())),
                (m, e) -> noConnection(m.settings(), e));
        List<List<String>> rows = new ArrayList<>();
        for (ProjectRun.Outcome<CheckReport> o : outcomes) {
            CheckReport r = o.result();
            rows.add(Arrays.asList(o.name(), r == null ? o.status().replace('_', ' ') : r.passed() ? "passed"
                            : "failed", String.valueOf(o.exitCode()),
                    r == null ? null : (r.checks().size() - r.failures().size()) + " of " + r.checks().size(),
                    o.model().settings().target().toString(),
                    r == null ? RunCommand.shorten(o.error()) : RunCommand.shorten(String.join("; ", r.failures()
                            .stream().map(c -> c.name() + ": " + c.detail()).toList()))));
        }
        PrintWriter out = spec.commandLine().getOut();
        TablePrinter.print(out, List.of("model", "result", "exit", "checks ok", "target", "failed checks or error"),
                rows, false, false, true, true, false, false);
        out.println(ProjectRun.totals(outcomes, "passed"));
        out.flush();
        return ProjectRun.exitCode(outcomes);
    }
}
