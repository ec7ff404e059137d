package dev.itersnap;

import dev.itersnap.core.AdoptionPlan;
import dev.itersnap.core.AsOf;
import dev.itersnap.core.AuditReport;
import dev.itersnap.core.AuditSettings;
import dev.itersnap.core.CheckReport;
import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.Inspection;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.core.LogicChange;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.RunPlan;
import dev.itersnap.core.RunResult;
import dev.itersnap.core.SnapshotListener;
import dev.itersnap.core.ValidatedModel;
import dev.itersnap.internal.Doctor;
import dev.itersnap.internal.HistoryAudit;
import dev.itersnap.internal.MetadataInspection;
import dev.itersnap.internal.PointInTime;
import dev.itersnap.internal.SnapshotEngine;
import dev.itersnap.spi.Dialect;
import dev.itersnap.spi.Dialects;

import javax.sql.DataSource;

/**
 * The entry point: keeps SCD Type 2 history tables correct when batches arrive late, twice or out of order.
 *
 * <pre>{@code
 * IterativeSnapshot snapshots = IterativeSnapshot.builder().dataSource(ds).build();
 * RunResult result = snapshots.run(settings);
 * }</pre>
 *
 * <p>Immutable and thread-safe: one instance can run many models from many threads; runs of the same model are
 * serialised by the model lock in the database, so they are also safe across processes. A run uses two connections
 * of the data source at once (one holds the model lock), so a pool needs at least two.
 */
public final class IterativeSnapshot {
    private final DataSource dataSource;
    private final Dialect dialect;
    private final SnapshotListener listener;

    private IterativeSnapshot(DataSource dataSource, Dialect dialect, SnapshotListener listener) {
        this.dataSource = dataSource;
        this.dialect = dialect;
        this.listener = listener;
    }

    /** A builder; {@link Builder#dataSource} is required. */
    public static Builder builder() {
        return new Builder();
    }

    /** The dialect in use (found from the data source unless named in the builder). */
    public Dialect dialect() {
        return dialect;
    }

    /**
     * Applies every batch of the source that the ledger does not hold, in business order; a late batch rolls the
     * history back and replays. A run with nothing new is a cheap no-op.
     *
     * @throws ItersnapException when the run fails; the history is then as after the last batch in the ledger
     */
    public RunResult run(ModelSettings model) {
        return run(model, LogicChange.REFUSE);
    }

    /**
     * As {@link #run(ModelSettings)}; {@code logicChange} says what to do when the model's logic ({@link
     * ModelSettings#logic()}) differs from the last successful run's: {@link LogicChange#REFUSE} fails with
     * {@link ErrorCode#LOGIC_CHANGE} before writing anything, {@link LogicChange#ACCEPT} keeps the history and applies
     * the new logic from now on.
     */
    public RunResult run(ModelSettings model, LogicChange logicChange) {
        required(logicChange, "run", "logicChange", ErrorCode.INVALID_SETTING,
                "LogicChange.REFUSE or LogicChange.ACCEPT");
        return engine(model, "run").run(logicChange);
    }

    /**
     * A run that compares every applied batch the source still holds with the fingerprint its ledger entry recorded
     * (an ordinary run compares only the newest ones and its share of the sweep: {@link
     * ModelSettings#restatementLookback()}, {@link ModelSettings#restatementSweep()}), replays the history from the
     * earliest restated batch, and applies new batches as {@link #run(ModelSettings)} does. For an orchestrator to
     * schedule (weekly, say): its cost grows with every row the source retains.
     */
    public RunResult runWithFullCheck(ModelSettings model) {
        return runWithFullCheck(model, LogicChange.REFUSE);
    }

    /** As {@link #runWithFullCheck(ModelSettings)}, with {@code logicChange} as in {@link #run(ModelSettings, LogicChange)}. */
    public RunResult runWithFullCheck(ModelSettings model, LogicChange logicChange) {
        required(logicChange, "runWithFullCheck", "logicChange", ErrorCode.INVALID_SETTING,
                "LogicChange.REFUSE or LogicChange.ACCEPT");
        return engine(model, "runWithFullCheck").runWithFullCheck(logicChange);
    }

    /**
     * What {@link #run(ModelSettings)} would do now, decided by the run's own steps without taking the model's lock
     * and without writing: the replay point and why, the batches rolled back and applied in order with where each is
     * read from, the restated, uncomparable and lost batches, whether a run must recover first, what the lock says
     * ({@link RunPlan}). A run that starts right after it, over the same source and metadata, does what it says. A
     * logic change the run would refuse is refused here ({@link ErrorCode#LOGIC_CHANGE}).
     */
    public RunPlan plan(ModelSettings model) {
        return engine(model, "plan").plan("run", null, LogicChange.REFUSE);
    }

