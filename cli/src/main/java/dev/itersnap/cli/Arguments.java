package dev.itersnap.cli;

import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

import java.util.List;

/**
 * The checks of a parsed command line that picocli's annotations cannot state: a command that takes a project
 * ({@code --project}) needs one of {@code --config} and {@code --project}, the project's options need a project, and
 * {@code --jdbc-url} is required unless a project's connection profile gives the URL. Failures are usage errors
 * (exit code 2, with the usage text), as a missing required option is.
 */
final class Arguments {
    /** The options that work on a project only. */
    static final List<String> PROJECT_ONLY = List.of("--profile", "--select", "--exclude", "--threads", "--fail-fast");

    private Arguments() {
    }

    static void check(CommandLine.ParseResult parsed) {
        CommandLine.ParseResult sub = parsed;
        while (sub.subcommand() != null) {
            sub = sub.subcommand();
        }
        for (CommandLine.ParseResult p = parsed; p != null; p = p.subcommand()) {
            if (p.isUsageHelpRequested() || p.isVersionHelpRequested()) {
                return;
            }
        }
        CommandSpec spec = sub.commandSpec();
        CommandLine cl = spec.commandLine();
        OptionSpec project = spec.findOption("--project");
        boolean isProject = project != null && sub.hasMatchedOption("--project");
        if (project != null) {
            boolean config = sub.hasMatchedOption("--config");
            if (config && isProject) {
                throw new CommandLine.ParameterException(cl, "--config and --project are mutually exclusive: "
                        + "--config FILE works on one model, --project DIR on the models of a folder");
            }
            if (!config && !isProject) {
                throw new CommandLine.MissingParameterException(cl, List.of(spec.findOption("--config"), project),
                        "Missing required option: '--config=FILE' or '--project=DIR'");
            }
            if (!isProject) {
                for (String option : PROJECT_ONLY) {
                    if (sub.hasMatchedOption(option)) {
                        throw new CommandLine.ParameterException(cl, option + " works on the models of a project: "
                                + "pass --project DIR instead of --config FILE");
                    }
                }
            }
        }
        OptionSpec url = spec.findOption("--jdbc-url");
        if (url != null && !isProject && !sub.hasMatchedOption("--jdbc-url")) {
            throw new CommandLine.MissingParameterException(cl, url, "Missing required option: '--jdbc-url=URL'");
        }
    }
}
