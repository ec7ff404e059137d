package dev.itersnap.internal;

import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.Inspection;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.internal.sql.SqlSteps;
import dev.itersnap.internal.sql.Supersession;
import dev.itersnap.spi.Dialect;
import dev.itersnap.spi.LockState;
import dev.itersnap.spi.SqlValues;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * {@link Inspection} over the metadata tables ({@link MetadataStore} reads them): each call takes a connection of the
 * data source, reads, and gives it back; it never creates a table or writes. Internal; applications get one from
 * {@code IterativeSnapshot.inspect}.
 */
public final class MetadataInspection implements Inspection {
    /** How many keys of a repair {@link #repairs} names. */
    private static final int EXAMPLE_KEYS = 5;

    private final DataSource dataSource;
    private final Dialect dialect;
    private final ModelSettings settings;

    public MetadataInspection(DataSource dataSource, Dialect dialect, ModelSettings settings) {
        this.dataSource = dataSource;
        this.dialect = dialect;
        this.settings = settings;
    }

    /** One read on a connection of its own, with a store of the model's metadata. */
    private interface Read<T> {
        T apply(Connection c, MetadataStore store) throws SQLException;
    }

    /** Runs {@code read} when the metadata tables exist, else returns {@code absent}. */
    private <T> T read(String what, T absent, Read<T> read) {
        try (Connection c = dataSource.getConnection()) {
            MetadataStore store = MetadataStore.reading(c, dialect, settings);
            return store.exists() ? read.apply(c, store) : absent;
        } catch (SQLException e) {
            throw new ItersnapException(ErrorCode.DATABASE_ERROR, "model '" + settings.name() + "': cannot read "
                    + what + ": " + Jdbc.firstLine(e.getMessage()) + Jdbc.sqlState(e), e);
        }
    }

    @Override
    public String model() {
        return settings.name();
    }

    @Override
    public String metadataSchema() {
        try (Connection c = dataSource.getConnection()) {
            return MetadataStore.reading(c, dialect, settings).schema().schema();
        } catch (SQLException e) {
            throw new ItersnapException(ErrorCode.DATABASE_ERROR, "model '" + settings.name() + "': cannot connect: "
                    + Jdbc.firstLine(e.getMessage()) + Jdbc.sqlState(e), e);
        }
    }

    @Override
    public boolean metadataExists() {
        return read("the metadata tables", false, (c, store) -> true);
    }

    @Override
    public List<Batch> ledger() {
        return read("the ledger", List.of(), (c, store) -> {
            List<MetadataStore.LedgerRow> rows = new ArrayList<>(store.ledgerRows());
            ResolvedModel m = resolvedOrNull(c);
            Fingerprints prints = m == null ? null : Fingerprints.of(dialect, m);
            if (!sortBySequence(m, rows)) {
                rows.sort(Comparator.comparing(MetadataStore.LedgerRow::appliedAt)
                        .thenComparing(MetadataStore.LedgerRow::sequence));
            }
            return rows.stream().map(r -> new Batch(r.sequence(), r.runId(), r.appliedAt(), r.sourceRows(),
                    r.duplicateRows(), r.inserted(), r.updated(), r.deleted(), r.rejected(), r.reproduced(),
                    fingerprintState(prints, r.fingerprint(), r.reproduced()))).toList();
        });
    }

    /** The model resolved against its source, or null when the source cannot be described now. */
    private ResolvedModel resolvedOrNull(Connection c) {
        try {
            return ModelResolver.resolveSource(new Jdbc(c, settings.name(), dialect), dialect, settings);
        } catch (SQLException | RuntimeException e) {
            return null;
        }
    }

    /** Sorts the rows in business order; false (rows untouched) when a sequence is no value of the sequence type. */
    private static boolean sortBySequence(ResolvedModel m, List<MetadataStore.LedgerRow> rows) {
        if (m == null) {
            return false;
        }
        try {
            List<Seq> typed = rows.stream().map(r -> Seq.coerce(m, r.sequence())).toList();
            List<Integer> order = new ArrayList<>();
            for (int i = 0; i < rows.size(); i++) {
                order.add(i);
            }
            order.sort(Comparator.comparing(typed::get));
            List<MetadataStore.LedgerRow> sorted = order.stream().map(rows::get).toList();
            rows.clear();
            rows.addAll(sorted);
            return true;
        } catch (RuntimeException e) {
            return false;
        }
    }

    static FingerprintState fingerprintState(Fingerprints now, String fingerprint, boolean reproduced) {
        if (reproduced) {
            return FingerprintState.REPRODUCED;
        }
        Fingerprint recorded = Fingerprint.parse(fingerprint);
        if (recorded == null || recorded.hash() == null) {
            return FingerprintState.NONE;
        }
        return now == null || now.comparable(recorded) ? FingerprintState.RECORDED : FingerprintState.OTHER_COLUMNS;
    }

    @Override
    public List<Run> runs(int limit) {
        if (limit < 0) {
            throw new IllegalArgumentException("limit must be 0 (every run) or more, got " + limit);
        }
        return read("the run log", List.of(), (c, store) -> store.runs(limit));
    }

