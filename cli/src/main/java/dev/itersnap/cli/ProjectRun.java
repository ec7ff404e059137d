package dev.itersnap.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.zaxxer.hikari.HikariDataSource;
import dev.itersnap.IterativeSnapshot;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.Secrets;
import dev.itersnap.models.Project;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;

import javax.sql.DataSource;
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
import java.util.function.BiFunction;
import java.util.function.Function;

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

    /**
     * What a model's result means for the command (doctor: failed checks): null when it succeeded, else its exit
     * code and its one line (printed to stderr as a failure's is, and in the table or JSON).
     */
    interface Verdict<R> {
        Failure judge(R result);
    }

    /** A model whose work returned, yet failed (a doctor's failed check): its exit code and its one line. */
    record Failure(int exitCode, String message) {
    }

    /** Works on each selected model; {@code readOnly}: the pool's connections are read-only (validate, status). */
    static <R> List<Outcome<R>> execute(CommandSpec spec, ConnectionOptions connection, ProjectOptions options,
                                        boolean readOnly, Work<R> work) {
        return execute(spec, connection, options, readOnly, work, result -> null, null);
    }

    /**
     * Works on each selected model, judging each result by {@code verdict}. {@code noConnection} (null: none) is
     * each model's result when the pool cannot be opened (doctor: a failed connection check); without one that is
     * the command's own failure, as before any model runs.
     */
    static <R> List<Outcome<R>> execute(CommandSpec spec, ConnectionOptions connection, ProjectOptions options,
                                        boolean readOnly, Work<R> work, Verdict<R> verdict,
                                        BiFunction<Project.Model, RuntimeException, R> noConnection) {
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
        Models<R> each = new Models<>(err, options, verdict, parsed != null && ErrorReporter.verbose(parsed),
                models.size() > 1);
        HikariDataSource dataSource;
        try {
            dataSource = connection.open(profile, noUrl, readOnly, size, lockWait);
        } catch (ConfigException e) {
            throw e;                            // no URL, no driver: the command's own usage error
        } catch (RuntimeException e) {
            if (noConnection == null) {
                throw e;
            }
            return models.stream().map(m -> each.judged(m, noConnection.apply(m, e))).toList();
        }
        try (dataSource) {
            AtomicInteger thread = new AtomicInteger();
            ExecutorService pool = Executors.newFixedThreadPool(Math.min(options.threads, models.size()), r -> {
                Thread t = new Thread(r, "itersnap-model-" + thread.incrementAndGet());
                t.setDaemon(true);
                return t;
            });
            try {
                List<Future<Outcome<R>>> futures = new ArrayList<>();
                for (Project.Model model : models) {
                    futures.add(pool.submit(() -> each.apply(model, work, connection, dataSource)));
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

    /** The work on each model of one command: its progress prefix, its failure line, fail-fast's stop. */
    private static final class Models<R> {
        private final PrintWriter err;
        private final ProjectOptions options;
        private final Verdict<R> verdict;
        private final boolean verbose;
        private final boolean prefix;
        private final AtomicBoolean stop = new AtomicBoolean();

        Models(PrintWriter err, ProjectOptions options, Verdict<R> verdict, boolean verbose, boolean prefix) {
            this.err = err;
            this.options = options;
            this.verdict = verdict;
            this.verbose = verbose;
            this.prefix = prefix;
        }

        Outcome<R> apply(Project.Model model, Work<R> work, ConnectionOptions connection, DataSource dataSource) {
            if (stop.get()) {
                return new Outcome<>(model, "not_run", ExitCodes.OK, null, null);
            }
            ConsoleListener progress = new ConsoleListener(err, prefix ? model.name() + ": " : "");
            R result;
            try {
                result = work.apply(connection.snapshots(dataSource, progress), progress, model.settings());
            } catch (RuntimeException e) {
                return failed(model, ExitCodes.of(e), ErrorReporter.describe(e), e, null);
            }
            return judged(model, result);
        }

        /** {@code result} as {@link Verdict} judges it. */
        Outcome<R> judged(Project.Model model, R result) {
            Failure failure = verdict.judge(result);
            return failure == null ? new Outcome<>(model, "success", ExitCodes.OK, null, result)
                    : failed(model, failure.exitCode(), failure.message(), null, result);
        }

        private Outcome<R> failed(Project.Model model, int exitCode, String message, RuntimeException e, R result) {
            if (options.failFast) {
                stop.set(true);
            }
            StringBuilder line = new StringBuilder("itersnap: ").append(model.name()).append(": ").append(message);
            if (verbose && e != null) {
                StringWriter trace = new StringWriter();
                e.printStackTrace(new PrintWriter(trace));
                line.append(System.lineSeparator()).append(trace.toString().stripTrailing());
            }
            synchronized (err) {
                err.println(line);
                err.flush();
            }
            return new Outcome<>(model, "failed", exitCode, message, result);
        }
    }

    /**
     * The JSON array of a command over a project ({@code --json}): per model in the table's order its {@code model},
     * {@code status}, {@code exit_code} ({@code null} when it did not run), then the fields {@code node} writes of its
     * result (the single-model command's object) or, for a failure without one, {@code error}.
     */
    static <R> String json(List<Outcome<R>> outcomes, Function<R, ObjectNode> node) {
        ObjectMapper mapper = new ObjectMapper();
        ArrayNode array = mapper.createArrayNode();
        for (Outcome<R> o : outcomes) {
            ObjectNode element = array.addObject().put("model", o.name()).put("status", o.status());
            if (o.status().equals("not_run")) {
                element.putNull("exit_code");
            } else {
                element.put("exit_code", o.exitCode());
            }
            if (o.result() != null) {
                element.setAll(node.apply(o.result()));
            } else if (o.error() != null) {
                element.put("error", o.error());
            }
        }
        try {
            return mapper.writeValueAsString(array);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot render the results as JSON", e);
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