    /** What {@link #runWithFullCheck(ModelSettings)} would do now, as {@link #plan(ModelSettings)} says it. */
    public RunPlan planWithFullCheck(ModelSettings model) {
        return engine(model, "planWithFullCheck").plan("full_check", null, LogicChange.REFUSE);
    }

    /** What {@link #replayFrom(ModelSettings, Object)} would do now, as {@link #plan(ModelSettings)} says it. */
    public RunPlan planReplayFrom(ModelSettings model, Object sequence) {
        required(sequence, "planReplayFrom", "sequence", ErrorCode.INVALID_SEQUENCE,
                "the batch to replay from, " + SEQUENCE_HINT);
        return engine(model, "planReplayFrom").plan("replay", sequence, LogicChange.ACCEPT);
    }

    /** What {@link #fullRefresh(ModelSettings)} would do now, as {@link #plan(ModelSettings)} says it. */
    public RunPlan planFullRefresh(ModelSettings model) {
        return engine(model, "planFullRefresh").plan("full_refresh", null, LogicChange.ACCEPT);
    }

    /**
     * What {@link #adopt(ModelSettings, Object)} through {@code through} would do with the source's batches, read from
     * the source now without writing ({@link AdoptionPlan}): the point read as a sequence (an unreadable one is refused
     * as {@code adopt} refuses it, {@link ErrorCode#INVALID_SEQUENCE}) and the batches it would declare applied. The
     * command line's {@code adopt --dry-run} prints it.
     */
    public AdoptionPlan planAdopt(ModelSettings model, Object through) {
        SnapshotEngine engine = engine(model, "planAdopt");
        required(through, "planAdopt", "through", ErrorCode.INVALID_SEQUENCE,
                "the batch to adopt the history through, " + SEQUENCE_HINT);
        return engine.planAdoption(through, false);
    }

    /**
     * What {@link #adoptRebuildingFrom(ModelSettings, Object)} from {@code from} would do with the source's batches,
     * as {@link #planAdopt} says it: the batches the rebuild would apply.
     */
    public AdoptionPlan planAdoptRebuildingFrom(ModelSettings model, Object from) {
        SnapshotEngine engine = engine(model, "planAdoptRebuildingFrom");
        required(from, "planAdoptRebuildingFrom", "from", ErrorCode.INVALID_SEQUENCE,
                "the batch to rebuild from (the oldest the source holds), " + SEQUENCE_HINT);
        return engine.planAdoption(from, true);
    }

    /**
     * Checks the model against the database without writing anything: the source query runs and returns the
     * configured columns, every column type can be carried into the history exactly, {@code delete_when} parses,
     * and every identifier fits the database's limit.
     *
     * @return the model as the checks resolved it, for a caller that shows it (the command line's {@code validate}
     *         prints it, {@link ValidatedModel}): the source query's columns with their types, the key,
     *         {@code updated_at}, the {@code sequence_by} columns and the tracked columns as the database spells them,
     *         and the kind of each sequence column. The history's own columns are not read.
     * @throws ItersnapException ({@code INVALID_SOURCE}, {@code INVALID_SETTING}) naming the problem
     */
    public ValidatedModel validate(ModelSettings model) {
        return engine(model, "validate").validate();
    }

    /**
     * Rebuilds the history from the batches the source still holds, keeping the history that came from batches no
     * longer in the source. Never runs implicitly.
     */
    public RunResult fullRefresh(ModelSettings model) {
        return engine(model, "fullRefresh").fullRefresh();
    }

    /**
     * Rolls the history back to {@code sequence} (inclusive) and replays every batch from there, then applies new
     * ones. {@code sequence} is a value of the sequence column's Java type (LocalDate, LocalDateTime, Long, String...)
     * or its text form ({@code 2024-03-01}, {@code 42}).
     */
    public RunResult replayFrom(ModelSettings model, Object sequence) {
        SnapshotEngine engine = engine(model, "replayFrom");
        required(sequence, "replayFrom", "sequence", ErrorCode.INVALID_SEQUENCE,
                "the batch to replay from, " + SEQUENCE_HINT);
        return engine.replayFrom(sequence);
    }

