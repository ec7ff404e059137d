package dev.itersnap.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.sql.SQLException;
import java.util.concurrent.Callable;

/** {@code itersnap full-refresh}: rebuilds the history from the batches the source still holds. */
@Command(name = "full-refresh", mixinStandardHelpOptions = true,
        description = {"Rebuilds the history from every batch the source still holds, keeping the history of batches "
                + "no longer in the source. Refuses to start without --yes.",
                "--dry-run prints the plan and writes nothing (no --yes needed)."})
public final class FullRefreshCommand implements Callable<Integer> {
    @Spec
    private CommandSpec spec;

    @Mixin
    private ConnectionOptions connection;

    @Mixin
    private ModelOption model;

    @Option(names = "--yes", description = "confirm the rebuild")
    private boolean yes;

    @Option(names = "--dry-run", description = "print what would be rolled back and replayed; write nothing")
    private boolean dryRun;

    @Option(names = "--json", description = "print the result (or the plan) as one JSON object on stdout")
    private boolean json;

    @Override
    public Integer call() throws SQLException {
        var settings = model.load();
        if (!yes && !dryRun) {
            throw new ConfigException("full-refresh rebuilds the history of model '" + settings.name()
                    + "' from the source; add --yes to confirm (or --dry-run to see the plan)");
        }
        return ReplayCommand.Rebuild.execute(spec, connection, settings, "full refresh", null, dryRun, json);
    }
}
