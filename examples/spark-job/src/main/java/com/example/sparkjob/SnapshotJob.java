package com.example.sparkjob;

import dev.itersnap.IterativeSnapshot;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.core.RunResult;
import dev.itersnap.dialect.databricks.SparkDataSource;
import dev.itersnap.models.Project;
import org.apache.spark.sql.SparkSession;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A Spark job that runs the models of an itersnap project (the folder of model files the command line runs with
 * {@code --project}) in the job's own SparkSession, one after another, each under its own lease as a run alone takes
 * it. Arguments: the project folder (on Databricks a workspace or volume path, e.g. {@code /Volumes/main/etl/models})
 * and optionally selectors as the command line's {@code --select} takes them (names, globs, {@code tag:NAME}).
 *
 * <p>A model that fails does not stop the others; the job fails at the end when any did, naming them, so the
 * task's retries rerun it (a model up to date applies nothing).
 */
public final class SnapshotJob {
    /** One model's outcome: its run result, or the error that stopped it. */
    public record Outcome(String model, RunResult result, ItersnapException error) {
    }

    private SnapshotJob() {
    }

    public static void main(String[] args) {
        if (args.length < 1) {
            throw new IllegalArgumentException("usage: SnapshotJob PROJECT_DIR [SELECTOR ...]");
        }
        SparkSession spark = SparkSession.builder().getOrCreate();     // the job's session
        List<Outcome> outcomes = run(spark, Path.of(args[0]), Arrays.asList(args).subList(1, args.length));
        List<String> failed = outcomes.stream().filter(o -> o.error() != null)
                .map(o -> o.model() + " (" + o.error().code() + ")").toList();
        if (!failed.isEmpty()) {
            throw new IllegalStateException(failed.size() + " of " + outcomes.size() + " models failed: "
                    + String.join(", ", failed));
        }
    }

    /** Runs the models of {@code project} that {@code select} chooses (empty: all) in {@code spark}. */
    public static List<Outcome> run(SparkSession spark, Path project, List<String> select) {
        Project models = Project.load(project);                        // the command line's files and checks
        IterativeSnapshot snapshots = IterativeSnapshot.builder()
                .dataSource(SparkDataSource.of(spark))
                .dialect("databricks")
                .build();
        List<Outcome> outcomes = new ArrayList<>();
        for (Project.Model model : models.select(select, List.of())) {
            try {
                RunResult r = snapshots.run(model.settings());
                System.out.println(model.name() + ": " + r.batchesApplied() + " batches applied, " + r.inserted()
                        + " inserted, " + r.updated() + " updated" + (r.replayPoint() == null ? ""
                        : ", replayed from " + r.replayPointText()));
                outcomes.add(new Outcome(model.name(), r, null));
            } catch (ItersnapException e) {
                System.err.println(model.name() + ": " + e.getMessage());
                outcomes.add(new Outcome(model.name(), null, e));
            }
        }
        return outcomes;
    }
}
