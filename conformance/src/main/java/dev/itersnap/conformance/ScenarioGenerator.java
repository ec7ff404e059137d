package dev.itersnap.conformance;

import dev.itersnap.conformance.Scenario.Column;
import dev.itersnap.conformance.Scenario.ColumnChange;
import dev.itersnap.conformance.Scenario.Profile;
import dev.itersnap.conformance.Scenario.Source;
import dev.itersnap.conformance.Scenario.Step;
import dev.itersnap.conformance.TestDatabase.ColumnType;
import dev.itersnap.core.HardDeletes;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.Strategy;

import java.math.BigDecimal;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeSet;

/**
 * Generates {@link Scenario}s that behave like a real system of record, from a seed alone.
 *
 * <p>A handful of customer records live through a number of days (2-8 for a small case, 8-20 medium, 20-40 long).
 * Each day some are inserted, changed (a tracked column, an untracked one, or only {@code updated_at}) or deleted; a
 * record's {@code updated_at} changes whenever it changes, and every batch reflects every earlier change. With
 * {@code hard_deletes} invalidate/new_record each batch is the full picture (a deleted record is absent, or, with
 * {@code delete_when}, still there as an {@code op = 'D'} tombstone; now and then an export misses a live record for
 * a day); with ignore each batch holds only the day's changed records, deletes being {@code op = 'D'} rows. Then
 * noise: a key twice in a batch, a NULL key, a NULL {@code updated_at} (now and then a whole batch without one), a
 * row from a lagging replica (an older state of the record), a tombstone older than the record, NULL tracked values
 * and NULL {@code op}, rows with a NULL sequence, junk rows that a filtering source query leaves out.
 *
 * <p>Sequences are INTEGER (spanning 9 and 10: numeric order differs from text order), DATE, TIMESTAMP with
 * fractions of a second, DECIMAL (spanning 9.x, 10.x and more) or VARCHAR (compared by code point: upper case, lower
 * case, digits and a non-ASCII letter). The source query is the plain table, a subquery, or filters junk rows; meta
 * column names, the metadata schema and the target's schema are overridden in some cases.
 *
 * <p>Then delivery: small cases arrive in a random order; medium and long ones mostly in order with a long tail
 * (some batches 20-35 batches late in a long case), several late batches per run. Deliveries are split over runs;
 * before some runs retention drops the oldest applied batches, the raw table gains, loses or widens a column, and
 * some runs are a {@code fullRefresh} or a {@code replayFrom}.
 */
public final class ScenarioGenerator {
    private static final List<String> STATUSES = List.of("active", "premium", "gold", "paused");
    private static final List<String> NOTES = List.of("vip", "call back", "moved", "n/a");
    private static final List<String> TIERS = List.of("t1", "t2", "t3");
    private static final List<String> REGIONS = List.of("EU", "US");
    private static final LocalDate FIRST_DAY = LocalDate.of(2024, 3, 4);
    /** Characters of string sequences: upper before lower case by code point, 'é' after every ASCII letter. */
    private static final String SEQUENCE_CHARS = "ABMZabmz0159_-é";
    private static final Map<String, String> RENAMED_META = Map.of(
            "dbt_scd_id", "version_id", "dbt_updated_at", "record_updated_at", "dbt_valid_from", "valid_from",
            "dbt_valid_to", "valid_to", "dbt_change_type", "change_kind", "changed_attributes", "changed_columns",
            "dbt_is_deleted", "is_deleted", "dbt_opened_seq", "opened_batch", "dbt_closed_seq", "closed_batch");

    /** Generates the scenario of {@code seed}; the same seed always gives the same scenario. */
    public Scenario generate(long seed) {
        return new Run(seed, null).scenario();
    }

    /** Generates the scenario of {@code seed} with the given size class. */
    public Scenario generate(long seed, Profile profile) {
        return new Run(seed, profile).scenario();
    }

