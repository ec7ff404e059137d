package dev.itersnap.conformance;

import dev.itersnap.conformance.Scenario.Column;
import dev.itersnap.conformance.Scenario.Step;
import dev.itersnap.conformance.TestDatabase.ColumnType;
import dev.itersnap.core.HardDeletes;
import dev.itersnap.core.Strategy;

import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.TreeSet;

/**
 * Generates {@link Scenario}s that behave like a real system of record, from a seed alone.
 *
 * <p>A handful of customer records live through a few days. Each day some are inserted, changed or deleted; a
 * record's {@code updated_at} changes whenever its values change, and every batch reflects every earlier change.
 * With {@code hard_deletes} invalidate/new_record each batch is the full picture (a deleted record is absent, or,
 * with {@code delete_when}, still there as an {@code op = 'D'} tombstone; now and then an export misses a live
 * record for a day); with ignore each batch holds only the day's changed records, deletes being {@code op = 'D'}
 * rows. Then noise: a key twice in a batch, a NULL key, a NULL {@code updated_at}, a row from a lagging replica
 * (an older state of the record), rows with a NULL sequence. Then delivery: the batches arrive in a random order,
 * split over one or more runs, and before some runs retention drops the oldest batches that were already applied.
 */
public final class ScenarioGenerator {
    private static final List<String> STATUSES = List.of("active", "premium", "gold", "paused");
    private static final List<String> REGIONS = List.of("EU", "US");
    private static final LocalDate FIRST_DAY = LocalDate.of(2024, 3, 4);

    /** Generates the scenario of {@code seed}; the same seed always gives the same scenario. */
    public Scenario generate(long seed) {
        return new Run(seed).scenario();
    }

    /** The state of one generation; every random choice comes from {@link #random}. */
    private static final class Run {
        private final long seed;
        private final SplittableRandom random;
        private final boolean compositeKey;
        private final boolean dateSequence;
        private final Strategy strategy;
        private final List<String> checkCols;
        private final HardDeletes hardDeletes;
        private final boolean deleteWhen;
        private final List<Column> columns = new ArrayList<>();
        private final List<Record> records = new ArrayList<>();

        Run(long seed) {
            this.seed = seed;
            this.random = new SplittableRandom(seed);
            compositeKey = chance(0.3);
            dateSequence = random.nextBoolean();
            strategy = random.nextBoolean() ? Strategy.CHECK : Strategy.TIMESTAMP;
            hardDeletes = HardDeletes.values()[random.nextInt(3)];
            deleteWhen = hardDeletes == HardDeletes.IGNORE ? chance(0.7) : chance(0.3);
            int c = random.nextInt(10);
            checkCols = strategy == Strategy.TIMESTAMP || c < 6 ? null
                    : c < 8 ? List.of("status", "score") : List.of("status");
            if (compositeKey) {
                columns.add(new Column("region", ColumnType.VARCHAR));
            }
            columns.add(new Column("id", ColumnType.INTEGER));
            columns.add(new Column("status", ColumnType.VARCHAR));
            columns.add(new Column("score", ColumnType.INTEGER));
            columns.add(new Column(Scenario.UPDATED_AT, ColumnType.TIMESTAMP));
            if (deleteWhen) {
                columns.add(new Column(Scenario.OP, ColumnType.VARCHAR));
            }
            columns.add(new Column(Scenario.SEQUENCE, dateSequence ? ColumnType.DATE : ColumnType.INTEGER));
        }

