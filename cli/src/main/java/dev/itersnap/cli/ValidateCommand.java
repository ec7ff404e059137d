package dev.itersnap.cli;

import com.zaxxer.hikari.HikariDataSource;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.spi.ResolvedModel;
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
        ResolvedModel m;
        try (HikariDataSource dataSource = connection.openReadOnly(settings)) {
            // the library's own checks, the ones a run makes before it writes; every problem is one line naming it
            m = connection.snapshots(dataSource, event -> { }).validate(settings);
        }
        ModelSequences sequence = new ModelSequences(m);
        PrintWriter out = spec.commandLine().getOut();
        out.println("valid: model " + settings.name() + " -> " + settings.target());
        out.println("  unique_key:  " + String.join(", ", m.keys()));
        out.println("  updated_at:  " + m.updatedAt());
        out.println("  sequence_by: " + sequence.columns() + " (" + sequence.typeText() + ")");
        out.println("  strategy:    " + settings.strategy().name().toLowerCase(Locale.ROOT));
        out.println("  tracked:     " + String.join(", ", m.tracked()));
        if (settings.deleteWhen() != null) {
            out.println("  delete_when: " + settings.deleteWhen());
        }
        // the source query's own columns: a sequence_by list's key column is the engine's
        out.println("  source columns: " + String.join(", ", m.sourceColumns().stream()
                .filter(col -> m.sequenceKey() == null || !col.name().equals(m.sequenceBy()))
                .map(col -> col.name() + " " + col.typeName()).toList()));
        out.flush();
        return ExitCodes.OK;
    }

    /** {@code validate --project}: every selected model, one table, the most severe exit code. */
    private int validateProject() {
        List<ProjectRun.Outcome<ResolvedModel>> outcomes = ProjectRun.execute(spec, connection, model, true,
                (snapshots, progress, settings) -> snapshots.validate(settings));
        List<List<String>> rows = new ArrayList<>();
        for (ProjectRun.Outcome<ResolvedModel> o : outcomes) {
            ResolvedModel m = o.result();
            rows.add(Arrays.asList(o.name(), m == null ? o.status().replace('_', ' ') : "valid",
                    String.valueOf(o.exitCode()), o.model().settings().target().toString(),
                    m == null ? RunCommand.shorten(o.error()) : "unique_key " + String.join(", ", m.keys())
                            + "; sequence_by " + new ModelSequences(m).columns() + "; tracked "
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