    /** The state of one generation; every random choice comes from {@link #random}. */
    private static final class Run {
        private final long seed;
        private final SplittableRandom random;
        private final Profile profile;
        private final boolean compositeKey;
        private final ColumnType sequenceType;
        private final Strategy strategy;
        private final List<String> checkCols;
        private final HardDeletes hardDeletes;
        private final boolean deleteWhen;
        private final boolean note;
        private final Source source;
        private final Map<String, String> columnNames = new LinkedHashMap<>();
        private final String metadataSchema;
        private final String target;
        private final boolean subSecond;
        private final List<Column> columns = new ArrayList<>();
        private final List<Record> records = new ArrayList<>();
        private final Scenario.Options options;

        Run(long seed, Profile forced) {
            this.seed = seed;
            this.random = new SplittableRandom(seed);
            double p = random.nextDouble();
            Profile drawn = p < 0.62 ? Profile.SMALL : p < 0.88 ? Profile.MEDIUM : Profile.LONG;
            profile = forced != null ? forced : drawn;
            compositeKey = chance(0.3);
            double t = random.nextDouble();
            sequenceType = t < 0.3 ? ColumnType.INTEGER : t < 0.52 ? ColumnType.DATE : t < 0.67 ? ColumnType.VARCHAR
                    : t < 0.84 ? ColumnType.TIMESTAMP : ColumnType.DECIMAL;
            strategy = random.nextBoolean() ? Strategy.CHECK : Strategy.TIMESTAMP;
            hardDeletes = HardDeletes.values()[random.nextInt(3)];
            deleteWhen = hardDeletes == HardDeletes.IGNORE ? chance(0.7) : chance(0.35);
            note = chance(0.45);
            int c = random.nextInt(20);
            checkCols = strategy == Strategy.TIMESTAMP || c < 11 ? null
                    : c < 14 ? List.of("status", "score") : c < 18 ? List.of("status") : List.of("score");
            double s = random.nextDouble();
            source = s < 0.5 ? Source.PLAIN : s < 0.68 ? Source.SUBQUERY : s < 0.85 ? Source.WHERE
                    : Source.SUBQUERY_WHERE;
            if (chance(0.25)) {
                for (Map.Entry<String, String> e : new java.util.TreeMap<>(RENAMED_META).entrySet()) {
                    if (random.nextBoolean()) {
                        columnNames.put(e.getKey(), e.getValue());
                    }
                }
            }
            metadataSchema = chance(0.25) ? "etl_meta" : ModelSettings.DEFAULT_METADATA_SCHEMA;
            target = chance(0.2) ? "history." + Scenario.HISTORY_TABLE : Scenario.HISTORY_TABLE;
            subSecond = chance(0.5);
            if (compositeKey) {
                columns.add(new Column("region", ColumnType.VARCHAR));
            }
            columns.add(new Column("id", ColumnType.INTEGER));
            columns.add(new Column("status", ColumnType.VARCHAR));
            columns.add(new Column("score", ColumnType.INTEGER));
            if (note) {
                columns.add(new Column("note", ColumnType.VARCHAR));
            }
            columns.add(new Column(Scenario.UPDATED_AT, ColumnType.TIMESTAMP));
            if (deleteWhen) {
                columns.add(new Column(Scenario.OP, ColumnType.VARCHAR));
            }
            columns.add(new Column(Scenario.SEQUENCE, sequenceType));
            // drawn from a stream of their own: a seed's batches and plan stay what they were before these settings
            SplittableRandom more = new SplittableRandom(seed ^ 0x5DEECE66DL);
            boolean sameColumn = sequenceType == ColumnType.TIMESTAMP && more.nextDouble() < 0.3;
            String validToCurrent = more.nextDouble() < 0.3 ? "9999-12-31" : null;
            boolean ignoreNulls = more.nextDouble() < 0.7 && hardDeletes == HardDeletes.IGNORE
                    && strategy == Strategy.CHECK && checkCols == null;
            boolean overwrite = more.nextDouble() < 0.4 && strategy == Strategy.CHECK && checkCols != null;
            // sequence_by as a list: not with sequence_by = updated_at (one column is the event's one sequence)
            int sequenceList = more.nextDouble() < 0.2 && !sameColumn ? 1 + more.nextInt(2) : 0;
            if (sequenceList != 0) {
                columns.add(new Column(Scenario.SEQUENCE_PART, ColumnType.INTEGER));
            }
            // restatement detection bounded in half of the cases (a random of its own: the rest stays as it was)
            SplittableRandom window = new SplittableRandom(seed * 37 + 5);
            boolean bounded = window.nextBoolean();
            int lookback = bounded ? window.nextInt(3) : ModelSettings.MAX_RESTATEMENT_BATCHES;
            int sweep = bounded ? window.nextInt(3) : 0;
            options = new Scenario.Options(sameColumn, validToCurrent, ignoreNulls, overwrite, sequenceList, lookback,
                    sweep);
        }

