package dev.itersnap.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.zaxxer.hikari.HikariDataSource;
import dev.itersnap.core.AsOf;
import dev.itersnap.IterativeSnapshot;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.SnapshotListener;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.concurrent.Callable;

/** {@code itersnap as-of}: the SQL (or a view) of a model's history as of a business time or a batch. */
@Command(name = "as-of", mixinStandardHelpOptions = true,
        description = {"Prints the SQL of a model's history as of a business time or a batch; --create-view makes it "
                + "a view.",
                "--time: the versions valid then, half-open [dbt_valid_from, dbt_valid_to). --sequence: the state right "
                        + "after that batch was applied. Deleted keys are left out of both.",
                "--known-at K (with --time): as the history stood at system time K, before the runs and repairs "
                        + "after it (the versions repairs replaced are read from itersnap_superseded_<model>).",
                "--bitemporal: both timelines in one relation, business time and the system time in which the "
                        + "history showed each version."})
public final class AsOfCommand implements Callable<Integer> {
    @Spec
    private CommandSpec spec;

    @Mixin
    private ConnectionOptions connection;

    @Mixin
    private ModelOption model;

    @ArgGroup(exclusive = true, multiplicity = "1")
    private Point point;

    static final class Point {
        @Option(names = "--time", required = true, paramLabel = "T",
                description = "a business time, e.g. 2024-03-01 or 2024-03-01 06:00:00")
        String time;

        @Option(names = "--sequence", required = true, paramLabel = "SEQ",
                description = "a batch, as text of the sequence type: 2024-03-01, 42")
        String sequence;

        @Option(names = "--bitemporal", required = true, description = "both timelines: every version in each form "
                + "the history showed it, with itersnap_known_from and itersnap_known_to (system time, half-open, NULL "
                + "unbounded); as a view (--create-view) it stays right as runs go on")
        boolean bitemporal;
    }

    @Option(names = "--known-at", paramLabel = "K", description = "with --time: as the history stood at this "
            + "system time (the run log's clock), e.g. 2024-03-05 14:30:00")
    private String knownAt;

    @Option(names = "--create-view", paramLabel = "VIEW", description = "create this view, name or "
            + "schema.name, instead of only printing the SQL")
    private String view;

    @Option(names = "--json", description = "print {\"model\", \"as_of\", \"value\", \"sql\", \"view\"} on stdout")
    private boolean json;

    @Override
    public Integer call() throws Exception {
        ModelSettings settings = model.load();
        if (knownAt != null && point.time == null) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(),
                    "--known-at needs --time (the business time to read as known then)");
        }
        AsOf asOf = point.time != null ? (knownAt != null ? AsOf.timeKnownAt(point.time, knownAt)
                : AsOf.time(point.time)) : point.bitemporal ? AsOf.bitemporal() : AsOf.sequence(point.sequence);
        String sql;
        try (HikariDataSource dataSource = connection.open(settings)) {
            IterativeSnapshot snapshots = connection.snapshots(dataSource, SnapshotListener.logging());
            sql = view == null ? snapshots.asOfSql(settings, asOf) : snapshots.createAsOfView(settings, asOf, view);
        }
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            out.println(new ObjectMapper().writeValueAsString(new ObjectMapper().createObjectNode()
                    .put("model", settings.name()).put("as_of", point.time != null ? "time"
                            : point.bitemporal ? "bitemporal" : "sequence")
                    .put("value", point.time != null ? point.time : point.sequence).put("known_at", knownAt).put("sql", sql).put("view", view)));
        } else {
            out.println(sql);
        }
        out.flush();
        return ExitCodes.OK;
    }
}
