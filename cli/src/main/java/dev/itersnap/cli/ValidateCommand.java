package dev.itersnap.cli;

import com.zaxxer.hikari.HikariDataSource;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.ValidatedModel;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

/** {@code itersnap validate}: checks the settings and the source query; writes nothing. */
@Command(name = "validate", mixinStandardHelpOptions = true,
        description = {"Checks a model's settings and its source query (--config), or those of the models of a "
                + "project folder (--project, one table for them all); writes nothing.",
                "The source runs (SELECT * FROM (source) s WHERE 1 = 0), unique_key, updated_at, sequence_by and "
                + "check_cols exist, sequence_by is a DATE, TIMESTAMP, integer, decimal or string column, "
                + "delete_when parses, every column type can be carried into the history exactly, no two columns "
                + "differ only by case, and every identifier fits the database's limit.",
                "Prints \"valid\" and the resolved columns, or exits 2 with one line naming the problem."})
public final class ValidateCommand implements Callable<Integer> {
    @Spec
    private CommandSpec spec;

    @Mixin
    private ConnectionOptions connection;

    @Mixin
    private ProjectOptions model;

    @Override
    public Integer call() {
        if (model.isProject()) {
            return validateProject();
        }
        ModelSettings settings = model.load();
        ValidatedModel m;
        try (HikariDataSource dataSource = connection.openReadOnly(settings)) {
            // the library's own checks, the ones a run makes before it writes; every problem is one line naming it
            m = connection.snapshots(dataSource, event -> { }).validate(settings);
        }
        PrintWriter out = spec.commandLine().getOut();
        out.println("valid: model " + settings.name() + " -> " + settings.target());
        out.println("  unique_key:  " + String.join(", ", m.uniqueKey()));
        out.println("  updated_at:  " + m.updatedAt());
        out.println("  sequence_by: " + String.join(", ", m.sequenceBy()) + " ("
                + (m.sequenceList() ? "list: " : "") + String.join(", ", m.sequenceTypes()) + ")");
        out.println("  strategy:    " + settings.strategy().name().toLowerCase(Locale.ROOT));
        out.println("  tracked:     " + String.join(", ", m.tracked()));
        if (settings.deleteWhen() != null) {
            out.println("  delete_when: " + settings.deleteWhen());
        }
        out.println("  source columns: " + String.join(", ", m.sourceColumns().stream()
                .map(col -> col.name() + " " + col.type()).toList()));
        out.flush();
        return ExitCodes.OK;
    }

    /** {@code validate --project}: every selected model, one table, the most severe exit code. */
    private int validateProject() {
        List<ProjectRun.Outcome<ValidatedModel>> outcomes = ProjectRun.execute(spec, connection, model, true,
                (snapshots, progress, settings) -> snapshots.validate(settings));
        List<List<String>> rows = new ArrayList<>();
        for (ProjectRun.Outcome<ValidatedModel> o : outcomes) {
            ValidatedModel m = o.result();
            rows.add(Arrays.asList(o.name(), m == null ? o.status().replace('_', ' ') : "valid",
                    String.valueOf(o.exitCode()), o.model().settings().target().toString(),
                    m == null ? RunCommand.shorten(o.error()) : "unique_key " + String.join(", ", m.uniqueKey())
                            + "; sequence_by " + String.join(", ", m.sequenceBy()) + "; tracked "
                            + String.join(", ", m.tracked())));
        }
        PrintWriter out = spec.commandLine().getOut();
        TablePrinter.print(out, List.of("model", "result", "exit", "target", "columns or error"), rows, false, false,
                true, false, false);
        out.println(ProjectRun.totals(outcomes, "valid"));
        out.flush();
        return ProjectRun.exitCode(outcomes);
    }
}
