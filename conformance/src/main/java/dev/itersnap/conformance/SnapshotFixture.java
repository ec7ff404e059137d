package dev.itersnap.conformance;

import dev.itersnap.core.ColumnNames;
import dev.itersnap.IterativeSnapshot;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.RunResult;
import dev.itersnap.core.SnapshotListener;

import javax.sql.DataSource;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Types;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.UnaryOperator;

/**
 * One test database seen by a test: creates raw tables, runs the engine, and reads the history table, the ledger, the
 * run log and the error log back as plain records. Values are always bound; identifiers are used unquoted, so the
 * database folds them as it folds the engine's. Values read back are normalised (Long for integers, LocalDate,
 * LocalDateTime, OffsetDateTime in UTC, BigDecimal without trailing zeros) so that every dialect compares alike.
 */
public final class SnapshotFixture {
    /** Metadata schema used by the suite (the default). */
    public static final String METADATA = ModelSettings.DEFAULT_METADATA_SCHEMA;

    private final java.util.function.Supplier<DataSource> database;
    private final UnaryOperator<String> type;
    private DataSource dataSource;
    private dev.itersnap.spi.Dialect dialect;

    public SnapshotFixture(DataSource dataSource, UnaryOperator<String> type) {
        this(() -> dataSource, type);
        Objects.requireNonNull(dataSource);
    }

    /**
     * A fixture whose database is made on first use (tests that never touch the database, such as settings
     * validation, cost nothing on servers where creating a database is slow).
     */
    public SnapshotFixture(java.util.function.Supplier<DataSource> database, UnaryOperator<String> type) {
        this.database = Objects.requireNonNull(database);
        this.type = type;
    }

    /** Runs the engine with this dialect instead of the detected one (null: detect); returns this fixture. */
    public SnapshotFixture dialect(dev.itersnap.spi.Dialect dialect) {
        this.dialect = dialect;
        return this;
    }

    /** The fixture's database, made now if it was not yet. */
    public synchronized DataSource dataSource() {
        if (dataSource == null) {
            dataSource = Objects.requireNonNull(database.get(), "newDatabase() returned null");
        }
        return dataSource;
    }

    /** True once the database has been made. */
    public synchronized boolean hasDatabase() {
        return dataSource != null;
    }

    /** The database's spelling of an ANSI type. */
    public String type(String ansiType) {
        return type.apply(ansiType);
    }

    // ------------------------------------------------------------------ raw tables and SQL

    /**
     * Creates a raw table. Each column is {@code name ANSI_TYPE}; the type goes through the dialect's mapping.
     */
    public RawTable rawTable(String name, String... columns) {
        List<String> names = new ArrayList<>();
        List<String> defs = new ArrayList<>();
        for (String c : columns) {
            int sp = c.indexOf(' ');
            names.add(c.substring(0, sp));
            defs.add(c.substring(0, sp) + " " + type(c.substring(sp + 1).strip()));
        }
        execute("CREATE TABLE " + name + " (" + String.join(", ", defs) + ")");
        return new RawTable(this, name, names);
    }

    /** Executes one statement with bound values; returns the update count (0 for DDL). */
    public int execute(String sql, Object... binds) {
        try (Connection c = dataSource().getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            bind(ps, binds);
            return ps.executeUpdate();
        } catch (SQLException e) {
            throw new IllegalStateException("fixture statement failed: " + sql + ": " + e.getMessage(), e);
        }
    }