        Scenario scenario() {
            int keys = profile == Profile.LONG ? 3 + random.nextInt(8) : 3 + random.nextInt(6);
            int days = switch (profile) {
                case SMALL -> 2 + random.nextInt(7);
                case MEDIUM -> 8 + random.nextInt(13);
                case LONG -> 20 + random.nextInt(21);
            };
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
            List<Object> sequences = sequences(calendar);

            List<ReferenceModel.Batch> batches = new ArrayList<>();
            Map<Integer, List<Map<String, Object>>> nullSequence = new HashMap<>();
            for (int d = 0; d < days; d++) {
                Object sequence = sequences.get(d);
                List<Map<String, Object>> rows = liveOneDay(calendar.get(d), d == 0);
                List<Map<String, Object>> nullSeqRows = new ArrayList<>();
                addNoise(calendar.get(d), rows, nullSeqRows);
                for (Map<String, Object> row : rows) {
                    row.put(Scenario.SEQUENCE, sequence);
                }
                if (options.sequenceList() != 0) {
                    long part = d / 3; // as Scenario#sequencePart computes it
                    rows.forEach(row -> row.put(Scenario.SEQUENCE_PART, part));
                    nullSeqRows.forEach(row -> row.put(Scenario.SEQUENCE_PART, part));
                }
                batches.add(new ReferenceModel.Batch((Comparable<?>) sequence, rows));
                if (!nullSeqRows.isEmpty()) {
                    nullSequence.put(d, nullSeqRows);
                }
            }
            List<Column> later = List.of(new Column("tier", ColumnType.VARCHAR));
            List<Step> plan = deliveryPlan(sequences);
            List<Column> rawColumns = columns;
            if (options.sequenceIsUpdatedAt()) {
                // a CDC feed: each event's one sequence orders it and dates it, there is no separate updated_at
                rawColumns = columns.stream().filter(c -> !c.name().equals(Scenario.UPDATED_AT)).toList();
                batches.replaceAll(b -> new ReferenceModel.Batch(b.sequence(), withoutUpdatedAt(b.rows())));
                nullSequence.replaceAll((d, rows) -> withoutUpdatedAt(rows));
            }
            return new Scenario(seed, profile, rawColumns, later, keyColumns(), strategy, checkCols, hardDeletes,
                    deleteWhen, sequenceType, source, columnNames, metadataSchema, target, subSecond, batches,
                    nullSequence, withRestatements(plan, batches), options);
        }

