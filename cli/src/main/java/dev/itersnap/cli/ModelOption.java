package dev.itersnap.cli;

import dev.itersnap.core.ModelSettings;
import dev.itersnap.models.ModelFiles;
import picocli.CommandLine.Option;

import java.nio.file.Path;

/** The {@code --config} option of the commands that work on one model (a picocli mixin). */
final class ModelOption {
    @Option(names = "--config", required = true, paramLabel = "FILE", description = "the model's YAML file")
    Path config;

    /** Reads and validates the model file. */
    ModelSettings load() {
        return ModelFiles.load(config);
    }
}