    /** Rows of a query, keyed by lower-case column label, values normalised. */
    public List<Map<String, Object>> query(String sql, Object... binds) {
        try (Connection c = dataSource().getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            bind(ps, binds);
            List<Map<String, Object>> out = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                ResultSetMetaData md = rs.getMetaData();
                while (rs.next()) {
                    Map<String, Object> row = new LinkedHashMap<>();
                    for (int i = 1; i <= md.getColumnCount(); i++) {
                        row.put(md.getColumnLabel(i).toLowerCase(Locale.ROOT), normalize(rs.getObject(i)));
                    }
                    out.add(row);
                }
            }
            return out;
        } catch (SQLException e) {
            throw new IllegalStateException("fixture query failed: " + sql + ": " + e.getMessage(), e);
        }
    }

    /** The columns of a query as JDBC metadata describes them (the query should return no row). */
    public List<dev.itersnap.spi.SourceColumn> columns(String query) {
        List<dev.itersnap.spi.SourceColumn> out = new ArrayList<>();
        try (Connection c = dataSource().getConnection(); PreparedStatement ps = c.prepareStatement(query);
             ResultSet rs = ps.executeQuery()) {
            ResultSetMetaData md = rs.getMetaData();
            for (int i = 1; i <= md.getColumnCount(); i++) {
                out.add(new dev.itersnap.spi.SourceColumn(md.getColumnLabel(i), md.getColumnType(i),
                        md.getColumnTypeName(i), md.getPrecision(i), md.getScale(i)));
            }
        } catch (SQLException e) {
            throw new IllegalStateException("fixture cannot describe " + query + ": " + e.getMessage(), e);
        }
        return out;
    }

    /**
     * The ledger's text of the sequences the history records ({@code dbt_opened_seq}, {@code dbt_closed_seq}): each
     * value's own text, or for a {@code sequence_by} list the tuple its key stands for ({@code (2024-01-05, 3)}). The
     * list's columns are described once, here.
     */
    public java.util.function.Function<Object, String> sequenceTexts(ModelSettings m) {
        if (m.sequenceByColumns().size() == 1) {
            return dev.itersnap.spi.ValueType::text;
        }
        dev.itersnap.internal.SequenceKey key = dev.itersnap.internal.SequenceKey.of(columns("SELECT "
                + String.join(", ", m.sequenceByColumns()) + " FROM " + m.target() + " WHERE 1 = 0"));
        return value -> value == null ? null : key.text(key.decode(value.toString()));
    }

    /** True when the table (unquoted name, optionally schema-qualified) can be selected from. */
    public boolean tableExists(String table) {
        try (Connection c = dataSource().getConnection(); PreparedStatement ps =
                c.prepareStatement("SELECT COUNT(*) FROM " + table)) {
            ps.executeQuery().close();
            return true;
        } catch (SQLException e) {
            return false;
        }
    }

    static void bind(PreparedStatement ps, Object[] binds) throws SQLException {
        for (int i = 0; i < binds.length; i++) {
            if (binds[i] == null) {
                ps.setNull(i + 1, Types.NULL);
            } else {
                ps.setObject(i + 1, binds[i]);
            }
        }
    }

    /** Normalises a JDBC value so that equal values are {@code equals} on every database. */
    public static Object normalize(Object v) {
        if (v == null) {
            return null;
        }
        if (v instanceof java.sql.Timestamp t) {
            return t.toLocalDateTime();
        }
        if (v instanceof java.sql.Date d) {
            return d.toLocalDate();
        }
        if (v instanceof OffsetDateTime o) {
            return o.withOffsetSameInstant(ZoneOffset.UTC);
        }
        if (v instanceof java.time.ZonedDateTime z) {
            return z.toOffsetDateTime().withOffsetSameInstant(ZoneOffset.UTC);
        }
        if (v instanceof Integer || v instanceof Short || v instanceof Byte || v instanceof java.math.BigInteger) {
            return ((Number) v).longValue();
        }
        if (v instanceof BigDecimal b) {
            return b.signum() == 0 ? BigDecimal.ZERO : b.stripTrailingZeros();
        }
        if (v instanceof java.sql.Clob clob) {
            try {
                return clob.getSubString(1, (int) clob.length());
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
        }
        if (!v.getClass().getName().startsWith("java.") && !v.getClass().isArray()) {
            return v.toString(); // a driver's own type, e.g. PostgreSQL's PGobject for json/jsonb: its text
        }
        return v;
    }

    // ------------------------------------------------------------------ the engine

    /** An engine over this database with the given listener (also logging through SLF4J). */
    public IterativeSnapshot engine(SnapshotListener listener) {
        return engine(dataSource(), listener);
    }

    /** An engine over another data source (a fault-injecting wrapper of this one), for the H2-style detection. */
    public IterativeSnapshot engine(DataSource ds, SnapshotListener listener) {
        IterativeSnapshot.Builder b = IterativeSnapshot.builder().dataSource(ds)
                .listener(SnapshotListener.logging().andThen(listener == null ? e -> { } : listener));
        if (dialect != null) {
            b.dialect(dialect);
        }
        return b.build();
    }

    /** Runs the model once with a logging-only listener. */
    public RunResult run(ModelSettings model) {
        return engine(null).run(model);
    }

    // ------------------------------------------------------------------ the history table

    /** One row of the history table. Data columns are keyed by lower-case name. */
    public record Version(Map<String, Object> data, Object updatedAt, Object validFrom, Object validTo,
                          String changeType, String changedAttributes, Boolean deleted, String scdId,
                          Object openedSeq, Object closedSeq) {
        /** A data column's value (name case-insensitive). */
        public Object get(String column) {
            String k = column.toLowerCase(Locale.ROOT);
            if (!data.containsKey(k)) {
                throw new IllegalArgumentException("history has no column " + column + "; it has " + data.keySet());
            }
            return data.get(k);
        }

        public boolean current() {
            return validTo == null;
        }

        /**
         * changed_attributes in a dialect-neutral form: lower case (names keep the database's case), no spaces,
         * e.g. {@code ["status","tier"]}; null when NULL.
         */
        public String changed() {
            return changedAttributes == null ? null
                    : changedAttributes.replaceAll("\\s+", "").toLowerCase(Locale.ROOT);
        }

        /** What the guarantees compare: data, updated_at, validity, change type, changed attributes, deletion. */
        public Essence essence() {
            return new Essence(new LinkedHashMap<>(data), updatedAt, validFrom, validTo, changeType, changed(),
                    Boolean.TRUE.equals(deleted));
        }

        @Override
        public String toString() {
            return data + " [" + validFrom + " .. " + validTo + ") " + changeType + " " + changedAttributes
                    + (Boolean.TRUE.equals(deleted) ? " DELETION-RECORD" : "") + " opened=" + openedSeq
                    + " closed=" + closedSeq;
        }
    }

    /** A version as histories are compared (no version id, no bookkeeping columns). */
    public record Essence(Map<String, Object> data, Object updatedAt, Object validFrom, Object validTo,
                          String changeType, String changed, boolean deleted) {
        @Override
        public String toString() {
            return data + " [" + validFrom + " .. " + validTo + ") " + changeType + " " + changed
                    + (deleted ? " DELETION-RECORD" : "");
        }
    }

    /** Every row of the history table (default meta column names), in a stable order. */
    public List<Version> history(String target) {
        return history(target, ColumnNames.DEFAULTS);
    }

    /** Every row of the history table, in a stable order (valid_from, then data, then deletion flag). */
    public List<Version> history(String target, ColumnNames names) {
        Map<String, String> meta = new LinkedHashMap<>();
        names.asMap().forEach((k, v) -> meta.put(v.toLowerCase(Locale.ROOT), k));
        List<Version> out = new ArrayList<>();
        for (Map<String, Object> row : query("SELECT * FROM " + target)) {
            Map<String, Object> data = new LinkedHashMap<>();
            Map<String, Object> m = new LinkedHashMap<>();
            row.forEach((col, v) -> {
                String defaultName = meta.get(col);
                if (defaultName == null) {
                    data.put(col, v);
                } else {
                    m.put(defaultName, v);
                }
            });
            Object deleted = m.get("dbt_is_deleted");
            out.add(new Version(data, m.get("dbt_updated_at"), m.get("dbt_valid_from"), m.get("dbt_valid_to"),
                    (String) m.get("dbt_change_type"), (String) m.get("changed_attributes"),
                    deleted == null ? null : (Boolean) deleted, (String) m.get("dbt_scd_id"), m.get("dbt_opened_seq"),
                    m.get("dbt_closed_seq")));
        }
        out.sort(Comparator.comparing((Version v) -> String.valueOf(v.data()))
                .thenComparing(v -> String.valueOf(v.validFrom()))
                .thenComparing(v -> Boolean.TRUE.equals(v.deleted()))
                .thenComparing(v -> String.valueOf(v.openedSeq())));
        return out;
    }

    /** The history as histories are compared, sorted. */
    public List<Essence> essence(String target) {
        return history(target).stream().map(Version::essence)
                .sorted(Comparator.comparing(Essence::toString)).toList();
    }

    /**
     * The versions of one key (single-column key, value compared after normalisation) in timeline order: by
     * valid_from, a closed version before an open one starting at the same time.
     */
    public List<Version> versions(String target, String keyColumn, Object key) {
        Object k = normalize(key);
        return history(target).stream().filter(v -> Objects.equals(v.get(keyColumn), k))
                .sorted(Comparator.comparing((Version v) -> String.valueOf(v.validFrom()))
                        .thenComparing(v -> v.validTo() == null)
                        .thenComparing(v -> String.valueOf(v.validTo())))
                .toList();
    }

    /**
     * The SCD2 invariants the run's timeline check enforces, checked independently of the engine: per key at most one current
     * version, no version ending before it starts, no overlap, a version closed by an update ends exactly where its
     * successor starts, a version closed by a delete ends no later than the next one starts, and every version id is
     * unique. Returns one line per problem (empty when sound).
     */
    public List<String> timelineProblems(String target, String... keyColumns) {
        Map<List<Object>, List<Version>> byKey = new LinkedHashMap<>();
        List<String> problems = new ArrayList<>();
        java.util.Set<String> ids = new java.util.HashSet<>();
        for (Version v : history(target)) {
            List<Object> key = new ArrayList<>();
            for (String k : keyColumns) {
                key.add(v.get(k));
            }
            byKey.computeIfAbsent(key, k -> new ArrayList<>()).add(v);
            if (v.scdId() == null || !ids.add(v.scdId())) {
                problems.add("version id missing or repeated: " + v);
            }
        }
        byKey.forEach((key, versions) -> {
            versions.sort(Comparator.comparing((Version v) -> String.valueOf(v.validFrom()))
                    .thenComparing(v -> v.validTo() == null)
                    .thenComparing(v -> String.valueOf(v.validTo())));
            long open = versions.stream().filter(Version::current).count();
            if (open > 1) {
                problems.add(key + ": " + open + " current versions");
            }
            for (int i = 0; i < versions.size(); i++) {
                Version v = versions.get(i);
                Version next = i + 1 < versions.size() ? versions.get(i + 1) : null;
                if (v.validTo() != null && compare(v.validTo(), v.validFrom()) < 0) {
                    problems.add(key + ": ends before it starts: " + v);
                }
                if (v.current() && next != null) {
                    problems.add(key + ": current version followed by another: " + v + " then " + next);
                }
                if (v.validTo() != null && next != null) {
                    if ("update".equals(v.changeType()) && compare(next.validFrom(), v.validTo()) != 0) {
                        problems.add(key + ": update ends at " + v.validTo() + " but successor starts at "
                                + next.validFrom());
                    }
                    if (compare(next.validFrom(), v.validTo()) < 0) {
                        problems.add(key + ": overlap: " + v + " and " + next);
                    }
                }
                if ("update".equals(v.changeType()) && next == null) {
                    problems.add(key + ": closed by an update without a successor: " + v);
                }
                if (v.current() && !"insert".equals(v.changeType())) {
                    problems.add(key + ": current version with change type " + v.changeType());
                }
            }
        });
        return problems;
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static int compare(Object a, Object b) {
        return ((Comparable) a).compareTo(b);
    }

    // ------------------------------------------------------------------ metadata

    /** One ledger entry. {@code sequence} is the canonical text the ledger stores. */
    public record LedgerEntry(String sequence, String runId, long sourceRows, long inserted, long updated, long deleted,
                              long rejected, String deletionTime, boolean reproduced, long duplicateRows) {
        /** The entry's counts. */
        public Counts counts() {
            return new Counts(sequence, sourceRows, inserted, updated, deleted, rejected, reproduced);
        }

        /** The entry without its run id (what two equivalent runs share), as text. */
        public String withoutRun() {
            return counts() + " deletion_time=" + deletionTime + " duplicate_rows=" + duplicateRows;
        }
    }

    /** A ledger entry's counts: sequence, the five counts and whether it was reproduced from the history. */
    public record Counts(String sequence, long sourceRows, long inserted, long updated, long deleted, long rejected,
                         boolean reproduced) {
    }

    /** The model's ledger, in the order the database returns when sorted by applied_at then sequence text. */
    public List<LedgerEntry> ledger(String model) {
        return ledger(model, METADATA);
    }

    /** The model's ledger in another metadata schema. */
    public List<LedgerEntry> ledger(String model, String metadataSchema) {
        if (!tableExists(metadataSchema + ".itersnap_ledger")) {
            return List.of();
        }
        return query("SELECT * FROM " + metadataSchema
                + ".itersnap_ledger WHERE model = ? "
                + "ORDER BY applied_at, sequence_value", model).stream()
                .map(r -> new LedgerEntry((String) r.get("sequence_value"), (String) r.get("run_id"),
                        (Long) num(r.get("source_rows")), (Long) num(r.get("inserted_rows")),
                        (Long) num(r.get("updated_rows")), (Long) num(r.get("deleted_rows")),
                        (Long) num(r.get("rejected_rows")), (String) r.get("deletion_time"),
                        Boolean.TRUE.equals(r.get("reproduced")),
                        r.get("duplicate_rows") == null ? 0 : (Long) num(r.get("duplicate_rows"))))
                .toList();
    }

    /** The ledger as counts, sorted by sequence text. */
    public List<Counts> ledgerCounts(String model) {
        return ledger(model).stream().map(LedgerEntry::counts).sorted(Comparator.comparing(Counts::sequence)).toList();
    }

    /** The counts of one batch's ledger entry (by canonical sequence text), or null. */
    public Counts ledgerEntry(String model, String sequence) {
        return ledgerCounts(model).stream().filter(c -> c.sequence().equals(sequence)).findFirst().orElse(null);
    }

    /** The deletion time the ledger recorded for one batch (canonical text), or null. */
    public String deletionTime(String model, String sequence) {
        return ledger(model).stream().filter(e -> e.sequence().equals(sequence)).findFirst()
                .map(LedgerEntry::deletionTime).orElse(null);
    }

    /** One row of the run log. */
    public record RunEntry(String runId, String operation, String holder, Object startedAt, Object finishedAt,
                           String status, Long batchesApplied, Boolean lateBatch, String replayPoint,
                           String errorMessage) {
    }

    /** The model's run log, oldest first. */
    public List<RunEntry> runs(String model) {
        if (!tableExists(METADATA + ".itersnap_runs")) {
            return List.of();
        }
        return query("SELECT run_id, operation, holder, started_at, finished_at, status, batches_applied, late_batch,"
                + " replay_point, error_message FROM " + METADATA + ".itersnap_runs WHERE model = ? ORDER BY "
                + "started_at", model).stream()
                .map(r -> new RunEntry((String) r.get("run_id"), (String) r.get("operation"),
                        (String) r.get("holder"), r.get("started_at"), r.get("finished_at"),
                        (String) r.get("status"), (Long) num(r.get("batches_applied")),
                        (Boolean) r.get("late_batch"), (String) r.get("replay_point"),
                        (String) r.get("error_message")))
                .toList();
    }

    /** One row of the error log. {@code record} is the row as JSON text. */
    public record ErrorEntry(String runId, String sequence, String reason, String record) {
        /** True when the record holds {@code "column": value} (column case-insensitive; value JSON text). */
        public boolean has(String column, String jsonValue) {
            return record != null && java.util.regex.Pattern.compile("\"(?i:" + java.util.regex.Pattern.quote(column)
                    + ")\"\\s*:\\s*" + java.util.regex.Pattern.quote(jsonValue)).matcher(record).find();
        }

        /** The error without its run id. */
        public String withoutRun() {
            return sequence + "|" + reason + "|" + record;
        }
    }

    /** The model's error log, ordered by reason, sequence and record. */
    public List<ErrorEntry> errors(String model) {
        if (!tableExists(METADATA + ".itersnap_errors")) {
            return List.of();
        }
        List<ErrorEntry> out = new ArrayList<>(query("SELECT run_id, sequence_value, reason, record FROM " + METADATA
                + ".itersnap_errors WHERE model = ?", model).stream()
                .map(r -> new ErrorEntry((String) r.get("run_id"), (String) r.get("sequence_value"),
                        (String) r.get("reason"), (String) r.get("record")))
                .toList());
        out.sort(Comparator.comparing(ErrorEntry::reason).thenComparing(e -> String.valueOf(e.sequence()))
                .thenComparing(e -> String.valueOf(e.record())));
        return out;
    }

    private static Object num(Object v) {
        return v == null ? null : ((Number) v).longValue();
    }

    // ------------------------------------------------------------------ values

    /** {@code 2024-01-02}. */
    public static LocalDate date(String iso) {
        return LocalDate.parse(iso);
    }

    /** {@code 2024-01-02 09:00} or {@code 2024-01-02 09:00:30}. */
    public static LocalDateTime ts(String text) {
        return LocalDateTime.parse(text.replace(' ', 'T'));
    }

    /** A list of values, for readable expectations. */
    public static List<Object> row(Object... values) {
        return Arrays.asList(values);
    }
}
