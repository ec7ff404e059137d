package dev.itersnap.cli;

import com.zaxxer.hikari.HikariDataSource;
import dev.itersnap.IterativeSnapshot;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.Secrets;
import dev.itersnap.models.Project;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A command over the models of a project ({@code --project DIR}): the project read, its profile chosen, the models
 * selected, one pool opened, and each model worked on by {@code --threads} threads (each run takes its own model
 * lock, as it does alone); a model that fails does not stop the others unless {@code --fail-fast}. The command prints
 * the outcomes; its exit code is {@link ExitCodes#mostSevere} of theirs.
 */
final class ProjectRun {
    /** What happened to one model: {@code success}, {@code failed} or {@code not_run} (after a failure, fail-fast). */
    record Outcome<R>(Project.Model model, String status, int exitCode, String error, R result) {
        String name() {
            return model.name();
        }
    }

    /** The work on one model: its engine, the listener printing its progress and its settings. */
    interface Work<R> {
        R apply(IterativeSnapshot snapshots, ConsoleListener progress, ModelSettings settings);
    }

    private ProjectRun() {
    }

    /** Works on each selected model; {@code readOnly}: the pool's connections are read-only (validate). */
    static <R> List<Outcome<R>> execute(CommandSpec spec, ConnectionOptions connection, ProjectOptions options,
                                        boolean readOnly, Work<R> work) {
        if (options.threads < 1 || options.threads > ProjectOptions.MAX_THREADS) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--threads expected 1 to "
                    + ProjectOptions.MAX_THREADS + ", got " + options.threads);
        }
        PrintWriter err = spec.commandLine().getErr();
        Project project = Project.load(options.project);
        Project.Profile profile = project.profile(options.profile).orElse(null);
        if (profile != null) {
            // the profile's password and the secrets of its URL are masked in every output from here on
            List<String> secrets = new ArrayList<>(Secrets.of(profile.url()));
            if (profile.password() != null) {
                secrets.add(profile.password());
            }
            MaskingWriter.add(spec.commandLine().getOut(), secrets);
            MaskingWriter.add(err, secrets);
        }
        List<Project.Model> models = project.select(options.select, options.exclude);
        int size = poolSize(profile, options.threads);
        Duration lockWait = models.stream().map(m -> m.settings().lockTimeout()).max(Comparator.naturalOrder())
                .orElse(ModelSettings.DEFAULT_LOCK_TIMEOUT);
        String noUrl = "no database for the project " + project.dir() + ": pass --jdbc-url URL or --profile NAME"
                + (project.profileNames().isEmpty() ? " (it has no " + Project.FILE_NAME + " with profiles)"
                : " (profiles: " + String.join(", ", project.profileNames()) + "), or set default_profile");
        CommandLine.ParseResult parsed = spec.root().commandLine().getParseResult();
        boolean verbose = parsed != null && ErrorReporter.verbose(parsed);
        boolean prefix = models.size() > 1;
        try (HikariDataSource dataSource = connection.open(profile, noUrl, readOnly, size, lockWait)) {
            AtomicBoolean stop = new AtomicBoolean();
            AtomicInteger thread = new AtomicInteger();
            ExecutorService pool = Executors.newFixedThreadPool(Math.min(options.threads, models.size()), r -> {
                Thread t = new Thread(r, "itersnap-model-" + thread.incrementAndGet());
                t.setDaemon(true);
                return t;
            });
            try {
                List<Future<Outcome<R>>> futures = new ArrayList<>();
                for (Project.Model model : models) {
                    futures.add(pool.submit(() -> {
                        if (stop.get()) {
                            return new Outcome<R>(model, "not_run", ExitCodes.OK, null, null);
                        }
                        ConsoleListener progress = new ConsoleListener(err, prefix ? model.name() + ": " : "");
                        try {
                            R result = work.apply(connection.snapshots(dataSource, progress), progress,
                                    model.settings());
                            return new Outcome<>(model, "success", ExitCodes.OK, null, result);
                        } catch (RuntimeException e) {
                            if (options.failFast) {
                                stop.set(true);
                            }
                            String message = ErrorReporter.describe(e);
                            StringBuilder line = new StringBuilder("itersnap: ").append(model.name()).append(": ")
                                    .append(message);
                            if (verbose) {
                                StringWriter trace = new StringWriter();
                                e.printStackTrace(new PrintWriter(trace));
                                line.append(System.lineSeparator()).append(trace.toString().stripTrailing());
                            }
                            err.println(line);
                            err.flush();
                            return new Outcome<R>(model, "failed", ExitCodes.of(e), message, null);
                        }
                    }));
                }
                List<Outcome<R>> outcomes = new ArrayList<>();
                for (Future<Outcome<R>> f : futures) {
                    outcomes.add(f.get());
                }
                return outcomes;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while the models ran", e);
            } catch (ExecutionException e) {
                if (e.getCause() instanceof Error error) {
                    throw error;
                }
                throw new IllegalStateException(e.getCause());
            } finally {
                pool.shutdownNow();
            }
        }
    }

    /**
     * The profile's {@code pool_size}, refused when {@code threads} runs cannot each hold their two connections;
     * without one, room for every thread's two and one more (at least {@link ConnectionPool#SIZE}).
     */
    static int poolSize(Project.Profile profile, int threads) {
        if (profile == null || profile.poolSize() == null) {
            return Math.max(ConnectionPool.SIZE, 2 * threads + 1);
        }
        if (profile.poolSize() < 2 * threads) {
            throw new ConfigException("pool_size " + profile.poolSize() + " of profile '" + profile.name() + "' is "
                    + "too small for --threads " + threads + ": each model's run holds two connections (its lock and "
                    + "its work); set pool_size to at least " + 2 * threads + " or lower --threads");
        }
        return profile.poolSize();
    }

    /** The exit code of a command over {@code outcomes}: the most severe of theirs. */
    static int exitCode(List<? extends Outcome<?>> outcomes) {
        return ExitCodes.mostSevere(outcomes.stream().map(Outcome::exitCode).toList());
    }

    /** One line after the table: how many models succeeded, failed and did not run, and the exit code. */
    static String totals(List<? extends Outcome<?>> outcomes, String succeeded) {
        long ok = outcomes.stream().filter(o -> o.status().equals("success")).count();
        long failed = outcomes.stream().filter(o -> o.status().equals("failed")).count();
        long notRun = outcomes.size() - ok - failed;
        return outcomes.size() + (outcomes.size() == 1 ? " model: " : " models: ") + ok + " " + succeeded + ", "
                + failed + " failed" + (notRun == 0 ? "" : ", " + notRun + " not run (--fail-fast)") + "; exit code "
                + exitCode(outcomes);
    }
}
