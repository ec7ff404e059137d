package dev.itersnap.cli;

import com.zaxxer.hikari.HikariDataSource;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.RunPlan;
import dev.itersnap.core.RunResult;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.Callable;

/** {@code itersnap replay}: rolls the history back to a sequence and replays every batch from there. */
@Command(name = "replay", mixinStandardHelpOptions = true,
        description = {"Rolls the history back to a sequence (inclusive) and replays every batch from there in order, "
                + "then applies new ones.",
                "Batches no longer in the source are reproduced from the history. --dry-run prints the plan and "
                        + "writes nothing."})
public final class ReplayCommand implements Callable<Integer> {
    @Spec
    private CommandSpec spec;

    @Mixin
    private ConnectionOptions connection;

    @Mixin
    private ModelOption model;

    @Option(names = "--from", required = true, paramLabel = "SEQ",
            description = "the first batch to replay, as text: 2024-03-01, 2024-03-01 06:00:00, 42")
    private String from;

    @Option(names = "--dry-run", description = "print what would be rolled back and replayed; write nothing")
    private boolean dryRun;

    @Option(names = "--json", description = "print the result (or the plan) as one JSON object on stdout")
    private boolean json;

    @Override
    public Integer call() throws SQLException {
        return Rebuild.execute(spec, connection, model.load(), "replay from " + from, from, dryRun, json);
    }

    /** The shared body of replay and full-refresh. */
    static final class Rebuild {
        private Rebuild() {
        }

        static int execute(CommandSpec spec, ConnectionOptions connection, ModelSettings settings, String operation,
                           String from, boolean dryRun, boolean json) throws SQLException {
            PrintWriter out = spec.commandLine().getOut();
            try (HikariDataSource dataSource = dryRun ? connection.openReadOnly(settings) : connection.open(settings)) {
                if (dryRun) {
                    var snapshots = connection.snapshots(dataSource, e -> { });
                    RunPlan plan = from == null ? snapshots.planFullRefresh(settings)
                            : snapshots.planReplayFrom(settings, from);
                    if (json) {
                        out.println(PlanPrinter.json(plan, operation));
                    } else {
                        PlanPrinter.print(out, plan, operation);
                    }
                } else {
                    ConsoleListener progress = new ConsoleListener(spec.commandLine().getErr(), "");
                    var snapshots = connection.snapshots(dataSource, progress);
                    RunResult r = from == null ? snapshots.fullRefresh(settings) : snapshots.replayFrom(settings, from);
                    out.println(json ? RunResultJson.render(r, progress.rowsWithoutSequence())
                            : RunCommand.summary(r, progress.rowsWithoutSequence()));
                }
                out.flush();
                return ExitCodes.OK;
            }
        }
    }
}
