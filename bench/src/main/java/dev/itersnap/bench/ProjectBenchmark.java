package dev.itersnap.bench;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A project of many small models (issue 40, item 6): M models on embedded PostgreSQL, each over a raw table of K keys
 * in B full batches, run as a user would, through the command line's jar in separate JVMs: one {@code run --project}
 * invocation with {@code --threads 1} and with {@code --threads N}, against M invocations of {@code run --config}, one
 * after another. Each way runs on a fresh database with the same data: a first run applying the B batches of every
 * model, then a second run finding nothing new. Reports the wall time of each (process start to exit) and the
 * ratios, and checks that every way left the same histories and ledger. See docs/benchmarks.md.
 *
 * <pre>
 * --jar cli/target/itersnap.jar   the command line's jar (build it first: mvn package)
 * --models 50                     M
 * --keys 1000                     K, keys per model
 * --batches 3                     B, full batches per model
 * --threads 4                     N, the parallel invocation's --threads (the other has 1)
 * --reps 1                        measured repetitions of each way (each on a fresh database)
 * --java PATH                     the java the invocations run (default: this JVM's)
 * --out FILE                      also write the report to FILE (markdown)
 * </pre>
 */
public final class ProjectBenchmark {
    private final Map<String, String> opts = new LinkedHashMap<>();
    private final StringWriter report = new StringWriter();
    private final PrintWriter out = new PrintWriter(report, true);

    public static void main(String[] args) throws Exception {
        ProjectBenchmark main = new ProjectBenchmark();
        main.opts.putAll(BenchmarkMain.options(args));
        main.run();
        System.exit(0);
    }

    private String opt(String name, String def) {
        return opts.getOrDefault(name, def);
    }

    /** One way of running the project: a label and the command lines it starts, one after another. */
    private record Way(String label, List<List<String>> commands) {
    }

    /** The wall time of a way's first run (B batches applied per model) and second run (nothing new), in ms. */
    private record Timing(long firstMs, long secondMs, String histories) {
    }

    private void run() throws Exception {
        Path jar = Path.of(opt("jar", "cli/target/itersnap.jar")).toAbsolutePath();
        if (!Files.isRegularFile(jar)) {
            throw new IllegalArgumentException(jar + " does not exist: build the command line first (mvn package)");
        }
        int models = Integer.parseInt(opt("models", "50"));
        int keys = Integer.parseInt(opt("keys", "1000"));
        int batches = Integer.parseInt(opt("batches", "3"));
        int threads = Integer.parseInt(opt("threads", "4"));
        int reps = Integer.parseInt(opt("reps", "1"));
        String java = opt("java", Path.of(System.getProperty("java.home"), "bin", "java").toString());
        Path dir = Files.createTempDirectory("itersnap-project-bench");
        Path project = Files.createDirectories(dir.resolve("models"));

        out.println("# A project of " + models + " models: one invocation or " + models);
        out.println();
        out.println("Started " + LocalDateTime.now().withNano(0) + "; load average " + loadAverage() + "; "
                + Runtime.getRuntime().availableProcessors() + " cores; " + System.getProperty("java.vm.name") + " "
                + System.getProperty("java.version") + "; the jar " + Files.size(jar) / (1024 * 1024) + " MiB.");
        out.println();
        out.println("M = " + models + " models, K = " + keys + " keys, B = " + batches + " batches each (" + models
                + " raw tables of " + (long) keys * batches + " rows), embedded PostgreSQL; each way on a fresh "
                + "database, in separate JVMs of the jar, timed from process start to exit.");

        List<String> name = new ArrayList<>();
        for (int m = 1; m <= models; m++) {
            name.add(String.format(Locale.ROOT, "m%02d", m));
        }
        Map<String, List<Timing>> timings = new LinkedHashMap<>();
        for (int rep = 1; rep <= reps; rep++) {
            List<String> labels = List.of("project, --threads 1", "project, --threads " + threads,
                    models + " invocations of --config");
            for (int w = 0; w < labels.size(); w++) {
                String label = labels.get(w);
                try (Database.Postgres db = new Database.Postgres()) {
                    db.open("project_" + rep + "_" + w);
                    generate(db, name, keys, batches);
                    writeProject(project, name, db.url());
                    List<List<String>> commands = new ArrayList<>();
                    if (label.startsWith("project")) {
                        commands.add(List.of(java, "-jar", jar.toString(), "run", "--project", project.toString(),
                                "--threads", label.endsWith(" 1") ? "1" : String.valueOf(threads)));
                    } else {
                        for (String n : name) {
                            commands.add(List.of(java, "-jar", jar.toString(), "run", "--jdbc-url", db.url(), "--user",
                                    "postgres", "--config", project.resolve(n + ".yml").toString()));
                        }
                    }
                    Way way = new Way(label, commands);
                    long first = time(way, dir);
                    String histories = histories(db, name);
                    long second = time(way, dir);
                    if (!histories.equals(histories(db, name))) {
                        throw new IllegalStateException(label + ": the run with nothing new changed a history");
                    }
                    timings.computeIfAbsent(label, k -> new ArrayList<>()).add(new Timing(first, second, histories));
                    System.err.println(label + ": first run " + first + " ms, nothing new " + second + " ms");
                }
            }
        }
        String expected = timings.values().iterator().next().get(0).histories();
        for (Map.Entry<String, List<Timing>> e : timings.entrySet()) {
            for (Timing t : e.getValue()) {
                if (!t.histories().equals(expected)) {
                    throw new IllegalStateException(e.getKey() + " left other histories: " + t.histories()
                            + " against " + expected);
                }
            }
        }
        out.println();
        out.println("Every way left the same histories and ledger: " + expected + ".");
        out.println();
        out.println("| way | JVMs | first run, " + batches + " batches per model: ms | nothing new: ms | first run: "
                + models + " invocations / this | nothing new: " + models + " invocations / this |");
        out.println("|---|---:|---:|---:|---:|---:|");
        List<Timing> fifty = timings.get(models + " invocations of --config");
        double fiftyFirst = median(fifty.stream().map(Timing::firstMs).toList());
        double fiftySecond = median(fifty.stream().map(Timing::secondMs).toList());
        for (Map.Entry<String, List<Timing>> e : timings.entrySet()) {
            double first = median(e.getValue().stream().map(Timing::firstMs).toList());
            double second = median(e.getValue().stream().map(Timing::secondMs).toList());
            out.println("| " + e.getKey() + " | " + (e.getKey().startsWith("project") ? 1 : models) + " | "
                    + range(e.getValue().stream().map(Timing::firstMs).toList()) + " | "
                    + range(e.getValue().stream().map(Timing::secondMs).toList()) + " | "
                    + String.format(Locale.ROOT, "%.1fx", fiftyFirst / first) + " | "
                    + String.format(Locale.ROOT, "%.1fx", fiftySecond / second) + " |");
        }
        out.println();
        out.println("Finished " + LocalDateTime.now().withNano(0) + "; load average " + loadAverage() + ".");
        String text = report.toString();
        System.out.print(text);
        String file = opts.get("out");
        if (file != null) {
            Files.writeString(Path.of(file), text);
        }
        Database.deleteTree(dir);
    }

    /** The median, and with more than one value its min–max and n. */
    private static String range(List<Long> values) {
        String median = String.format(Locale.ROOT, "%,.0f", median(values));
        if (values.size() == 1) {
            return median;
        }
        return median + " (" + String.format(Locale.ROOT, "%,d–%,d", values.stream().mapToLong(v -> v).min()
                .orElseThrow(), values.stream().mapToLong(v -> v).max().orElseThrow()) + ", n = " + values.size() + ")";
    }

    private static double median(List<Long> values) {
        List<Long> sorted = values.stream().sorted().toList();
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2.0;
    }

    private static String loadAverage() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).split(" ");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }

    /** Runs the way's commands one after another; each must exit 0. Their wall time, in ms. */
    private static long time(Way way, Path dir) throws IOException, InterruptedException {
        Path log = dir.resolve("invocation.log");
        long start = System.nanoTime();
        for (List<String> command : way.commands()) {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            if (!p.waitFor(30, TimeUnit.MINUTES)) {
                p.destroyForcibly();
                throw new IllegalStateException(way.label() + ": " + command + " did not finish in 30 minutes");
            }
            if (p.exitValue() != 0) {
                throw new IllegalStateException(way.label() + ": " + String.join(" ", command) + " exited "
                        + p.exitValue() + ":\n" + Files.readString(log, StandardCharsets.UTF_8));
            }
        }
        return (System.nanoTime() - start) / 1_000_000;
    }

    /**
     * Each model's raw table: K keys in B full batches (batch b dated 2024-01-01 + b days); key k changes its status
     * in batch b when k mod 100 < b (1 % of the keys in the first batch, 2 % in the second, ...), its updated_at then
     * the batch's day, so every change is a new version.
     */
    private static void generate(Database db, List<String> models, int keys, int batches) throws SQLException {
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement()) {
            for (String m : models) {
                st.execute("CREATE TABLE raw_" + m + " (id BIGINT, status VARCHAR(20), amount NUMERIC(12, 2), "
                        + "updated_at TIMESTAMP, batch_date DATE)");
                st.execute("INSERT INTO raw_" + m + " SELECT g, CASE WHEN g % 100 < b THEN 'changed ' || b ELSE "
                        + "'base' END, g * 1.5, TIMESTAMP '2024-01-01 00:00:00' + (CASE WHEN g % 100 < b THEN b "
                        + "ELSE 0 END) * INTERVAL '1 day' + g * INTERVAL '1 second', DATE '2024-01-01' + b FROM "
                        + "generate_series(1, " + keys + ") g, generate_series(1, " + batches + ") b");
                st.execute("CREATE INDEX ON raw_" + m + " (batch_date, id)");
                st.execute("ANALYZE raw_" + m);
            }
        }
    }

    /** A model file per model (all settings in it, so --config and --project read the same) and the project file. */
    private static void writeProject(Path project, List<String> models, String url) throws IOException {
        try (var files = Files.list(project)) {
            for (Path f : files.toList()) {
                Files.delete(f);
            }
        }
        for (String m : models) {
            Files.writeString(project.resolve(m + ".yml"), """
                    name: %s
                    target: %s_history
                    source: SELECT id, status, amount, updated_at, batch_date FROM raw_%s
                    unique_key: id
                    updated_at: updated_at
                    sequence_by: batch_date
                    metadata_schema: snap_meta
                    """.formatted(m, m, m));
        }
        Files.writeString(project.resolve("itersnap_project.yml"), """
                default_profile: bench
                profiles:
                  bench:
                    url: "%s"
                    user: postgres
                """.formatted(url));
    }

    /** Versions, open versions and ledger entries over every model: what a way left. */
    private static String histories(Database db, List<String> models) throws SQLException {
        long versions = 0;
        long open = 0;
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement()) {
            for (String m : models) {
                try (ResultSet rs = st.executeQuery("SELECT COUNT(*), COUNT(*) FILTER (WHERE dbt_valid_to IS NULL) "
                        + "FROM " + m + "_history")) {
                    rs.next();
                    versions += rs.getLong(1);
                    open += rs.getLong(2);
                }
            }
            try (ResultSet rs = st.executeQuery("SELECT COUNT(*), COUNT(DISTINCT model) FROM snap_meta.itersnap_ledger")) {
                rs.next();
                return String.format(Locale.ROOT, "%,d versions (%,d open), %,d ledger entries of %d models", versions,
                        open, rs.getLong(1), rs.getLong(2));
            }
        }
    }
}