    /**
     * Takes over an existing SCD Type 2 table as the model's history: the table {@code target} names (a dbt snapshot,
     * or any table with the model's meta column names) keeps its versions; the source's batches up to {@code through}
     * (inclusive) are declared applied; the bookkeeping columns it lacks are added and filled so that no roll back
     * reaches below {@code through}; the model owns the table from then on. Later runs apply the batches after
     * {@code through} as usual and refuse, with {@link ErrorCode#LATE_BEFORE_ADOPTION}, a batch at or before it that
     * arrives later (or a replay reaching back to it). It does not audit the table: check it first with {@link
     * #audit(ModelSettings)} (the command line's {@code adopt} does, and stops on problems). {@code through} is a value of the sequence column's Java
     * type or its text form.
     *
     * @throws ItersnapException {@code TARGET_NOT_OWNED} when the table is already an itersnap history or the model
     *                           already has one, {@code INVALID_SETTING} when the table is missing or lacks the keys
     *                           or validity columns, {@code INVALID_SEQUENCE} for an unreadable {@code through}
     */
    public RunResult adopt(ModelSettings model, Object through) {
        SnapshotEngine engine = engine(model, "adopt");
        required(through, "adopt", "through", ErrorCode.INVALID_SEQUENCE,
                "the batch to adopt the history through, " + SEQUENCE_HINT);
        return engine.adopt(through);
    }

    /**
     * Takes over an existing SCD Type 2 table as {@link #adopt} does, repairing what the source can still rebuild:
     * the versions that start at or after {@code from} (the oldest batch the source holds) are removed, each key's
     * latest version before it is reopened unless it closed by then, the versions that closed before it are kept as
     * they are, and the source's batches from {@code from} on are applied in business order, in the same run. The
     * history is adopted through the last source batch before {@code from} (or the sequence just before it). Needs a
     * date or timestamp {@code sequence_by} over a date or timestamp {@code updated_at}: {@code from} is placed in the
     * versions' validity as that time (a date as its start of day). The result lists the batches applied.
     */
    public RunResult adoptRebuildingFrom(ModelSettings model, Object from) {
        SnapshotEngine engine = engine(model, "adoptRebuildingFrom");
        required(from, "adoptRebuildingFrom", "from", ErrorCode.INVALID_SEQUENCE,
                "the batch to rebuild from (the oldest the source holds), " + SEQUENCE_HINT);
        return engine.adoptRebuildingFrom(from);
    }

    /**
     * The SQL of the model's history as of a time or a batch ({@link AsOf}): the versions valid then, half-open
     * {@code [dbt_valid_from, dbt_valid_to)}, deleted keys left out. The point is written into the SQL as a typed
     * literal (read through the column's type first, so it cannot carry SQL), so the text can define a view.
     */
    public String asOfSql(ModelSettings model, AsOf asOf) {
        required(model, "asOfSql", "model", ErrorCode.INVALID_SETTING, "the model's ModelSettings");
        required(asOf, "asOfSql", "asOf", ErrorCode.INVALID_SETTING, "an AsOf: AsOf.time(...) or AsOf.sequence(...)");
        return new PointInTime(dataSource, dialect, model).sql(asOf);
    }

    /** Creates a view {@code view} ({@code name} or {@code schema.name}) of {@link #asOfSql}; returns its DDL. */
    public String createAsOfView(ModelSettings model, AsOf asOf, String view) {
        required(model, "createAsOfView", "model", ErrorCode.INVALID_SETTING, "the model's ModelSettings");
        required(asOf, "createAsOfView", "asOf", ErrorCode.INVALID_SETTING,
                "an AsOf: AsOf.time(...) or AsOf.sequence(...)");
        return new PointInTime(dataSource, dialect, model).createView(asOf, view);
    }

    /**
     * Checks, before a first run on a new workspace or database, what a run of {@code model} will need: the
     * connection and driver, the runtime (version, session time zone, as the dialect requires), the source query and
     * the collation of its string columns, the permission to create the metadata schema and tables (and a table in
     * the target's schema) with the table features the dialect uses, and the binding of every value type the engine
     * binds. It creates and drops one probe table in each of those schemas and writes nothing else; it never throws
     * for a failed check ({@link CheckReport#failures()}).
     */
    public CheckReport check(ModelSettings model) {
        required(model, "check", "model", ErrorCode.INVALID_SETTING, "the model's ModelSettings");
        return new Doctor(dataSource, dialect, model).check();
    }

    /**
     * What the metadata tables say about {@code model}, read without writing anything: the ledger with each batch's
     * counts, the recent runs, the model lock and its holder, the rows set aside, the recorded logic and the adoption
     * point ({@link Inspection}). Cheap to make: each of its methods reads when called.
     */
    public Inspection inspect(ModelSettings model) {
        required(model, "inspect", "model", ErrorCode.INVALID_SETTING, "the model's ModelSettings");
        return new MetadataInspection(dataSource, dialect, model);
    }

