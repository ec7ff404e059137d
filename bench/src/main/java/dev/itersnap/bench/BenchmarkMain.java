package dev.itersnap.bench;

import dev.itersnap.core.HardDeletes;
import dev.itersnap.IterativeSnapshot;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.RunResult;

import java.io.FileWriter;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
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
 * --db h2,postgres        databases (default both)
 * --keys 10000,100000     data sizes K (default 10000,100000)
 * --batches 30            B, full daily batches of the first load
 * --change-pct 1          c, % of keys changed per batch
 * --delete-pct 0.1        d, % of keys absent (deleted) per batch
 * --dups 5                exact duplicate rows per batch
 * --late 1,5,20           lateness L of scenario 2
 * --warmup 1 --reps 3     warm-up and measured repetitions (scenarios 1-3)
 * --load-reps 2           measured repetitions of scenario 4 (first load) and of the full recompute
 * --profile true          time every engine statement through a JDBC proxy and print the top ones
 * --out FILE              also write the report to FILE (markdown)
 * </pre>
 */
public final class BenchmarkMain {
    private final Map<String, String> opts = new LinkedHashMap<>();
    private PrintWriter out;
    private final StatementProfiler profiler = new StatementProfiler();
    private final HeapSampler heap = new HeapSampler();

    public static void main(String[] args) throws Exception {
        // before any logger exists: keep the pool's and the engine's INFO lines out of the report
        if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        }
        BenchmarkMain main = new BenchmarkMain();
        for (int i = 0; i + 1 < args.length; i += 2) {
            if (!args[i].startsWith("--")) {
                throw new IllegalArgumentException("expected --option value, got " + args[i]);
            }
            main.opts.put(args[i].substring(2), args[i + 1]);
        }
        main.run();
        System.exit(0);
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
                try (Database db = dbName.equals("h2") ? new Database.H2() : new Database.Postgres()) {
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

        ModelSettings model(String name, String target) {
            return ModelSettings.builder(name).target(target).source("SELECT * FROM raw").uniqueKey("id")
                    .updatedAt("updated_at").sequenceBy("batch_date").hardDeletes(HardDeletes.INVALIDATE).build();
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

            // (4) first load of B batches, against the full recompute
            Stats load = new Stats();
            Stats recompute = new Stats();
            heap.reset();
            startProfile();
            for (int r = 0; r < loadReps; r++) {
                ModelSettings m = r == 0 ? main : model("load" + r, "hist_load" + r);
                long s = System.nanoTime();
                RunResult res = engine.run(m);
                load.add(System.nanoTime() - s);
                check(res.batchesApplied() == batches, "first load applied " + res.batchesApplied());
                if (r > 0) {
                    w.exec("DROP TABLE hist_load" + r);
                }
            }
            stopProfile("scenario 4 (first load of " + batches + " batches)");
            long heap4 = heap.peakMiB();
            // --recompute false skips every full recompute (too slow on H2 beyond K=10k); the floor then starts from
            // a copy of the engine's history instead of the recomputed one
            boolean doRecompute = Boolean.parseBoolean(opt("recompute", "true"));
            for (int r = 0; doRecompute && r < loadReps; r++) {
                long s = System.nanoTime();
                w.fullRecompute("recompute");
                recompute.add(System.nanoTime() - s);
            }
            out.printf("full recompute of %d batches: %s ms%n", batches, recompute.describe());
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

            // (3) nothing new, R = B retained batches, against a bare SELECT DISTINCT
            Stats noop = new Stats();
            Stats distinct = new Stats();
            heap.reset();
            startProfile();
            for (int r = 0; r < warmup + reps; r++) {
                long s = System.nanoTime();
                RunResult res = engine.run(main);
                long e = System.nanoTime() - s;
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

            // (1) one new batch in order, against the floor MERGE
            w.createFloorFrom("recompute");
            Stats inOrder = new Stats();
            Stats floor = new Stats();
            heap.reset();
            startProfile();
            for (int r = 0; r < warmup + reps; r++) {
                int b = next++;
                w.insertMainBatch(b);
                long s = System.nanoTime();
                RunResult res = engine.run(main);
                long e = System.nanoTime() - s;
                check(res.batchesApplied() == 1 && !res.lateBatchFound(), "in-order run: " + res);
                s = System.nanoTime();
                w.floorApply(Workload.mainDate(b));
                long f = System.nanoTime() - s;
                if (r >= warmup) {
                    inOrder.add(e);
                    floor.add(f);
                }
            }
            stopProfile("scenario 1 (one new batch in order)");
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
                    w.insertBatch(content, Workload.mainDate(content).minusDays(5));
                    long s = System.nanoTime();
                    RunResult res = engine.run(main);
                    long e = System.nanoTime() - s;
                    check(res.lateBatchFound() && res.batchesApplied() == l + 1, "late run L=" + l + ": "
                            + res.batchesApplied() + " batches, late=" + res.lateBatchFound());
                    if (r >= warmup) {
                        st.add(e);
                    }
                }
                stopProfile("scenario 2 (L=" + l + ")");
                late.put(l, st);
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

            out.printf("%n| K | scenario | engine ms: median (min–max, n) | baseline | baseline ms | engine/baseline | peak heap MiB |%n");
            out.println("|---:|---|---:|---|---:|---:|---|");
            for (String[] row : rows) {
                out.printf("| %,d | %s | %s | %s | %s | **%s** | %s |%n", keys, row[0], row[1], row[2], row[3], row[4], row[5]);
            }
            out.printf("%nround took %.0f s%n", (System.nanoTime() - t0) / 1e9);
            out.flush();
        }

        void startProfile() {
            profiler.reset();
            profiler.enable(profile);
        }

        void stopProfile(String title) {
            profiler.enable(false);
            if (profile) {
                profiler.printTop(out, "statements of the engine, " + db.name() + " K=" + keys + ", " + title, 6);
            }
        }

        void check(boolean ok, String what) {
            if (!ok) {
                throw new IllegalStateException("unexpected engine result: " + what);
            }
        }
    }
}