        /**
         * Before some steps (about one in eight, never the first) an applied batch the source still holds is restated:
         * a row corrected, rows appended, a row removed, or the whole batch replaced; before half of the steps that
         * change the raw table's columns too (a correction arriving together with a column change, which the run that
         * finds the change must not miss). Drawn from randoms of their own, so that the rest of a seed's case is as
         * before.
         */
        private List<Step> withRestatements(List<Step> plan, List<ReferenceModel.Batch> batches) {
            SplittableRandom r = new SplittableRandom(seed * 31 + 17);
            SplittableRandom beside = new SplittableRandom(seed * 43 + 29);
            Map<Integer, List<Map<String, Object>>> current = new HashMap<>();
            TreeSet<Integer> inSource = new TreeSet<>();
            List<Step> out = new ArrayList<>();
            for (Step step : plan) {
                step.drop().forEach(inSource::remove);
                List<Scenario.Restatement> restate = new ArrayList<>();
                boolean besideChange = !step.changes().isEmpty() && !inSource.isEmpty() && beside.nextDouble() < 0.5;
                if (!out.isEmpty() && !inSource.isEmpty() && (besideChange
                        || step.changes().isEmpty() && r.nextDouble() < 0.125)) {
                    SplittableRandom rr = besideChange ? beside : r;
                    List<Integer> candidates = new ArrayList<>(inSource);
                    int b = candidates.get(rr.nextInt(candidates.size()));
                    List<Map<String, Object>> before = current.computeIfAbsent(b, x -> batches.get(x).rows());
                    Scenario.Restatement.Kind kind = Scenario.Restatement.Kind.values()[rr.nextInt(4)];
                    List<Map<String, Object>> rows = restated(rr, kind, before, batches.get(b).sequence());
                    if (rows.stream().anyMatch(source.predicate())) { // the batch stays in the source
                        restate.add(new Scenario.Restatement(b, kind, rows));
                        current.put(b, rows);
                    }
                }
                out.add(new Step(step.drop(), step.changes(), step.deliver(), step.operation(), step.replayFrom(),
                        step.runs(), restate));
                inSource.addAll(step.deliver());
            }
            return out;
        }

        /** The rows of a batch after a restatement of {@code kind}. */
        private List<Map<String, Object>> restated(SplittableRandom r, Scenario.Restatement.Kind kind,
                                                   List<Map<String, Object>> before, Object sequence) {
            List<Map<String, Object>> rows = new ArrayList<>();
            before.forEach(row -> rows.add(new LinkedHashMap<>(row)));
            if (rows.isEmpty()) {
                return rows;
            }
            switch (kind) {
                case ROWS_CORRECTED -> corrected(r, rows.get(r.nextInt(rows.size())));
                case ROWS_APPENDED -> {
                    for (int i = 0, n = 1 + r.nextInt(2); i < n; i++) {
                        rows.add(appended(r, rows.get(r.nextInt(rows.size())), sequence));
                    }
                }
                case ROWS_REMOVED -> {
                    if (rows.size() > 1) {
                        rows.remove(r.nextInt(rows.size()));
                    } else {
                        corrected(r, rows.get(0));
                    }
                }
                case BATCH_REPLACED -> {
                    List<Map<String, Object>> replaced = new ArrayList<>();
                    for (Map<String, Object> row : rows) {
                        double p = r.nextDouble();
                        if (p < 0.5) {
                            corrected(r, row);
                        }
                        if (p < 0.8 || replaced.isEmpty()) {
                            replaced.add(row);
                        }
                    }
                    replaced.add(appended(r, rows.get(r.nextInt(rows.size())), sequence));
                    return replaced;
                }
            }
            return rows;
        }

        /** A row corrected in place: another status, now and then another score. */
        private static void corrected(SplittableRandom r, Map<String, Object> row) {
            List<String> others = new ArrayList<>(STATUSES);
            others.remove(row.get("status"));
            row.put("status", others.get(r.nextInt(others.size())));
            if (r.nextDouble() < 0.3) {
                row.put("score", (long) (1 + r.nextInt(5)));
            }
        }

        /** A row of a key the batch had not held, copied from one of its rows. */
        private Map<String, Object> appended(SplittableRandom r, Map<String, Object> like, Object sequence) {
            Map<String, Object> row = new LinkedHashMap<>(like);
            row.put("id", 70 + r.nextInt(9));
            if (compositeKey && row.get("region") == null) {
                row.put("region", "EU");
            }
            row.put("status", STATUSES.get(r.nextInt(STATUSES.size())));
            row.put(Scenario.SEQUENCE, sequence);
            return row;
        }

        private static List<Map<String, Object>> withoutUpdatedAt(List<Map<String, Object>> rows) {
            List<Map<String, Object>> out = new ArrayList<>();
            for (Map<String, Object> row : rows) {
                Map<String, Object> r = new LinkedHashMap<>(row);
                r.remove(Scenario.UPDATED_AT);
                out.add(r);
            }
            return out;
        }

