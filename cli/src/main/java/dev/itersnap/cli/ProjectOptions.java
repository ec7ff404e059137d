package dev.itersnap.cli;

import dev.itersnap.core.ModelSettings;
import dev.itersnap.models.ModelFiles;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The model options of the commands that work on one model or on the models of a project (a picocli mixin):
 * {@code --config FILE}, or {@code --project DIR} with {@code --profile}, {@code --select}, {@code --exclude},
 * {@code --threads} and {@code --fail-fast}. {@link Arguments#check} requires one of the two.
 */
final class ProjectOptions {
    /** The most models a project command runs at once. */
    static final int MAX_THREADS = 32;

    @Option(names = "--config", paramLabel = "FILE", description = "the model's YAML file")
    Path config;

    @Option(names = "--project", paramLabel = "DIR", description = "a folder of model files (*.yml, *.yaml) and an "
            + "optional itersnap_project.yml (connection profiles, defaults): works on each of its models, or those "
            + "--select chooses, instead of one --config FILE")
    Path project;

    @Option(names = "--profile", paramLabel = "NAME", description = "the project's connection profile (default: its "
            + "default_profile); --jdbc-url, --user and --password given here win over the profile's")
    String profile;

    @Option(names = "--select", paramLabel = "SELECTOR", split = ",", description = "the models to work on: model "
            + "names, globs over them (stg_*) and tag:NAME, comma-separated or repeated (default: all)")
    List<String> select = new ArrayList<>();

    @Option(names = "--exclude", paramLabel = "SELECTOR", split = ",", description = "models left out, as --select "
            + "names them")
    List<String> exclude = new ArrayList<>();

    @Option(names = "--threads", paramLabel = "N", defaultValue = "1", description = "how many models run at once, "
            + "on one connection pool (each run holds its own model lock and two connections; default: 1)")
    int threads;

    @Option(names = "--fail-fast", description = "start no further model once one failed (default: every selected "
            + "model runs whatever the others do)")
    boolean failFast;

    /** Reads and validates the {@code --config} file. */
    ModelSettings load() {
        return ModelFiles.load(config);
    }

    boolean isProject() {
        return project != null;
    }
}