        Scenario scenario() {
            int keys = 3 + random.nextInt(6);
            int days = 2 + random.nextInt(6);
            for (int i = 0; i < keys; i++) {
                List<Object> key = compositeKey
                        ? List.of(REGIONS.get(random.nextInt(REGIONS.size())), 1 + i)
                        : List.of(1 + i);
                records.add(new Record(key));
            }
            List<LocalDate> calendar = new ArrayList<>();
            LocalDate day = FIRST_DAY.plusDays(random.nextInt(300));
            for (int d = 0; d < days; d++) {
                calendar.add(day);
                day = day.plusDays(chance(0.25) ? 2 : 1);
            }
            // Integer batch ids always include 9 and 10: numeric order differs from text order.
            long firstId = 11 - days + random.nextInt(days - 1);

            List<ReferenceModel.Batch> batches = new ArrayList<>();
            Map<Integer, List<Map<String, Object>>> nullSequence = new HashMap<>();
            for (int d = 0; d < days; d++) {
                Object sequence = dateSequence ? calendar.get(d) : (Object) (firstId + d);
                List<Map<String, Object>> rows = liveOneDay(calendar.get(d), d == 0);
                List<Map<String, Object>> nullSeqRows = new ArrayList<>();
                addNoise(calendar.get(d), rows, nullSeqRows);
                for (Map<String, Object> row : rows) {
                    row.put(Scenario.SEQUENCE, sequence);
                }
                batches.add(new ReferenceModel.Batch((Comparable<?>) sequence, rows));
                if (!nullSeqRows.isEmpty()) {
                    nullSequence.put(d, nullSeqRows);
                }
            }
            return new Scenario(seed, columns, keyColumns(), strategy, checkCols, hardDeletes, deleteWhen,
                    dateSequence, batches, nullSequence, deliveryPlan(days));
        }

        private List<String> keyColumns() {
            return compositeKey ? List.of("region", "id") : List.of("id");
        }

        /** One day of the system of record; returns the day's batch (before noise). */
        private List<Map<String, Object>> liveOneDay(LocalDate day, boolean firstDay) {
            boolean full = hardDeletes.fullBatches();
            boolean deletes = full || deleteWhen;
            List<Map<String, Object>> rows = new ArrayList<>();
            for (Record r : records) {
                switch (r.state) {
                    case UNBORN -> {
                        if (chance(firstDay ? 0.6 : 0.3)) {
                            r.insert(randomStatus(), randomScore(), time(day));
                            rows.add(r.row());
                        }
                    }
                    case LIVE -> {
                        if (deletes && chance(0.12) && (!full || liveCount() > 1)) {
                            boolean tombstone = deleteWhen && (!full || chance(0.5));
                            r.delete(time(day), tombstone);
                            if (tombstone) {
                                rows.add(r.row());
                            }
                        } else if (chance(0.35)) {
                            r.change(this, time(day));
                            rows.add(r.row());
                        } else if (full && !(chance(0.07) && liveCount() > 1)) {
                            rows.add(r.row()); // unchanged; now and then the export misses it for a day
                        }
                    }
                    case DELETED -> {
                        if (chance(0.2)) {
                            r.insert(randomStatus(), randomScore(), time(day));
                            rows.add(r.row());
                        } else if (full && r.tombstone) {
                            rows.add(r.row());
                        }
                    }
                }
            }
            if (rows.isEmpty()) {
                // Every batch holds at least one row, or it would not exist: force an insert or a change.
                Record r = records.stream().filter(x -> x.state == State.LIVE).findFirst()
                        .orElse(records.get(random.nextInt(records.size())));
                if (r.state == State.LIVE) {
                    r.change(this, time(day));
                } else {
                    r.insert(randomStatus(), randomScore(), time(day));
                }
                rows.add(r.row());
                if (full) {
                    records.stream().filter(x -> x != r && x.state == State.LIVE).forEach(x -> rows.add(x.row()));
                }
            }
            return rows;
        }