        /** One sequence value per day, ascending in business order. */
        private List<Object> sequences(List<LocalDate> calendar) {
            int days = calendar.size();
            List<Object> out = new ArrayList<>();
            switch (sequenceType) {
                case INTEGER -> {
                    // ids always include 9 and 10: numeric order differs from text order
                    long first = days <= 10 ? 11 - days + random.nextInt(days - 1) : 1 + random.nextInt(9);
                    for (int d = 0; d < days; d++) {
                        out.add(first + d);
                    }
                }
                case DATE -> out.addAll(calendar);
                case TIMESTAMP -> calendar.forEach(d -> out.add(d.atTime(5, 0)
                        .plusNanos(random.nextLong(3_600_000_000L) * 1000)));
                case DECIMAL -> {
                    BigDecimal v = new BigDecimal(9_000 + random.nextInt(990)).movePointLeft(3);
                    for (int d = 0; d < days; d++) {
                        out.add(ReferenceModel.normalise(v));
                        BigDecimal step = new BigDecimal(1 + random.nextInt(1500)).movePointLeft(3);
                        v = v.add(chance(0.06) ? step.add(BigDecimal.valueOf(50)) : step);
                    }
                }
                case VARCHAR -> {
                    TreeSet<String> codes = new TreeSet<>(Comparator.comparing((String x) -> x,
                            ReferenceModel::compareValues));
                    while (codes.size() < days) {
                        StringBuilder code = new StringBuilder();
                        int length = 1 + random.nextInt(4);
                        for (int i = 0; i < length; i++) {
                            code.appendCodePoint(SEQUENCE_CHARS.codePointAt(
                                    SEQUENCE_CHARS.offsetByCodePoints(0, random.nextInt(SEQUENCE_CHARS.length()))));
                        }
                        codes.add(code.toString());
                    }
                    out.addAll(codes);
                }
                default -> throw new IllegalStateException("no sequences of type " + sequenceType);
            }
            return out;
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
                            r.insert(time(day));
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
                            r.change(time(day));
                            rows.add(r.row());
                        } else if (full && !(chance(0.07) && liveCount() > 1)) {
                            rows.add(r.row()); // unchanged; now and then the export misses it for a day
                        }
                    }
                    case DELETED -> {
                        if (chance(0.2)) {
                            r.insert(time(day));
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
                    r.change(time(day));
                } else {
                    r.insert(time(day));
                }
                rows.add(r.row());
                if (full) {
                    records.stream().filter(x -> x != r && x.state == State.LIVE).forEach(x -> rows.add(x.row()));
                }
            }
            if (deleteWhen) {
                for (Map<String, Object> row : rows) {
                    if (!"D".equals(row.get(Scenario.OP)) && chance(0.04)) {
                        row.put(Scenario.OP, null); // a NULL delete_when result: not a delete
                    }
                }
            }
            return rows;
        }

        /** Noise that real feeds carry; rows added here are set aside by the engine or are harmless. */
        private void addNoise(LocalDate day, List<Map<String, Object>> rows, List<Map<String, Object>> nullSeqRows) {
            if (chance(0.15)) {
                // A lagging replica sends an older state of a record (values and updated_at of that time).
                int i = random.nextInt(rows.size());
                Record r = recordOf(rows.get(i));
                if (r != null && r.history.size() > 1 && !"D".equals(rows.get(i).get(Scenario.OP))) {
                    rows.set(i, new LinkedHashMap<>(r.history.get(random.nextInt(r.history.size() - 1))));
                }
            }
            if (deleteWhen && chance(0.07)) {
                // A tombstone older than the record's current state (an explicit delete's updated_at regression).
                int i = random.nextInt(rows.size());
                Record r = recordOf(rows.get(i));
                if (r != null && r.state == State.LIVE && r.history.size() > 1) {
                    Map<String, Object> old = new LinkedHashMap<>(r.history.get(0));
                    old.put(Scenario.OP, "D");
                    rows.set(i, old);
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
            if (chance(0.03)) {
                // A batch whose rows all lack updated_at: nothing applies, and without a deletion time nothing
                // is deleted by absence (unless the sequence is temporal).
                rows.replaceAll(r -> {
                    Map<String, Object> row = new LinkedHashMap<>(r);
                    row.put(Scenario.UPDATED_AT, null);
                    return row;
                });
            }
            if (chance(0.1)) {
                // Exact copies of rows (part of a file loaded twice): applied once, never set aside.
                int n = 1 + random.nextInt(3);
                for (int i = 0; i < n; i++) {
                    rows.add(new LinkedHashMap<>(rows.get(random.nextInt(rows.size()))));
                }
            }
            if (source.filters() && chance(0.35)) {
                // Rows the source query leaves out (a key of the batch, or a stranger).
                int n = 1 + random.nextInt(2);
                for (int i = 0; i < n; i++) {
                    Map<String, Object> junk = chance(0.5) ? new LinkedHashMap<>(rows.get(random.nextInt(rows.size())))
                            : freeRow(day);
                    junk.put("status", Scenario.JUNK);
                    junk.put(Scenario.UPDATED_AT, time(day));
                    rows.add(junk);
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

        /** A row of no particular record (for NULL-key, NULL-sequence and junk noise). */
        private Map<String, Object> freeRow(LocalDate day) {
            Record stranger = new Record(compositeKey ? List.of("EU", 90 + random.nextInt(9))
                    : List.of(90 + random.nextInt(9)));
            stranger.insert(time(day));
            return stranger.row();
        }

        // ---------------------------------------------------------------- delivery

        /** The delivery plan: arrival order, split over runs, retention, schema changes, rebuilds. */
        private List<Step> deliveryPlan(List<Object> sequences) {
            int n = sequences.size();
            List<Integer> arrival = arrivalOrder(n);
            List<List<Integer>> chunks = new ArrayList<>();
            if (profile == Profile.SMALL) {
                int runs = 1 + random.nextInt(n);
                TreeSet<Integer> cuts = new TreeSet<>();
                while (cuts.size() < runs - 1) {
                    cuts.add(1 + random.nextInt(n - 1));
                }
                int from = 0;
                List<Integer> ends = new ArrayList<>(cuts);
                ends.add(n);
                for (int end : ends) {
                    chunks.add(arrival.subList(from, end));
                    from = end;
                }
            } else {
                int from = 0;
                while (from < n) {
                    int size = Math.min(n - from, 1 + random.nextInt(profile == Profile.LONG ? 5 : 4));
                    chunks.add(arrival.subList(from, from + size));
                    from += size;
                }
            }

            List<Step> plan = new ArrayList<>();
            TreeSet<Integer> inSource = new TreeSet<>(); // batch indexes = business order
            TreeSet<Integer> applied = new TreeSet<>();
            double dropChance = profile == Profile.SMALL ? 0.4 : 0.2;
            for (List<Integer> chunk : chunks) {
                List<Integer> drop = retention(plan.isEmpty(), inSource, dropChance);
                ReferenceModel.Operation op = ReferenceModel.Operation.RUN;
                Object from = null;
                if (!applied.isEmpty()) {
                    double o = random.nextDouble();
                    if (o < 0.04) {
                        op = ReferenceModel.Operation.FULL_REFRESH;
                    } else if (o < 0.08) {
                        op = ReferenceModel.Operation.REPLAY;
                        from = replayPoint(sequences, applied);
                    }
                }
                plan.add(new Step(drop, List.of(), chunk, op, from, chance(0.12) ? 2 : 1));
                inSource.addAll(chunk);
                applied.addAll(chunk);
                double extra = random.nextDouble();
                if (extra < 0.06) {
                    plan.add(new Step(retention(false, inSource, dropChance), List.of(), List.of(),
                            ReferenceModel.Operation.RUN, null, 1)); // a run with nothing new
                } else if (extra < 0.11) {
                    plan.add(new Step(retention(false, inSource, dropChance), List.of(), List.of(),
                            ReferenceModel.Operation.FULL_REFRESH, null, 1));
                } else if (extra < 0.17) {
                    plan.add(new Step(retention(false, inSource, dropChance), List.of(), List.of(),
                            ReferenceModel.Operation.REPLAY, replayPoint(sequences, applied), 1));
                }
            }
            return withSchemaChanges(plan);
        }

        /**
         * Arrival order: a random permutation for small cases; for medium and long ones mostly in order with a long
         * tail (a few batches held back 6-15, or in a long case 20-35, batches).
         */
        private List<Integer> arrivalOrder(int n) {
            List<Integer> arrival = Scenario.range(n);
            if (profile == Profile.SMALL) {
                for (int i = n - 1; i > 0; i--) {
                    int j = random.nextInt(i + 1);
                    arrival.set(i, arrival.set(j, arrival.get(i)));
                }
                return arrival;
            }
            double[] at = new double[n];
            for (int i = 0; i < n; i++) {
                double p = random.nextDouble();
                int delay = p < 0.7 ? 0 : p < 0.9 ? 1 + random.nextInt(3) : 4 + random.nextInt(4);
                at[i] = i + delay + i * 1e-3;
            }
            int stragglers = profile == Profile.LONG ? 1 + random.nextInt(3) : chance(0.6) ? 1 : 0;
            int deepest = profile == Profile.LONG ? 20 : 6;
            int deep = profile == Profile.LONG ? 35 : 15;
            for (int s = 0; s < stragglers && n - 1 - deepest > 0; s++) {
                int i = random.nextInt(n - deepest);
                int delay = deepest + random.nextInt(Math.max(1, Math.min(deep, n - 1 - i) - deepest + 1));
                at[i] = i + delay + 0.5;
            }
            arrival.sort(Comparator.comparingDouble(i -> at[i]));
            return arrival;
        }

        /** A value to replay from: an applied batch, a value just below one, or one below every batch. */
        private Object replayPoint(List<Object> sequences, TreeSet<Integer> applied) {
            List<Integer> list = new ArrayList<>(applied);
            Object s = sequences.get(list.get(random.nextInt(list.size())));
            double p = random.nextDouble();
            if (p < 0.6) {
                return s;
            }
            Object base = p < 0.85 ? s : sequences.get(applied.first());
            int steps = p < 0.85 ? 1 : 3;
            return switch (sequenceType) {
                case DATE -> ((LocalDate) base).minusDays(steps);
                case TIMESTAMP -> ((LocalDateTime) base).minusNanos(1000L * steps);
                case DECIMAL -> ReferenceModel.normalise(((BigDecimal) base).subtract(
                        new BigDecimal(steps).movePointLeft(3)));
                case INTEGER -> p < 0.85 ? base : (Long) base - steps;
                default -> base;
            };
        }

        /** Drops the oldest batches of the source; every batch in the source was applied by an earlier run. */
        private List<Integer> retention(boolean firstRun, TreeSet<Integer> inSource, double p) {
            List<Integer> drop = new ArrayList<>();
            if (!firstRun && !inSource.isEmpty() && chance(p)) {
                int n = 1 + random.nextInt(profile == Profile.SMALL ? inSource.size() : Math.min(8, inSource.size()));
                for (int i = 0; i < n; i++) {
                    drop.add(inSource.pollFirst());
                }
            }
            return drop;
        }

        /**
         * In about a third of the cases the raw table's columns change before some steps (never the first): a column
         * is added, one is dropped (now and then to come back later), or {@code score} is widened to BIGINT.
         */
        private List<Step> withSchemaChanges(List<Step> plan) {
            if (plan.size() < 2 || !chance(0.32)) {
                return plan;
            }
            List<ColumnChange.Kind> kinds = new ArrayList<>(List.of(ColumnChange.Kind.ADD, ColumnChange.Kind.DROP,
                    ColumnChange.Kind.WIDEN));
            int count = chance(0.4) ? 2 : 1;
            Map<Integer, List<ColumnChange>> at = new HashMap<>();
            Set<String> touched = new LinkedHashSet<>();
            for (int k = 0; k < count && !kinds.isEmpty(); k++) {
                ColumnChange.Kind kind = kinds.remove(random.nextInt(kinds.size()));
                int step = 1 + random.nextInt(plan.size() - 1);
                switch (kind) {
                    case ADD -> at.computeIfAbsent(step, x -> new ArrayList<>())
                            .add(new ColumnChange(kind, new Column("tier", ColumnType.VARCHAR)));
                    case DROP -> {
                        String column = note ? "note" : checkCols == null || !checkCols.contains("score") ? "score"
                                : null;
                        if (column == null || touched.contains(column)) {
                            continue;
                        }
                        touched.add(column);
                        at.computeIfAbsent(step, x -> new ArrayList<>())
                                .add(new ColumnChange(kind, new Column(column,
                                        column.equals("note") ? ColumnType.VARCHAR : ColumnType.INTEGER)));
                        if (column.equals("note") && step + 1 < plan.size() && chance(0.4)) {
                            int back = step + 1 + random.nextInt(plan.size() - step - 1);
                            at.computeIfAbsent(back, x -> new ArrayList<>()).add(new ColumnChange(
                                    ColumnChange.Kind.ADD, new Column("note", ColumnType.VARCHAR)));
                        }
                    }
                    case WIDEN -> {
                        if (touched.contains("score")) {
                            continue;
                        }
                        touched.add("score");
                        at.computeIfAbsent(step, x -> new ArrayList<>())
                                .add(new ColumnChange(kind, new Column("score", ColumnType.BIGINT)));
                    }
                }
            }
            List<Step> out = new ArrayList<>();
            for (int i = 0; i < plan.size(); i++) {
                Step s = plan.get(i);
                List<ColumnChange> changes = at.getOrDefault(i, List.of());
                out.add(new Step(s.drop(), changes, s.deliver(), s.operation(), s.replayFrom(), s.runs()));
            }
            return out;
        }

        private LocalDateTime time(LocalDate day) {
            LocalDateTime t = day.atTime(8 + random.nextInt(10), random.nextInt(60), random.nextInt(60));
            return subSecond ? t.plusNanos(random.nextInt(1_000_000) * 1000L) : t;
        }

        private String randomStatus() {
            return chance(0.07) ? null : STATUSES.get(random.nextInt(STATUSES.size()));
        }

        private Long randomScore() {
            return chance(0.15) ? null : (long) (1 + random.nextInt(5));
        }

        private String randomNote() {
            return chance(0.2) ? null : NOTES.get(random.nextInt(NOTES.size()));
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
            private Long score;
            private String note;
            private String tier;
            private LocalDateTime updatedAt;
            private String op;
            private boolean tombstone;
            private final List<Map<String, Object>> history = new ArrayList<>();

            Record(List<Object> key) {
                this.key = key;
            }

            void insert(LocalDateTime at) {
                this.status = randomStatus();
                this.score = randomScore();
                this.note = randomNote();
                this.tier = TIERS.get(random.nextInt(TIERS.size()));
                this.updatedAt = at;
                this.op = "I";
                this.state = State.LIVE;
                this.tombstone = false;
                history.add(row());
            }

            /** A change: a tracked value, an untracked one, several, or only updated_at (a "touch"). */
            void change(LocalDateTime at) {
                int what = random.nextInt(12);
                if (what < 4 || what == 8) {
                    status = other(STATUSES, status);
                }
                if (what == 4 || what == 5 || what == 8) {
                    Long s = score;
                    while (Objects.equals(s, score)) {
                        s = randomScore();
                    }
                    score = s;
                }
                if (what == 6 || what == 9) {
                    note = other(NOTES, note);
                }
                if (what == 7 || what == 9) {
                    tier = other(TIERS, tier);
                }
                // what == 10, 11: only updated_at moves
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
                while (Objects.equals(v, current)) {
                    v = values.get(random.nextInt(values.size()));
                }
                return v;
            }

            /** The record as the source shows it now (every column it can have; the sequence not yet set). */
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
                if (Run.this.note) {
                    row.put("note", note);
                }
                row.put("tier", tier);
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
