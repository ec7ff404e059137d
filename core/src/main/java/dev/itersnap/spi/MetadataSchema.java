package dev.itersnap.spi;

import dev.itersnap.core.TableName;
import dev.itersnap.spi.TableSpec.ColumnType;
import dev.itersnap.spi.TableSpec.Creation;
import dev.itersnap.spi.TableSpec.Writers;

import java.util.List;
import java.util.function.UnaryOperator;

/**
 * The metadata schema described once: the tables itersnap keeps about its models (ledger, run log, error log, column
 * registry, and the lock and lease tables a model lock may use) with their columns, folded to the database's case.
 * The only place their names are spelled; the engine's metadata store reads and writes them, a lock reads its own
 * table here. Immutable.
 */
public final class MetadataSchema {
    private final String schema;
    private final UnaryOperator<String> fold;
    private final Ledger ledger;
    private final Runs runs;
    private final Errors errors;
    private final Columns columns;
    private final Lock lock;
    private final Lease lease;
    private final Targets targets;
    private final Formats formats;

    /**
     * The ledger: one row per applied batch of each model.
     *
     * @param spec        the table
     * @param contentHash the batch's content hash as applied, with the columns it covers (NULL: not recorded, in
     *                    ledgers written before restatements were detected); added to an existing ledger by the
     *                    first run that needs it
     */
    public record Ledger(TableSpec spec, String model, String sequence, String runId, String appliedAt,
                         String sourceRows, String duplicateRows, String inserted, String updated, String deleted,
                         String rejected, String deletionTime, String reproduced, String contentHash) {
    }

    /** The run log: one row per run. */
    public record Runs(TableSpec spec, String runId, String model, String operation, String holder, String startedAt,
                       String finishedAt, String status, String batchesApplied, String lateBatch, String replayPoint,
                       String errorMessage, String logic, String checkedThrough) {
    }

    /** The error log: one row per row set aside. */
    public record Errors(TableSpec spec, String model, String runId, String sequence, String reason, String record,
                         String loggedAt) {
    }

    /**
     * The column registry: each source column of a model, the batch that introduced it, whether the source has it, and
     * for a column the source no longer has the last batch applied while it had it ({@code droppedAfter}: a replay
     * reaching back to it takes the column's values from the history up to that batch).
     */
    public record Columns(TableSpec spec, String model, String column, String introduced, String inSource,
                          String droppedAfter) {
    }

    /**
     * The owners of history tables: one row per history table (its folded, dot-joined name) with the model of this
     * metadata schema that built it. A run refuses a target another model owns, and a model owns one target.
     */
    public record Targets(TableSpec spec, String target, String model, String registeredAt, String runId) {
    }

    /**
     * The fingerprint formats: for each signature a model's ledger entries name, the format and the columns with their
     * types it stands for, so that a batch fingerprinted before the source's columns changed is compared over the
     * columns its fingerprint covers.
     */
    public record Formats(TableSpec spec, String model, String signature, String definition) {
    }

    /** The lock table: one row per model, locked by a run (for databases whose model lock is a row lock). */
    public record Lock(TableSpec spec, String model, String holder, String acquiredAt) {
    }

    /** The lease table: one row per model with its holder, expiry and fence (for databases without locks). */
    public record Lease(TableSpec spec, String model, String owner, String expiresAt, String fence) {
    }