        /** Noise that real feeds carry; rows added here are set aside by the engine or are harmless. */
        private void addNoise(LocalDate day, List<Map<String, Object>> rows, List<Map<String, Object>> nullSeqRows) {
            if (chance(0.1)) {
                // A lagging replica sends an older state of a record (values and updated_at of that time).
                int i = random.nextInt(rows.size());
                Record r = recordOf(rows.get(i));
                if (r != null && r.history.size() > 1 && !"D".equals(rows.get(i).get(Scenario.OP))) {
                    rows.set(i, new LinkedHashMap<>(r.history.get(random.nextInt(r.history.size() - 1))));
                }
            }
            if (chance(0.12)) {
                // The same key twice in one batch: every row of the key is set aside.
                Map<String, Object> twin = new LinkedHashMap<>(rows.get(random.nextInt(rows.size())));
                twin.put("status", randomStatus());
                twin.put(Scenario.UPDATED_AT, time(day));
                rows.add(twin);
            }
            if (chance(0.1)) {
                Map<String, Object> orphan = freeRow(day);
                if (compositeKey && chance(0.5)) {
                    orphan.put(chance(0.5) ? "region" : "id", null); // one part of the key NULL
                } else {
                    keyColumns().forEach(k -> orphan.put(k, null));
                }
                rows.add(orphan);
            }
            if (chance(0.1)) {
                // A row without updated_at, the only row of its key (else it would be a duplicate).
                List<Integer> single = new ArrayList<>();
                for (int i = 0; i < rows.size(); i++) {
                    if (keyCount(rows, rows.get(i)) == 1) {
                        single.add(i);
                    }
                }
                if (!single.isEmpty()) {
                    int i = single.get(random.nextInt(single.size()));
                    Map<String, Object> row = new LinkedHashMap<>(rows.get(i));
                    row.put(Scenario.UPDATED_AT, null);
                    rows.set(i, row);
                }
            }
            if (chance(0.1)) {
                // Exact copies of rows (part of a file loaded twice): applied once, never set aside.
                int n = 1 + random.nextInt(3);
                for (int i = 0; i < n; i++) {
                    rows.add(new LinkedHashMap<>(rows.get(random.nextInt(rows.size()))));
                }
            }
            if (chance(0.12)) {
                int n = 1 + random.nextInt(2);
                for (int i = 0; i < n; i++) {
                    Map<String, Object> row = chance(0.5) ? new LinkedHashMap<>(rows.get(random.nextInt(rows.size())))
                            : freeRow(day);
                    row.put(Scenario.SEQUENCE, null);
                    nullSeqRows.add(row);
                }
            }
        }

        private int keyCount(List<Map<String, Object>> rows, Map<String, Object> row) {
            return (int) rows.stream().filter(r -> keysEqual(r, row)).count();
        }

        private boolean keysEqual(Map<String, Object> a, Map<String, Object> b) {
            for (String k : keyColumns()) {
                if (a.get(k) == null || !a.get(k).equals(b.get(k))) {
                    return false;
                }
            }
            return true;
        }

        private Record recordOf(Map<String, Object> row) {
            for (Record r : records) {
                if (keysEqual(r.row(), row)) {
                    return r;
                }
            }
            return null;
        }

        /** A row of no particular record (for NULL-key and NULL-sequence noise). */
        private Map<String, Object> freeRow(LocalDate day) {
            Record stranger = new Record(compositeKey ? List.of("EU", 90 + random.nextInt(9)) : List.of(90 + random.nextInt(9)));
            stranger.insert(randomStatus(), randomScore(), time(day));
            return stranger.row();
        }