    /**
     * Checks an SCD Type 2 table (one itersnap built, or a dbt snapshot) for the marks of a history applied out of
     * order or otherwise broken, writing nothing: versions out of order, overlapping, with gaps, keys with more than
     * one current version, inverted validity, and, given the raw batches, versions that should exist and do not
     * ({@link AuditReport.Check}). What {@code itersnap audit} prints. Its cost is a few scans of the table (and of
     * the source, with one).
     *
     * <pre>{@code
     * AuditReport report = snapshots.audit(AuditSettings.builder("customers_snapshot").uniqueKey("customer_id").build());
     * if (!report.clean()) { ... report.problems() ... }
     * }</pre>
     *
     * @throws ItersnapException {@code INVALID_SETTING} when the table cannot be read or lacks a named column,
     *                           {@code INVALID_SOURCE} when the source query cannot run, {@code DATABASE_ERROR} when
     *                           a check's query fails
     */
    public AuditReport audit(AuditSettings table) {
        required(table, "audit", "table", ErrorCode.INVALID_SETTING,
                "an AuditSettings: AuditSettings.builder(table)...build()");
        return new HistoryAudit(dataSource, dialect).audit(table);
    }

    /**
     * {@link #audit(AuditSettings)} of the model's history table, under its key, meta column names and {@code
     * valid_to_current} ({@link AuditSettings#of(ModelSettings)}): the check to run before {@link #adopt} takes a table
     * over, or after anything but itersnap wrote to a history. Once the model's ledger records batches (and its source
     * can be described), it also compares each batch's versions with the ledger's count ({@link
     * AuditReport.Check#LEDGER_COUNTS}: finds a key whose every version was deleted by hand).
     */
    public AuditReport audit(ModelSettings model) {
        required(model, "audit", "model", ErrorCode.INVALID_SETTING, "the model's ModelSettings");
        AuditReport report = audit(AuditSettings.of(model));
        AuditReport.Finding ledger = HistoryAudit.ledgerCounts(dataSource, dialect, model,
                report.settings().examples());
        if (ledger == null) {
            return report;
        }
        java.util.List<AuditReport.Finding> findings = new java.util.ArrayList<>(report.findings());
        findings.add(ledger);
        return new AuditReport(report.settings(), findings);
    }

    private SnapshotEngine engine(ModelSettings model, String method) {
        required(model, method, "model", ErrorCode.INVALID_SETTING, "the model's ModelSettings");
        return new SnapshotEngine(dataSource, dialect, listener, model);
    }

    private static final String SEQUENCE_HINT = "a value of the sequence column's Java type (LocalDate, LocalDateTime, "
            + "Long, String...) or its text form (2024-03-01, 42)";

    /**
     * {@code value}; an {@link ItersnapException} with {@code code} naming the method and the argument when it is null
     * (not a NullPointerException: every error a caller can cause is an ItersnapException), saying what to give.
     */
    private static <T> T required(T value, String method, String argument, ErrorCode code, String give) {
        if (value == null) {
            throw new ItersnapException(code, "IterativeSnapshot." + method + ": argument '" + argument + "' is null; "
                    + "give " + give);
        }
        return value;
    }

    /** Builds an {@link IterativeSnapshot}; {@link #dataSource(DataSource)} is required. */
    public static final class Builder {
        private DataSource dataSource;
        private Dialect dialect;
        private String dialectName;
        private SnapshotListener listener = SnapshotListener.logging();

        private Builder() {
        }

        /** Where the source, the history table and the metadata live. Required. */
        public Builder dataSource(DataSource dataSource) {
            this.dataSource = dataSource;
            return this;
        }

        /** Names the dialect ({@code h2}, {@code postgres}, ...) instead of detecting it from the database. */
        public Builder dialect(String name) {
            this.dialectName = name;
            return this;
        }

        /** Uses this dialect instance instead of detecting one. */
        public Builder dialect(Dialect dialect) {
            this.dialect = dialect;
            return this;
        }

        /** Receives run events; default {@link SnapshotListener#logging()}. */
        public Builder listener(SnapshotListener listener) {
            this.listener = required(listener, "Builder.listener", "listener", ErrorCode.INVALID_SETTING,
                    "a SnapshotListener, or SnapshotListener.logging()");
            return this;
        }

        /** Finds the dialect (unless named) and returns the immutable, thread-safe engine. */
        public IterativeSnapshot build() {
            if (dataSource == null) {
                throw new ItersnapException(ErrorCode.INVALID_SETTING, "setting 'dataSource' is required");
            }
            Dialect d = dialect != null ? dialect
                    : dialectName != null ? Dialects.named(dialectName) : Dialects.detect(dataSource);
            return new IterativeSnapshot(dataSource, d, listener);
        }
    }
}