    /**
     * The metadata schema called {@code schema} (already folded), with internal names folded by {@code fold}.
     */
    public MetadataSchema(String schema, UnaryOperator<String> fold) {
        this.schema = schema;
        this.fold = fold;
        String model = f("model");
        String sequence = f("sequence_value");
        String runId = f("run_id");
        ledger = new Ledger(TableSpec.builder(table("itersnap_ledger"), Creation.IF_NOT_EXISTS).writers(Writers.MANY).createSchema()
                .notNull(model, ColumnType.text(128)).notNull(sequence, ColumnType.text(256))
                .notNull(runId, ColumnType.text(36)).notNull(f("applied_at"), ColumnType.timestamp())
                .notNull(f("source_rows"), ColumnType.bigint()).notNull(f("duplicate_rows"), ColumnType.bigint())
                .notNull(f("inserted_rows"), ColumnType.bigint()).notNull(f("updated_rows"), ColumnType.bigint())
                .notNull(f("deleted_rows"), ColumnType.bigint()).notNull(f("rejected_rows"), ColumnType.bigint())
                .column(f("deletion_time"), ColumnType.text(64)).notNull(f("reproduced"), ColumnType.bool())
                .column(f("content_hash"), ColumnType.text(128))
                .primaryKey(model, sequence).build(),
                model, sequence, runId, f("applied_at"), f("source_rows"), f("duplicate_rows"), f("inserted_rows"),
                f("updated_rows"), f("deleted_rows"), f("rejected_rows"), f("deletion_time"), f("reproduced"),
                f("content_hash"));
        runs = new Runs(TableSpec.builder(table("itersnap_runs"), Creation.IF_NOT_EXISTS).writers(Writers.MANY)
                .notNull(runId, ColumnType.text(36)).notNull(model, ColumnType.text(128))
                .notNull(f("operation"), ColumnType.text(16)).column(f("holder"), ColumnType.text(256))
                .notNull(f("started_at"), ColumnType.timestamp()).column(f("finished_at"), ColumnType.timestamp())
                .notNull(f("status"), ColumnType.text(16)).column(f("batches_applied"), ColumnType.integer())
                .column(f("late_batch"), ColumnType.bool()).column(f("replay_point"), ColumnType.text(256))
                .column(f("error_message"), ColumnType.text(4000)).column(f("logic"), ColumnType.longText())
                .column(f("checked_through"), ColumnType.text(256)).primaryKey(runId).build(),
                runId, model, f("operation"), f("holder"), f("started_at"), f("finished_at"), f("status"),
                f("batches_applied"), f("late_batch"), f("replay_point"), f("error_message"), f("logic"),
                f("checked_through"));
        errors = new Errors(TableSpec.builder(table("itersnap_errors"), Creation.IF_NOT_EXISTS).writers(Writers.MANY)
                .notNull(model, ColumnType.text(128)).notNull(runId, ColumnType.text(36))
                .column(sequence, ColumnType.text(256)).notNull(f("reason"), ColumnType.text(32))
                .column(f("record"), ColumnType.longText()).notNull(f("logged_at"), ColumnType.timestamp()).build(),
                model, runId, sequence, f("reason"), f("record"), f("logged_at"));
        columns = new Columns(TableSpec.builder(table("itersnap_columns"), Creation.IF_NOT_EXISTS).writers(Writers.MANY)
                .notNull(model, ColumnType.text(128)).notNull(f("column_name"), ColumnType.text(256))
                .column(f("introduced_seq"), ColumnType.text(256)).notNull(f("in_source"), ColumnType.bool())
                .column(f("dropped_after"), ColumnType.text(256)).primaryKey(model, f("column_name")).build(),
                model, f("column_name"), f("introduced_seq"), f("in_source"), f("dropped_after"));
        lock = new Lock(TableSpec.builder(table("itersnap_lock"), Creation.IF_NOT_EXISTS).writers(Writers.MUTEX).createSchema()
                .notNull(model, ColumnType.text(128)).column(f("holder"), ColumnType.text(256))
                .column(f("acquired_at"), ColumnType.timestamp()).primaryKey(model).build(),
                model, f("holder"), f("acquired_at"));
        lease = new Lease(TableSpec.builder(table("itersnap_lease"), Creation.IF_NOT_EXISTS).writers(Writers.MUTEX).createSchema()
                .notNull(model, ColumnType.text(128)).column(f("owner"), ColumnType.text(256))
                .column(f("expires_at"), ColumnType.timestamp()).column(f("fence"), ColumnType.bigint())
                .primaryKey(model).build(),
                model, f("owner"), f("expires_at"), f("fence"));
        // MUTEX: two models registering the same target at once must conflict (Delta has no primary key)
        targets = new Targets(TableSpec.builder(table("itersnap_targets"), Creation.IF_NOT_EXISTS).writers(Writers.MUTEX)
                .notNull(f("target_name"), ColumnType.text(512)).notNull(model, ColumnType.text(128))
                .notNull(f("registered_at"), ColumnType.timestamp()).column(runId, ColumnType.text(36))
                .primaryKey(f("target_name")).build(),
                f("target_name"), model, f("registered_at"), runId);
        formats = new Formats(TableSpec.builder(table("itersnap_fingerprint_formats"), Creation.IF_NOT_EXISTS)
                .writers(Writers.MANY).notNull(model, ColumnType.text(128)).notNull(f("signature"), ColumnType.text(64))
                .notNull(f("definition"), ColumnType.longText()).primaryKey(model, f("signature")).build(),
                model, f("signature"), f("definition"));
    }

    /**
     * This metadata schema qualified with {@code catalog} when it names none (else this one): for statements that
     * must not depend on a session's current catalog (the Databricks lease's, run outside the statement window).
     */
    public MetadataSchema inCatalog(String catalog) {
        return catalog == null || catalog.isEmpty() || schema.contains(".") ? this
                : new MetadataSchema(catalog + "." + schema, fold);
    }

    /** The schema's name, folded: {@code schema} or {@code catalog.schema}. */
    public String schema() {
        return schema;
    }

    public Ledger ledger() {
        return ledger;
    }

    public Runs runs() {
        return runs;
    }

    public Errors errors() {
        return errors;
    }

    public Columns columns() {
        return columns;
    }

    public Lock lock() {
        return lock;
    }

    public Lease lease() {
        return lease;
    }

    public Targets targets() {
        return targets;
    }

    public Formats formats() {
        return formats;
    }

    /**
     * The tables the engine creates before a run: ledger (with the schema), error log, column registry, owners of
     * history tables, fingerprint formats, and the run log last.
     */
    public List<TableSpec> engineTables() {
        // the run log last: a run log with its newest column says every other table exists (two first runs may race:
        // the one that sees it skips creating the metadata tables; see MetadataStore.create)
        return List.of(ledger.spec(), errors.spec(), columns.spec(), targets.spec(), formats.spec(), runs.spec());
    }

    private String f(String name) {
        return fold.apply(name);
    }

    private TableName table(String name) {
        return tableNamed(fold.apply(name));
    }

    /**
     * A table of the metadata schema called {@code name} (already folded): {@code schema.name}, or {@code
     * catalog.schema.name} when the metadata schema is catalog-qualified (Unity Catalog).
     */
    public TableName tableNamed(String name) {
        List<String> parts = new java.util.ArrayList<>(List.of(schema.split("\\.")));
        parts.add(name);
        return new TableName(parts);
    }
}