    @Override
    public Lock lock() {
        try (Connection c = dataSource.getConnection()) {
            MetadataStore store = MetadataStore.reading(c, dialect, settings);
            if (!store.exists()) { // no run got as far as the run log; one may be creating the tables now
                LockState observed;
                try {
                    observed = dialect.lockState(c, store.schema(), settings.name());
                } catch (SQLException | RuntimeException e) {
                    observed = LockState.unknown();
                }
                return new Lock(status(observed), null, null, observed.holder());
            }
            LockState observed = dialect.lockState(c, store.schema(), settings.name());
            List<Run> runs = store.runs(0);
            Run running = runs.stream().filter(r -> r.status() == RunStatus.RUNNING).findFirst().orElse(null);
            return switch (observed.held()) {
                case HELD -> new Lock(LockStatus.HELD, running, null, observed.holder());
                // a run the log shows running while nobody holds the lock died; only the newest run is worth naming
                // (a later run took the lock after an older one and recovered what it left)
                case FREE -> new Lock(LockStatus.FREE, null, !runs.isEmpty() && runs.get(0).status()
                        == RunStatus.RUNNING ? runs.get(0) : null, observed.holder());
                case UNKNOWN -> new Lock(LockStatus.UNKNOWN, running, null, observed.holder());
            };
        } catch (SQLException e) {
            throw new ItersnapException(ErrorCode.DATABASE_ERROR, "model '" + settings.name() + "': cannot read the "
                    + "model lock: " + Jdbc.firstLine(e.getMessage()) + Jdbc.sqlState(e), e);
        }
    }

    private static LockStatus status(LockState observed) {
        return switch (observed.held()) {
            case HELD -> LockStatus.HELD;
            case FREE -> LockStatus.FREE;
            case UNKNOWN -> LockStatus.UNKNOWN;
        };
    }

    @Override
    public List<SetAsideCount> setAsideCounts() {
        return read("the error log", List.of(), (c, store) -> store.errorCounts(true).stream()
                .map(e -> new SetAsideCount(e.sequence(), e.reason(), e.rows())).toList());
    }

    @Override
    public List<SetAsideRow> setAside(Object sequence, int limit) {
        if (limit < 0) {
            throw new IllegalArgumentException("limit must be 0 (every row) or more, got " + limit);
        }
        return read("the error log", List.of(), (c, store) -> store.errorRows(sequence == null ? null
                : sequenceText(c, sequence), limit));
    }

    /** A sequence a caller names, as the metadata writes it. */
    private String sequenceText(Connection c, Object sequence) throws SQLException {
        ResolvedModel m = ModelResolver.resolveSource(new Jdbc(c, settings.name(), dialect), dialect, settings);
        try {
            return Seq.coerce(m, sequence).text();
        } catch (IllegalArgumentException e) {
            throw new ItersnapException(ErrorCode.INVALID_SEQUENCE, "model '" + settings.name() + "': sequence '"
                    + sequence + "' is no value of " + m.sequenceDescription() + ": " + e.getMessage(), e);
        }
    }

    @Override
    public Optional<RecordedLogic> recordedLogic() {
        return Optional.ofNullable(read("the run log", null, (c, store) -> store.recordedLogic(settings.logic())));
    }

    @Override
    public Optional<Adoption> adoption() {
        return Optional.ofNullable(read("the run log", null, (c, store) -> store.adoption()));
    }

    @Override
    public List<String> restatedBatches() {
        return read("the ledger", List.of(), (c, store) -> store.restatedBatches(settings));
    }

    @Override
    public List<Repair> repairs(int limit) {
        if (limit < 0) {
            throw new IllegalArgumentException("limit must be 0 (every repair) or more, got " + limit);
        }
        return read("the superseded versions", List.of(), (c, store) -> {
            Jdbc jdbc = new Jdbc(c, settings.name(), dialect);
            ResolvedModel m;
            try {
                m = ModelResolver.resolveSource(jdbc, dialect, settings);
            } catch (ItersnapException e) {
                throw new ItersnapException(ErrorCode.INVALID_SOURCE, "model '" + settings.name() + "': cannot read "
                        + "the repairs, whose key columns come from the source: " + e.getMessage(), e);
            }
            if (!jdbc.tableExists(Supersession.table(m))) {
                return List.of();
            }
            Supersession sql = new Supersession(SqlSteps.of(dialect));
            int k = m.keys().size();
            Map<String, List<String>> examples = new HashMap<>();
            Map<String, Long> keys = new HashMap<>();
            jdbc.query(sql.repairedKeys(m, EXAMPLE_KEYS), rs -> {
                StringBuilder key = new StringBuilder();
                for (int i = 1; i <= k; i++) {
                    key.append(i > 1 ? ", " : "").append(m.keys().get(i - 1)).append('=').append(rs.getString(i + 1));
                }
                examples.computeIfAbsent(rs.getString(1), r -> new ArrayList<>()).add(key.toString());
                keys.put(rs.getString(1), rs.getLong(k + 2));
                return null;
            });
            List<Repair> repairs = new ArrayList<>(jdbc.query(sql.repairs(m), rs -> {
                String run = rs.getString(1);
                boolean everyKey = rs.getLong(5) > 0;
                return new Repair(run, SqlValues.readLocalDateTime(rs, 2), everyKey,
                        everyKey ? null : rs.getLong(4), keys.getOrDefault(run, 0L), rs.getLong(3), rs.getLong(6),
                        examples.getOrDefault(run, List.of()));
            }));
            repairs.sort(Comparator.comparing(Repair::supersededAt, Comparator.nullsLast(Comparator.reverseOrder()))
                    .thenComparing(Repair::runId));
            return List.copyOf(limit == 0 || repairs.size() <= limit ? repairs : repairs.subList(0, limit));
        });
    }

    @Override
    public String toString() {
        return "Inspection[model=" + settings.name() + "]";
    }
}
