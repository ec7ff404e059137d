package dev.itersnap.cli;

import com.zaxxer.hikari.HikariDataSource;
import dev.itersnap.core.LogicChange;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.RunResult;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;

/** {@code itersnap run}: applies every new batch of one model, described in a YAML file. */
@Command(name = "run", mixinStandardHelpOptions = true,
        description = {"Applies the new batches of one model, described in a YAML file (--config), or of the models "
                + "of a project folder (--project), one summary table for them all.",
                "Every batch of the source that the ledger does not hold yet is applied in business order; a late batch "
                        + "rolls the history back and replays. Progress goes to stderr, the result to stdout."},
        footerHeading = "%nModel file:%n",
        footer = "YAML whose keys are the setting names: name, target, source, unique_key (a column or a list), "
                + "updated_at, sequence_by, strategy (check or timestamp), check_cols (all or a list), hard_deletes "
                + "(ignore, invalidate or new_record), delete_when, column_names (a map), metadata_schema, "
                + "lock_timeout (30s, 10m, 1h, plain seconds or PT10M), restatements (detect or ignore), "
                + "restatement_lookback and restatement_sweep (numbers of batches).")
public final class RunCommand implements Callable<Integer> {
    @Spec
    private CommandSpec spec;

    @Mixin
    private ConnectionOptions connection;

    @Mixin
    private ProjectOptions model;

    @Option(names = "--accept-logic-change", description = "when the model's logic changed since its last successful "
            + "run, keep the history built with the old logic and apply the new logic from now on (without it the "
            + "run stops with exit code 6; the other way forward is replay --from SEQ)")
    private boolean acceptLogicChange;

    @Option(names = "--json", description = "print the run's result as one JSON object on stdout (with --project: "
            + "a JSON array of one such object per model, with its status and exit_code)")
    private boolean json;

    @Option(names = "--full-check", description = "compare every applied batch the source still holds with the "
            + "fingerprint its ledger entry recorded (an ordinary run compares restatement_lookback newest batches and "
            + "restatement_sweep older ones), replay from the earliest restated batch, and apply new batches as usual; "
            + "its cost grows with every row the source retains: schedule it (weekly, say)")
    private boolean fullCheck;

    @Override
    public Integer call() {
        if (model.isProject()) {
            return runProject();
        }
        ModelSettings settings = model.load();
        try (HikariDataSource dataSource = connection.open(settings)) {
            ConsoleListener progress = new ConsoleListener(spec.commandLine().getErr(), "");
            var snapshots = connection.snapshots(dataSource, progress);
            LogicChange logicChange = acceptLogicChange ? LogicChange.ACCEPT : LogicChange.REFUSE;
            RunResult result = fullCheck ? snapshots.runWithFullCheck(settings, logicChange)
                    : snapshots.run(settings, logicChange);
            long withoutSequence = progress.rowsWithoutSequence();
            spec.commandLine().getOut().println(json ? RunResultJson.render(result, withoutSequence)
                    : summary(result, withoutSequence));
            spec.commandLine().getOut().flush();
            return ExitCodes.OK;
        }
    }

    /** A model's run result and the rows without a sequence it set aside. */
    record Applied(RunResult result, long withoutSequence) {
    }

    /** {@code run --project}: every selected model, one table (or one JSON array), the most severe exit code. */
    private int runProject() {
        LogicChange logicChange = acceptLogicChange ? LogicChange.ACCEPT : LogicChange.REFUSE;
        List<ProjectRun.Outcome<Applied>> outcomes = ProjectRun.execute(spec, connection, model, false,
                (snapshots, progress, settings) -> new Applied(fullCheck ? snapshots.runWithFullCheck(settings,
                        logicChange) : snapshots.run(settings, logicChange), progress.rowsWithoutSequence()));
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            out.println(projectJson(outcomes));
        } else {
            List<List<String>> rows = new ArrayList<>();
            for (ProjectRun.Outcome<Applied> o : outcomes) {
                RunResult r = o.result() == null ? null : o.result().result();
                rows.add(Arrays.asList(o.name(), r == null ? o.status().replace('_', ' ')
                                : r.batchesApplied() == 0 ? "up to date" : "applied", String.valueOf(o.exitCode()),
                        r == null ? null : String.valueOf(r.batchesApplied()),
                        r == null ? null : String.valueOf(r.inserted()),
                        r == null ? null : String.valueOf(r.updated()),
                        r == null ? null : String.valueOf(r.deleted()),
                        r == null ? null : String.valueOf(r.rejected() + o.result().withoutSequence()),
                        r == null ? null : String.valueOf(r.duration().toMillis()),
                        r == null ? shorten(o.error()) : "run " + r.runId() + (r.replayPoint() == null ? ""
                                : (r.lateBatchFound() ? "; late batch found" : "") + "; replayed from "
                                + r.replayPointText())));
            }
            TablePrinter.print(out, List.of("model", "result", "exit", "batches", "inserted", "updated", "deleted",
                    "rejected", "ms", "run or error"), rows, false, false, true, true, true, true, true, true, true,
                    false);
            out.println(ProjectRun.totals(outcomes, "succeeded"));
        }
        out.flush();
        return ProjectRun.exitCode(outcomes);
    }

    /** The JSON array of {@code run --project --json}: per model its status, exit_code and run result or error. */
    static String projectJson(List<ProjectRun.Outcome<Applied>> outcomes) {
        return ProjectRun.json(outcomes, a -> RunResultJson.node(a.result(), a.withoutSequence()));
    }

    /** An error message cut for a table cell (the whole message is on stderr). */
    static String shorten(String message) {
        return message == null || message.length() <= 100 ? message : message.substring(0, 97) + "...";
    }

    /**
     * One line; {@code withoutSequence}: the rows without a sequence the run set aside, which belong to no batch:
     * counted among the rejected (as the error log and {@code status} count them) and named apart.
     */
    static String summary(RunResult r, long withoutSequence) {
        if (r.batchesApplied() == 0) {
            return r.model() + ": up to date, no new batch" + (withoutSequence == 0 ? "" : "; "
                    + ConsoleListener.rows(withoutSequence) + " without a sequence set aside") + " (run " + r.runId()
                    + ")";
        }
        return r.model() + ": " + ConsoleListener.batches(r.batchesApplied()) + " applied"
                + (r.lateBatchFound() ? ", late batch found, replayed from " + r.replayPointText()
                        : r.replayPoint() != null ? ", replayed from " + r.replayPointText() : "")
                + "; " + r.inserted() + " inserted, " + r.updated() + " updated, " + r.deleted() + " deleted, "
                + (r.rejected() + withoutSequence) + " rejected" + (withoutSequence == 0 ? ""
                : " (" + withoutSequence + " without a sequence, in no batch)") + (r.timelineViolations() > 0 ? ", " + r.timelineViolations()
                + " timeline violations" : "") + " in " + r.duration().toMillis() + " ms (run " + r.runId() + ")";
    }
}