        /** The delivery plan: a random arrival order split over runs, with retention before some runs. */
        private List<Step> deliveryPlan(int batches) {
            List<Integer> arrival = new ArrayList<>();
            for (int i = 0; i < batches; i++) {
                arrival.add(i);
            }
            for (int i = batches - 1; i > 0; i--) {
                int j = random.nextInt(i + 1);
                arrival.set(i, arrival.set(j, arrival.get(i)));
            }
            int runs = 1 + random.nextInt(batches);
            TreeSet<Integer> cuts = new TreeSet<>();
            while (cuts.size() < runs - 1) {
                cuts.add(1 + random.nextInt(batches - 1));
            }
            List<Step> plan = new ArrayList<>();
            TreeSet<Integer> inSource = new TreeSet<>(); // batch indexes = business order
            int from = 0;
            List<Integer> ends = new ArrayList<>(cuts);
            ends.add(batches);
            for (int end : ends) {
                List<Integer> drop = retention(plan.isEmpty(), inSource);
                List<Integer> deliver = arrival.subList(from, end);
                plan.add(new Step(drop, deliver, chance(0.15) ? 2 : 1));
                inSource.addAll(deliver);
                from = end;
                if (chance(0.1)) {
                    plan.add(new Step(retention(false, inSource), List.of(), 1)); // a run with nothing new
                }
            }
            return plan;
        }

        /** Drops the oldest batches of the source; every batch in the source was applied by an earlier run. */
        private List<Integer> retention(boolean firstRun, TreeSet<Integer> inSource) {
            List<Integer> drop = new ArrayList<>();
            if (!firstRun && !inSource.isEmpty() && chance(0.4)) {
                int n = 1 + random.nextInt(inSource.size());
                for (int i = 0; i < n; i++) {
                    drop.add(inSource.pollFirst());
                }
            }
            return drop;
        }

        private LocalDateTime time(LocalDate day) {
            return day.atTime(8 + random.nextInt(10), random.nextInt(60), random.nextInt(60));
        }

        private String randomStatus() {
            return STATUSES.get(random.nextInt(STATUSES.size()));
        }

        private Integer randomScore() {
            return chance(0.15) ? null : 1 + random.nextInt(5);
        }

        private long liveCount() {
            return records.stream().filter(r -> r.state == State.LIVE).count();
        }

        private boolean chance(double p) {
            return random.nextDouble() < p;
        }

        /** A record of the system of record and every state it has shown. */
        private final class Record {
            private final List<Object> key;
            private State state = State.UNBORN;
            private String status;
            private Integer score;
            private LocalDateTime updatedAt;
            private String op;
            private boolean tombstone;
            private final List<Map<String, Object>> history = new ArrayList<>();

            Record(List<Object> key) {
                this.key = key;
            }

            void insert(String status, Integer score, LocalDateTime at) {
                this.status = status;
                this.score = score;
                this.updatedAt = at;
                this.op = "I";
                this.state = State.LIVE;
                this.tombstone = false;
                history.add(row());
            }

            /** A change of at least one value; updated_at moves with it. */
            void change(Run run, LocalDateTime at) {
                int what = run.random.nextInt(10);
                if (what < 5 || what >= 8) {
                    status = other(STATUSES, status);
                }
                if (what >= 5) {
                    Integer s = score;
                    while (Objects.equals(s, score)) {
                        s = run.randomScore();
                    }
                    score = s;
                }
                updatedAt = at;
                op = "U";
                history.add(row());
            }

            void delete(LocalDateTime at, boolean tombstone) {
                this.state = State.DELETED;
                this.tombstone = tombstone;
                if (tombstone) {
                    this.updatedAt = at;
                    this.op = "D";
                }
            }

            private String other(List<String> values, String current) {
                String v = current;
                while (v.equals(current)) {
                    v = values.get(random.nextInt(values.size()));
                }
                return v;
            }

            /** The record as the source shows it now (without the sequence). */
            Map<String, Object> row() {
                Map<String, Object> row = new LinkedHashMap<>();
                if (compositeKey) {
                    row.put("region", key.get(0));
                    row.put("id", key.get(1));
                } else {
                    row.put("id", key.get(0));
                }
                row.put("status", status);
                row.put("score", score);
                row.put(Scenario.UPDATED_AT, updatedAt);
                if (deleteWhen) {
                    row.put(Scenario.OP, op);
                }
                row.put(Scenario.SEQUENCE, null);
                return row;
            }
        }

        private enum State { UNBORN, LIVE, DELETED }
    }
}
