package dev.itersnap.bench;

import dev.itersnap.core.HardDeletes;
import dev.itersnap.IterativeSnapshot;
import dev.itersnap.core.AsOf;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.Restatements;
import dev.itersnap.core.RunResult;

import java.io.FileWriter;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The benchmark harness: for each database and each data size K, generates the data in the database, then measures
 * the engine and the baselines side by side on the same data, in the same process, with warm-up runs and repeated
 * measured runs (median and min–max reported). See docs/benchmarks.md for the command and the figures.
 *
 * <pre>
 * --db h2,postgres        databases: h2, postgres, duckdb, spark (default h2,postgres; spark: a local Spark
 *                         session with Delta Lake, run with the JVM options of docs/benchmarks.md)
 * --keys 10000,100000     data sizes K (default 10000,100000)
 * --batches 30            B, full daily batches of the first load
 * --change-pct 1          c, % of keys changed per batch
 * --delete-pct 0.1        d, % of keys absent (deleted) per batch
 * --dups 5                exact duplicate rows per batch
 * --late 1,5,20           lateness L of scenario 2
 * --warmup 1 --reps 3     warm-up and measured repetitions (scenarios 1-3)
 * --load-reps 2           measured repetitions of scenario 4 (first load) and of the full recompute
 * --profile true          time every engine statement through a JDBC proxy and print the top ones
 * --profile-top 6         how many of them
 * --recompute true        time the full recompute of (4); false: skip it (the floor starts from the engine's history)
 * --late-recompute true   time a full recompute over every raw batch again for (2); false: reuse the one of (4)
 * --bitemporal true       (5) also count the relation of both timelines at a moment before a repair, and the
 *                         known-at read there, beside a count of the history
 * --explain N             (postgres, duckdb) EXPLAIN ANALYZE the N slowest statements of scenarios 4, 1 and 2 again,
 *                         rolled back
 * --only load             only scenario 4 (first load) and its full recompute, then a full refresh and a replay
 *                         from the first batch (--refresh false: not those)
 * --keep-superseded true  false: the engine's models do not keep the versions a repair replaces (keep_superseded)
 * --out FILE              also write the report to FILE (markdown)
 * </pre>
 *
 * <p>Besides the timings, each round reports per measured engine run of scenarios 4, 1 and 2 (always, whatever
 * --profile says): the execute calls the engine made and the writes among them, the rows those writes reported for
 * the history table, the keys the run computed (rows of its scratch table {@code itersnap_keys_<model>}, counted
 * after the run) and the keys its new or late batch changes (counted by SQL against the batch before it).
 */
public final class BenchmarkMain {
    private final Map<String, String> opts = new LinkedHashMap<>();
    private PrintWriter out;
    private final StatementProfiler profiler = new StatementProfiler();
    private final HeapSampler heap = new HeapSampler();

    /** The engine's default metadata schema, which holds the scratch tables; unquoted, so folded like the harness's. */
    private static final String METADATA_SCHEMA = "itersnap_metadata";

    public static void main(String[] args) throws Exception {
        BenchmarkMain main = new BenchmarkMain();
        main.opts.putAll(options(args));
        main.run();
        System.exit(0);
    }

    /**
     * A benchmark's {@code --option value} pairs, in order; first, before any logger exists, keeps the pool's and the
     * engine's INFO lines out of the report.
     */
    static Map<String, String> options(String[] args) {
        if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        }
        Map<String, String> out = new LinkedHashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            if (!args[i].startsWith("--")) {
                throw new IllegalArgumentException("expected --option value, got " + args[i]);
            }
            out.put(args[i].substring(2), args[i + 1]);
        }
        return out;
    }

    private static double median(List<Long> values) {
        List<Long> v = new ArrayList<>(values);
        Collections.sort(v);
        int n = v.size();
        return n % 2 == 1 ? v.get(n / 2) : (v.get(n / 2 - 1) + v.get(n / 2)) / 2.0;
    }

    private String opt(String name, String def) {
        return opts.getOrDefault(name, def);
    }

    private int intOpt(String name, int def) {
        return Integer.parseInt(opt(name, String.valueOf(def)));
    }

    private static List<String> list(String csv) {
        List<String> r = new ArrayList<>();
        for (String s : csv.split(",")) {
            if (!s.isBlank()) {
                r.add(s.trim());
            }
        }
        return r;
    }

    private void run() throws Exception {
        List<Writer> sinks = new ArrayList<>();
        sinks.add(new java.io.OutputStreamWriter(System.out));
        if (opts.containsKey("out")) {
            Path p = Path.of(opts.get("out"));
            if (p.getParent() != null) {
                Files.createDirectories(p.getParent());
            }
            sinks.add(new FileWriter(p.toFile()));
        }
        out = new PrintWriter(new Writer() {
            @Override
            public void write(char[] cbuf, int off, int len) throws IOException {
                for (Writer w : sinks) {
                    w.write(cbuf, off, len);
                }
            }

            @Override
            public void flush() throws IOException {
                for (Writer w : sinks) {
                    w.flush();
                }
            }

            @Override
            public void close() throws IOException {
                for (Writer w : sinks) {
                    w.close();
                }
            }
        }, true);
        out.printf("# itersnap benchmark, %s%n%n", Instant.now());
        out.printf("options: %s; JVM %s, %d processors, max heap %d MiB%n", opts,
                System.getProperty("java.version"), Runtime.getRuntime().availableProcessors(),
                Runtime.getRuntime().maxMemory() / (1024 * 1024));
        for (String dbName : list(opt("db", "h2,postgres"))) {
            for (String k : list(opt("keys", "10000,100000"))) {
                try (Database db = switch (dbName) {
                    case "h2" -> new Database.H2();
                    case "duckdb" -> new Database.DuckDb();
                    case "spark" -> new Database.Spark();
                    default -> new Database.Postgres();
                }) {
                    db.open("k" + k);
                    new Round(db, Long.parseLong(k)).run();
                }
            }
        }
        out.flush();
        heap.close();
        out.close();
    }

    /** One database at one data size: every scenario and baseline. */
    private final class Round {
        final Database db;
        final long keys;
        final int batches = intOpt("batches", 30);
        final int warmup = intOpt("warmup", 1);
        final int reps = intOpt("reps", 3);
        final int loadReps = intOpt("load-reps", 2);
        final boolean profile = Boolean.parseBoolean(opt("profile", "true"));
        final Workload w;
        final IterativeSnapshot engine;
        int next; // the next main batch to generate

        Round(Database db, long keys) {
            this.db = db;
            this.keys = keys;
            this.w = new Workload(db, keys, Double.parseDouble(opt("change-pct", "1")),
                    Double.parseDouble(opt("delete-pct", "0.1")), intOpt("dups", 5));
            this.engine = IterativeSnapshot.builder().dataSource(profiler.wrap(db.dataSource()))
                    .listener(event -> { }).build();
        }

        /** The rows of the model's keys scratch table: the keys its last run that applied batches computed. */
        long keysComputed(ModelSettings m) {
            try {
                return w.count("SELECT COUNT(*) FROM " + METADATA_SCHEMA + ".itersnap_keys_" + m.name());
            } catch (SQLException e) {
                return -1; // no such scratch table on this database
            }
        }

        ModelSettings model(String name, String target) {
            return ModelSettings.builder(name).target(target).source("SELECT * FROM raw").uniqueKey("id")
                    .updatedAt("updated_at").sequenceBy("batch_date").hardDeletes(HardDeletes.INVALIDATE)
                    .restatements(Restatements.valueOf(opt("restatements", "detect").toUpperCase(java.util.Locale.ROOT)))
                    .keepSuperseded(Boolean.parseBoolean(opt("keep-superseded", "true")))
                    .build();
        }

        void run() throws Exception {
            out.printf("%n## %s (%s), K = %,d keys%n%n", db.name(), db.version(), keys);
            long t0 = System.nanoTime();
            w.createRaw();
            for (; next < batches; next++) {
                w.insertMainBatch(next);
            }
            db.analyze("raw");
            out.printf("generated %d batches, %,d raw rows in %.1f s (SQL only)%n", batches,
                    w.count("SELECT COUNT(*) FROM raw"), (System.nanoTime() - t0) / 1e9);
            out.flush();

            List<String[]> rows = new ArrayList<>() {
                @Override
                public boolean add(String[] row) {
                    out.printf("RESULT %s: engine %s | %s %s | ratio %s | heap %s%n", row[0], row[1], row[2], row[3],
                            row[4], row[5]);
                    return super.add(row);
                }
            };
            ModelSettings main = model("main", "hist");
            Map<String, Work> work = new LinkedHashMap<>();

            // (4) first load of B batches, against the full recompute
            Stats load = new Stats();
            Stats recompute = new Stats();
            List<Long> loadCpu = new ArrayList<>();
            List<Long> recomputeCpu = new ArrayList<>();
            heap.reset();
            startProfile();
            Work loadWork = work.computeIfAbsent("(4) first load, B=" + batches, x -> new Work());
            for (int r = 0; r < loadReps; r++) {
                String target = r == 0 ? "hist" : "hist_load" + r;
                ModelSettings m = r == 0 ? main : model("load" + r, target);
                profiler.startCounting(target);
                long cpu0 = db.serverCpuMillis();
                long commits0 = db.commits();
                long s = System.nanoTime();
                RunResult res = engine.run(m);
                load.add(System.nanoTime() - s);
                loadCpu.add(db.serverCpuMillis() - cpu0);
                loadWork.add(profiler.stopCounting(), keysComputed(m), -1, commits(commits0));
                check(res.batchesApplied() == batches, "first load applied " + res.batchesApplied());
                if (r > 0) {
                    w.exec("DROP TABLE hist_load" + r);
                }
            }
            stopProfile("scenario 4 (first load of " + batches + " batches)");
            explain(intOpt("explain", 0));
            long heap4 = heap.peakMiB();
            // --recompute false skips every full recompute (too slow on H2 beyond K=10k); the floor then starts from
            // a copy of the engine's history instead of the recomputed one
            boolean doRecompute = Boolean.parseBoolean(opt("recompute", "true"));
            for (int r = 0; doRecompute && r < loadReps; r++) {
                long cpu0 = db.serverCpuMillis();
                long s = System.nanoTime();
                w.fullRecompute("recompute");
                recompute.add(System.nanoTime() - s);
                recomputeCpu.add(db.serverCpuMillis() - cpu0);
            }
            out.printf("full recompute of %d batches: %s ms%n", batches, recompute.describe());
            if (db.serverCpuMillis() >= 0) {
                // the database server's CPU time: on a shared machine a steadier measure of the work than wall time
                out.printf("server CPU ms, first load: %s; full recompute: %s%s%n", loadCpu, recomputeCpu,
                        recomputeCpu.isEmpty() ? "" : String.format(Locale.ROOT, "; ratio of the medians %.2fx",
                                median(loadCpu) / median(recomputeCpu)));
            }
            if (!doRecompute) {
                w.exec("CREATE TABLE recompute AS SELECT id, status, tier, amount, updated_at, dbt_valid_from AS valid_from, "
                        + "dbt_valid_to AS valid_to, dbt_change_type AS change_type, dbt_opened_seq AS opened_seq FROM hist");
            }
            long histRows = w.count("SELECT COUNT(*) FROM hist");
            long recRows = w.count("SELECT COUNT(*) FROM recompute");
            if (doRecompute) out.printf("sanity: engine history %,d rows, full recompute %,d rows (open: %,d vs %,d)%n", histRows,
                    recRows, w.count("SELECT COUNT(*) FROM hist WHERE dbt_valid_to IS NULL"),
                    w.count("SELECT COUNT(*) FROM recompute WHERE valid_to IS NULL"));
            rows.add(new String[] {"(4) first load, B=" + batches, load.describe(), "full recompute",
                    recompute.describe(), Stats.ratio(load, recompute), String.valueOf(heap4)});

            if (opt("only", "").equals("load")) {
                // --only load: the first load and the full recompute, then a full refresh and a replay from the first
                // batch of the same history (every key recomputed from every batch), nothing else (issue 27's figures)
                List<String> again = Boolean.parseBoolean(opt("refresh", "true"))
                        ? List.of("full refresh", "replayFrom the first batch") : List.of();
                for (String what : again) {
                    long cpu0 = db.serverCpuMillis();
                    long s = System.nanoTime();
                    RunResult res = what.equals("full refresh") ? engine.fullRefresh(main)
                            : engine.replayFrom(main, Workload.mainDate(0));
                    Stats st = new Stats();
                    st.add(System.nanoTime() - s);
                    long cpu = db.serverCpuMillis() - cpu0;
                    check(res.batchesApplied() == batches, what + " applied " + res.batchesApplied());
                    check(w.count("SELECT COUNT(*) FROM hist") == histRows, what + " changed the history's rows");
                    if (cpu >= 0 && !recomputeCpu.isEmpty()) {
                        out.printf(Locale.ROOT, "server CPU ms, %s: %d; ratio to the recompute's median %.2fx%n", what,
                                cpu, cpu / median(recomputeCpu));
                    }
                    rows.add(new String[] {"(4) " + what + ", B=" + batches, st.describe(), "full recompute",
                            recompute.describe(), Stats.ratio(st, recompute), "-"});
                }
                printRows(rows);
                printWork(work);
                out.printf("%nround took %.0f s%n", (System.nanoTime() - t0) / 1e9);
                out.flush();
                return;
            }

            // (3) nothing new, R = B retained batches, against a bare SELECT DISTINCT
            Stats noop = new Stats();
            Stats distinct = new Stats();
            Work noopWork = work.computeIfAbsent("(3) nothing new", x -> new Work());
            heap.reset();
            startProfile();
            for (int r = 0; r < warmup + reps; r++) {
                profiler.startCounting("hist");
                long commits0 = db.commits();
                long s = System.nanoTime();
                RunResult res = engine.run(main);
                long e = System.nanoTime() - s;
                StatementProfiler.Counts counts = profiler.stopCounting();
                if (r >= warmup) {
                    noopWork.add(counts, -1, -1, commits(commits0));
                }
                check(res.batchesApplied() == 0, "no-op run applied " + res.batchesApplied());
                s = System.nanoTime();
                w.distinctSequences();
                long d = System.nanoTime() - s;
                if (r >= warmup) {
                    noop.add(e);
                    distinct.add(d);
                }
            }
            stopProfile("scenario 3 (nothing new)");
            rows.add(new String[] {"(3) nothing new, R=" + batches, noop.describe(), "SELECT DISTINCT",
                    distinct.describe(), Stats.ratio(noop, distinct), String.valueOf(heap.peakMiB())});

            // (3f) the same no-op run (restatements: detect, every batch fingerprinted) against the bare aggregate
            // of the fingerprints; and with restatements: ignore (no hash) against SELECT DISTINCT
            Stats noopAgain = new Stats();
            Stats aggregate = new Stats();
            Stats noopIgnore = new Stats();
            Stats distinctAgain = new Stats();
            ModelSettings ignoring = ModelSettings.builder("main").target("hist").source("SELECT * FROM raw")
                    .uniqueKey("id").updatedAt("updated_at").sequenceBy("batch_date")
                    .hardDeletes(HardDeletes.INVALIDATE).restatements(Restatements.IGNORE).build();
            for (int r = 0; r < warmup + reps; r++) {
                long s = System.nanoTime();
                check(engine.run(main).batchesApplied() == 0, "no-op run applied batches");
                long e = System.nanoTime() - s;
                s = System.nanoTime();
                w.fingerprintAggregate();
                long a = System.nanoTime() - s;
                s = System.nanoTime();
                check(engine.run(ignoring).batchesApplied() == 0, "no-op run applied batches");
                long i = System.nanoTime() - s;
                s = System.nanoTime();
                w.distinctSequences();
                long d = System.nanoTime() - s;
                if (r >= warmup) {
                    noopAgain.add(e);
                    aggregate.add(a);
                    noopIgnore.add(i);
                    distinctAgain.add(d);
                }
            }
            rows.add(new String[] {"(3f) nothing new, fingerprints, R=" + batches, noopAgain.describe(),
                    "GROUP BY seq: COUNT(*), hash", aggregate.describe(), Stats.ratio(noopAgain, aggregate), "-"});
            rows.add(new String[] {"(3i) nothing new, restatements ignore, R=" + batches, noopIgnore.describe(),
                    "SELECT DISTINCT", distinctAgain.describe(), Stats.ratio(noopIgnore, distinctAgain), "-"});

            // (1) one new batch in order, against the floor MERGE
            w.createFloorFrom("recompute");
            Stats inOrder = new Stats();
            Stats floor = new Stats();
            List<Long> floorCommits = new ArrayList<>();
            Work inOrderWork = work.computeIfAbsent("(1) one new batch", x -> new Work());
            heap.reset();
            startProfile();
            for (int r = 0; r < warmup + reps; r++) {
                int b = next++;
                w.insertMainBatch(b);
                profiler.startCounting("hist");
                long commits0 = db.commits();
                long s = System.nanoTime();
                RunResult res = engine.run(main);
                long e = System.nanoTime() - s;
                StatementProfiler.Counts counts = profiler.stopCounting();
                check(res.batchesApplied() == 1 && !res.lateBatchFound(), "in-order run: " + res);
                if (r >= warmup) {
                    inOrderWork.add(counts, keysComputed(main), w.keysChanged(Workload.mainDate(b)),
                            commits(commits0));
                }
                long floorCommits0 = db.commits();
                s = System.nanoTime();
                w.floorApply(Workload.mainDate(b));
                long f = System.nanoTime() - s;
                if (floorCommits0 >= 0 && r >= warmup) {
                    floorCommits.add(db.commits() - floorCommits0);
                }
                if (r >= warmup) {
                    inOrder.add(e);
                    floor.add(f);
                }
            }
            stopProfile("scenario 1 (one new batch in order)");
            explain(intOpt("explain", 0));
            if (!floorCommits.isEmpty()) {
                out.printf("floor MERGE: %s commits per batch%n", Stats.counts(floorCommits));
            }
            rows.add(new String[] {"(1) one new batch", inOrder.describe(), "floor MERGE", floor.describe(),
                    Stats.ratio(inOrder, floor), String.valueOf(heap.peakMiB())});

            // (2) a batch L batches late: rollback + replay of L+1 batches
            List<String[]> lateRows = new ArrayList<>();
            Map<Integer, Stats> late = new LinkedHashMap<>();
            heap.reset();
            for (String ls : list(opt("late", "1,5,20"))) {
                int l = Integer.parseInt(ls);
                if (l >= next - 1) {
                    out.printf("skipping L=%d: only %d batches applied%n", l, next);
                    continue;
                }
                // first move L main batches on (untimed), so that the late batches of a smaller L lie before this
                // L's replay points and every measured replay covers exactly L + 1 batches
                for (int i = 0; i < l; i++) {
                    w.insertMainBatch(next++);
                }
                engine.run(main);
                Stats st = new Stats();
                Work lateWork = work.computeIfAbsent("(2) late by L=" + l, x -> new Work());
                startProfile();
                for (int r = 0; r < warmup + reps; r++) {
                    // one more in-order batch (untimed here), so that each repetition's late batch lands in a gap
                    // of its own, exactly L main batches before the newest
                    int b = next++;
                    w.insertMainBatch(b);
                    profiler.enable(false);
                    engine.run(main);
                    profiler.enable(profile);
                    // the late batch carries the contents (and changes) of main batch next-L, dated 5 days before it
                    int content = next - l;
                    LocalDate lateDate = Workload.mainDate(content).minusDays(5);
                    w.insertBatch(content, lateDate);
                    profiler.startCounting("hist");
                    long commits0 = db.commits();
                    long s = System.nanoTime();
                    RunResult res = engine.run(main);
                    long e = System.nanoTime() - s;
                    StatementProfiler.Counts counts = profiler.stopCounting();
                    check(res.lateBatchFound() && res.batchesApplied() == l + 1, "late run L=" + l + ": "
                            + res.batchesApplied() + " batches, late=" + res.lateBatchFound());
                    if (r >= warmup) {
                        st.add(e);
                        lateWork.add(counts, keysComputed(main), w.keysChanged(lateDate), commits(commits0));
                    }
                }
                stopProfile("scenario 2 (L=" + l + ")");
                explain(intOpt("explain", 0));
                late.put(l, st);
            }
            if (Boolean.parseBoolean(opt("bitemporal", "false"))) {
                bothTimelines(w, main, rows);
            }
            long heap2 = heap.peakMiB();
            // --late-recompute false: compare with the first-load recompute (B batches, fewer than raw now holds,
            // so a lower bound of the real recompute) instead of timing a recompute over every raw batch again
            boolean lateRecompute = doRecompute && Boolean.parseBoolean(opt("late-recompute", "true"));
            Stats recompute2 = lateRecompute ? new Stats() : recompute;
            for (int r = 0; lateRecompute && r < loadReps; r++) {
                long s = System.nanoTime();
                w.fullRecompute("recompute");
                recompute2.add(System.nanoTime() - s);
            }
            for (Map.Entry<Integer, Stats> e : late.entrySet()) {
                int l = e.getKey();
                double linear = e.getValue().median() / (l * inOrder.median());
                rows.add(new String[] {"(2) late by L=" + l, e.getValue().describe(), lateRecompute ? "full recompute (" + w.count("SELECT COUNT(DISTINCT batch_date) FROM raw")
                        + " batches)" : "full recompute (" + batches + " batches, from (4))", recompute2.describe(),
                        Stats.ratio(e.getValue(), recompute2), heap2 + "; replay/(L×in-order) = "
                        + String.format(Locale.ROOT, "%.2f", linear)});
            }

            printRows(rows);
            printWork(work);
            out.printf("%nround took %.0f s%n", (System.nanoTime() - t0) / 1e9);
            out.flush();
        }

        /**
         * (5) The relation of both timelines read at a moment K before the last repair (the rows a view of it shows
         * there: {@code itersnap_known_from <= K < itersnap_known_to}), and the known-at read's query at the same K
         * (literals of K's facts), each counted, beside a count of the history. {@code --bitemporal true}.
         */
        void bothTimelines(Workload w, ModelSettings main, List<String[]> rows) throws SQLException {
            int b = next++;
            w.insertMainBatch(b);
            engine.run(main);
            java.time.LocalDateTime k = java.time.LocalDateTime.now();
            w.insertBatch(b, Workload.mainDate(b).minusDays(5)); // a batch 1 late: a repair after K
            check(engine.run(main).lateBatchFound(), "a late batch for (5)");
            String at = "TIMESTAMP '" + k.toString().replace('T', ' ') + "'";
            String view = "SELECT COUNT(*) FROM (" + engine.asOfSql(main, AsOf.bitemporal()) + ") v WHERE "
                    + "(itersnap_known_from IS NULL OR itersnap_known_from <= " + at + ") AND (itersnap_known_to IS "
                    + "NULL OR itersnap_known_to > " + at + ")";
            String read = "SELECT COUNT(*) FROM (" + engine.asOfSql(main, AsOf.knownAt(k)) + ") v";
            Stats viewAt = new Stats();
            Stats readAt = new Stats();
            Stats history = new Stats();
            long n = -1;
            long m = -1;
            for (int r = 0; r < warmup + reps; r++) {
                long s = System.nanoTime();
                n = w.count(view);
                long e1 = System.nanoTime() - s;
                s = System.nanoTime();
                m = w.count(read);
                long e2 = System.nanoTime() - s;
                s = System.nanoTime();
                w.count("SELECT COUNT(*) FROM hist");
                long e3 = System.nanoTime() - s;
                if (r >= warmup) {
                    viewAt.add(e1);
                    readAt.add(e2);
                    history.add(e3);
                }
            }
            check(n == m, "both timelines at K hold " + n + " rows, the known-at read " + m);
            out.printf("both timelines at K: %,d rows (the known-at read's too)%n", n);
            rows.add(new String[] {"(5) both timelines at K", viewAt.describe(), "COUNT(*) of the history",
                    history.describe(), Stats.ratio(viewAt, history), "-"});
            rows.add(new String[] {"(5k) known-at read at K", readAt.describe(), "COUNT(*) of the history",
                    history.describe(), Stats.ratio(readAt, history), "-"});
        }

        /** The timings of the scenarios against their baselines, one row each. */
        void printRows(List<String[]> rows) {
            out.printf("%n| K | scenario | engine ms: median (min–max, n) | baseline | baseline ms | engine/baseline | peak heap MiB |%n");
            out.println("|---:|---|---:|---|---:|---:|---|");
            for (String[] row : rows) {
                out.printf("| %,d | %s | %s | %s | %s | **%s** | %s |%n", keys, row[0], row[1], row[2], row[3], row[4], row[5]);
            }
        }

        /** The statement and row counts of the measured engine runs, one row per scenario. */
        void printWork(Map<String, Work> work) {
            out.printf(Locale.ROOT, "%nWork per measured engine run (value, or median (min–max) when the repetitions "
                    + "differ). Statements: execute calls the engine made during the run; writes: those starting with "
                    + "INSERT, UPDATE, DELETE or MERGE. History rows: sum of the update counts of the writes to the "
                    + "history table (rolled-back rows included). Keys computed: rows of %s.itersnap_keys_<model> right "
                    + "after the run. Keys changed: keys whose row in the run's new or late batch differs from (or is "
                    + "only in one of) the batch dated just before it, counted by SQL comparison in raw (a late batch "
                    + "is a copy of the L-th newest main batch dated five days before it, so it follows the main batch "
                    + "before that one); the workload's parameters predict K/P + 2K/D ≈ %,d.%n", METADATA_SCHEMA, w.expectedKeysChanged());
            boolean commits = db.commits() >= 0;
            if (commits) {
                out.printf("Delta commits: log entries written to every table of the warehouse during the run "
                        + "(history, metadata, scratch).%n");
            }
            out.printf("%n| K | scenario | statements | writes |%s history rows written | keys computed | keys changed "
                    + "| history rows / changed key |%n", commits ? " Delta commits |" : "");
            out.println("|---:|---|---:|---:|" + (commits ? "---:|" : "") + "---:|---:|---:|---:|");
            for (Map.Entry<String, Work> e : work.entrySet()) {
                Work x = e.getValue();
                out.printf("| %,d | %s | %s | %s |%s %s | %s | %s | %s |%n", keys, e.getKey(),
                        Stats.counts(x.statements), Stats.counts(x.writes),
                        commits ? " " + (x.commits.isEmpty() ? "–" : Stats.counts(x.commits)) + " |" : "",
                        Stats.counts(x.rows), x.computed.isEmpty() ? "–" : Stats.counts(x.computed),
                        x.changed.isEmpty() ? "–" : Stats.counts(x.changed), x.rowsPerKey());
            }
        }

        /**
         * --explain N (PostgreSQL, DuckDB): the plans of the N slowest statements of the last profiled scenario without
         * parameters, each executed again under EXPLAIN ANALYZE in a transaction that is rolled back.
         */
        void explain(int n) throws SQLException {
            boolean postgres = db.name().equals("postgres");
            if (n <= 0 || !postgres && !db.name().equals("duckdb")) {
                return;
            }
            for (String sql : profiler.slowest(n)) {
                if (sql == null || sql.contains("?")) {
                    continue;
                }
                try (java.sql.Connection c = db.dataSource().getConnection()) {
                    c.setAutoCommit(false);
                    try (java.sql.Statement st = c.createStatement();
                         java.sql.ResultSet rs = st.executeQuery((postgres ? "EXPLAIN (ANALYZE, BUFFERS) " : "EXPLAIN ANALYZE ") + sql)) {
                        out.printf("%n```%n%s%n", sql.length() > 300 ? sql.substring(0, 300) + "…" : sql);
                        while (rs.next()) {
                            out.println(rs.getString(postgres ? 1 : 2));
                        }
                        out.println("```");
                    } catch (SQLException e) {
                        out.printf("%n(explain failed: %s)%n", e.getMessage());
                    } finally {
                        c.rollback();
                    }
                }
            }
        }

        /** The commits since {@code before} ({@link Database#commits}), or -1 where the database does not say. */
        long commits(long before) {
            return before < 0 ? -1 : db.commits() - before;
        }

        void startProfile() {
            profiler.reset();
            profiler.enable(profile);
        }

        void stopProfile(String title) {
            profiler.enable(false);
            if (profile) {
                profiler.printTop(out, "statements of the engine, " + db.name() + " K=" + keys + ", " + title,
                        Integer.parseInt(opt("profile-top", "6")));
            }
        }

        void check(boolean ok, String what) {
            if (!ok) {
                throw new IllegalStateException("unexpected engine result: " + what);
            }
        }
    }

    /** What the measured engine runs of one scenario did, one entry per run. */
    private static final class Work {
        final List<Long> statements = new ArrayList<>();
        final List<Long> writes = new ArrayList<>();
        final List<Long> rows = new ArrayList<>();
        final List<Long> computed = new ArrayList<>();
        final List<Long> changed = new ArrayList<>();
        final List<Long> commits = new ArrayList<>();

        /**
         * One run; {@code keysChanged} negative when it does not apply (a first load changes every key), {@code
         * keysComputed} and {@code commits} negative where the database does not say.
         */
        void add(StatementProfiler.Counts counts, long keysComputed, long keysChanged, long commits) {
            statements.add(counts.statements());
            writes.add(counts.writes());
            rows.add(counts.targetRows());
            if (keysComputed >= 0) {
                computed.add(keysComputed);
            }
            if (keysChanged >= 0) {
                changed.add(keysChanged);
            }
            if (commits >= 0) {
                this.commits.add(commits);
            }
        }

        /** Median over the runs of history rows written per key changed. */
        String rowsPerKey() {
            List<Double> r = new ArrayList<>();
            for (int i = 0; i < changed.size(); i++) {
                if (changed.get(i) > 0) {
                    r.add((double) rows.get(i) / changed.get(i));
                }
            }
            if (r.isEmpty()) {
                return "–";
            }
            Collections.sort(r);
            int n = r.size();
            double median = n % 2 == 1 ? r.get(n / 2) : (r.get(n / 2 - 1) + r.get(n / 2)) / 2;
            return String.format(Locale.ROOT, "%.2f", median);
        }
    }
}
