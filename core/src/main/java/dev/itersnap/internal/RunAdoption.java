package dev.itersnap.internal;

import dev.itersnap.core.BatchResult;
import dev.itersnap.core.ColumnNames;
import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.core.RunResult;
import dev.itersnap.core.SnapshotEvent;
import dev.itersnap.internal.sql.ModelTables;
import dev.itersnap.spi.SourceColumn;
import dev.itersnap.spi.TableSpec;
import dev.itersnap.spi.ValueType;

import java.sql.SQLException;
import java.time.Duration;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Adoption of a history another tool built: the point the ledger starts from, the checks that the source and the
 * history agree there, and the refusal of batches below it. Part of one {@link SnapshotRun}: it takes what the run
 * found and returns what it finds, and shares only the run's {@link RunContext}.
 */
final class RunAdoption {
    private final RunContext cx;
    private final RunOwnership ownership;
    private final RunDiscovery discovery;

    RunAdoption(RunContext cx, RunOwnership ownership, RunDiscovery discovery) {
        this.cx = cx;
        this.ownership = ownership;
        this.discovery = discovery;
    }

    /**
     * The point an adopted history was taken over through, while it holds: the latest {@code adopt} run (whatever its
     * status) whose ledger entry for that sequence is still the one it wrote (a full refresh that starts over forgets
     * it).
     */
    Seq adoptionPoint(ResolvedModel m, TreeMap<Seq, MetadataStore.Entry> applied) {
        dev.itersnap.core.Inspection.Adoption adoption = cx.store().adoption();
        if (adoption == null) {
            return null;
        }
        Seq point = Seq.parse(m, adoption.through());
        MetadataStore.Entry e = applied.get(point);
        return e != null && adoption.runId().equals(e.runId()) ? point : null;
    }

    /**
     * A history adopted through a sequence holds versions no batch in the source reproduces: a batch at or before
     * that point that was not there when it was adopted, or a replay reaching back to it (a restated adopted batch,
     * replay --from, full refresh), would mix new rows into versions of unknown origin. Refused before anything is
     * written, naming the way forward. {@code replayPoint}: the run's (null: none); {@code restated}: the restated
     * batches.
     */
    void refuseBelowAdoption(ResolvedModel m, TreeSet<Seq> fresh, TreeMap<Seq, MetadataStore.Entry> applied,
                             Seq replayPoint,
                             java.util.Map<Seq, MetadataStore.Entry> restated) {
        if (replayPoint == null) {
            return; // nothing late, restated or replayed: nothing can reach the adopted range (no extra read)
        }
        Seq point = adoptionPoint(m, applied);
        if (point == null) {
            return;
        }
        SortedSetView below = new SortedSetView(fresh.headSet(point, true));
        String why;
        if (!below.isEmpty()) {
            why = (below.size() == 1 ? "batch " + below.first() + " arrived" : below.size() + " batches arrived ("
                    + below.list() + ")") + " after the history was adopted through " + point + ", at or before it";
        } else if (replayPoint != null && replayPoint.compareTo(point) <= 0) {
            why = restated.containsKey(replayPoint)
                    ? "batch " + replayPoint + " changed in the source (restated) after the history was adopted "
                            + "through " + point + ", at or before that point"
                    : "the " + cx.operation().label().replace('_', ' ') + " would replay from " + replayPoint
                            + ", but the history was adopted through " + point;
        } else {
            return;
        }
        throw new ItersnapException(ErrorCode.LATE_BEFORE_ADOPTION, "model '" + cx.settings().name() + "': " + why
                + "; the versions up to there came from the adopted table, not from batches itersnap applied, so it "
                + "cannot be replayed into them. Nothing was written. Either remove or correct it in the source so "
                + "that the batches up to " + point + " are as they were when adopted, move it after " + point
                + ", or rebuild the history from the batches the source holds into a new target (full-refresh --yes "
                + "with a new target; the adopted versions are left in " + m.target() + ")");
    }

    /** A few sequences for a message. */
    record SortedSetView(java.util.SortedSet<Seq> set) {
        boolean isEmpty() {
            return set.isEmpty();
        }

        int size() {
            return set.size();
        }

        Seq first() {
            return set.first();
        }

        String list() {
            List<String> texts = set.stream().limit(5).map(Seq::text).toList();
            return String.join(", ", texts) + (set.size() > 5 ? ", ..." : "");
        }
    }

    /** What an adoption did: the point it adopted the history through, and its result. */
    record Adopted(Seq through, RunResult result) {
    }

    /**
     * Takes over an existing SCD Type 2 table (a dbt snapshot, or any with the model's meta column names) as the
     * model's history through a sequence: the batches of the source up to it are declared applied (ledger entries
     * with their rows and fingerprints, the table's versions counted on the last), the versions are kept as they are,
     * the bookkeeping columns the table lacks are added and filled (every version opened, and every closed one
     * closed, at the adoption point, so that no roll back reaches them), the columns registered and the table owned.
     * The run log records the adoption point (its replay point), which later runs hold late batches against. With
     * {@code rebuildFrom} (null: none) the adoption point is the batch before it, and the versions from it on are cut.
     */
    Adopted adopt(SnapshotRun.Resolved r, Object rebuildFrom) {
        ResolvedModel m = r.m();
        String key = m.target().toString();
        if (r.targetColumns() == null) {
            throw new ItersnapException(ErrorCode.INVALID_SETTING, "model '" + cx.settings().name() + "': target " + key
                    + " does not exist; adopt takes over an existing SCD Type 2 table (run builds a new one)");
        }
        Seq through = point(m, rebuildFrom != null ? rebuildFrom : cx.replayFrom(), rebuildFrom != null);
        Seq rebuildPoint = null;
        Object cut = null;
        if (rebuildFrom != null) {
            rebuildPoint = through;
            cut = cutTime(m, rebuildPoint);
        }
        ModelTables.OwnerMark mark;
        try {
            mark = ModelTables.parseOwnerComment(cx.jdbc().tableComment(m.target()));
        } catch (SQLException e) {
            throw cx.jdbc().failure("check owner", null, e);
        }
        MetadataStore.Owners owners = cx.store().owners(key);
        String rowOwner = owners.targetOwner();
        String mine = owners.ownTarget();
        MetadataStore.LedgerSize ledger = cx.store().ledgerSize();
        if (rowOwner != null || mark != null) {
            String owner = rowOwner != null ? rowOwner : mark.model();
            throw ownership.notOwned("target " + key + " is already an itersnap history (model '" + owner + "'"
                    + (mark != null ? ", metadata schema " + mark.metadataSchema() : "") + "); adopt takes over a table no itersnap "
                    + "ledger keeps. Nothing was written");
        }
        if (mine != null || ledger.batches() > 0) {
            throw ownership.notOwned("this model already has a history" + (mine != null ? " (" + mine + ")" : "")
                    + " with "
                    + ledger.batches() + " batches in its ledger in metadata schema " + m.metadataSchema()
                    + "; adopt takes "
                    + "over a table for a model that has none. Nothing was written");
        }
        ColumnNames n = m.meta();
        List<String> required = new ArrayList<>(m.keys());
        required.addAll(List.of(n.updatedAt(), n.validFrom(), n.validTo()));
        for (String c : required) {
            if (RunSchema.column(r.targetColumns(), c) == null) {
                throw new ItersnapException(ErrorCode.INVALID_SETTING, "model '" + cx.settings().name() + "': target "
                        + key + " has no column '" + c + "'; adopt needs the keys and the validity columns under the "
                        + "model's names (column_names maps other names). Its columns: "
                        + r.targetColumns().stream().map(SourceColumn::name).toList());
            }
        }
        SnapshotRun.Discovery source = discovery.discover(r);
        discovery.readFingerprints(m, source,
                null); // an adoption records every batch it declares applied, with its rows and fingerprint
        if (rebuildPoint == null) {
            checkAdoptionPoint(r, through, source);
        }
        if (rebuildPoint != null) {
            // the adoption point: the last batch before the rebuild point the source holds, else the sequence just
            // before it (a ledger entry with no rows that marks where the kept versions end)
            java.util.SortedSet<Seq> before = source.sequences().headSet(rebuildPoint);
            through = before.isEmpty() ? predecessor(rebuildPoint) : before.last();
        }
        cx.lock().verifyHeld();
        // bookkeeping columns (DDL first, committed on its own)
        Map<String, TableSpec.ColumnType> bookkeeping = new LinkedHashMap<>();
        bookkeeping.put(n.scdId(), TableSpec.ColumnType.text(64));
        bookkeeping.put(n.changeType(), TableSpec.ColumnType.text(16));
        bookkeeping.put(n.changedAttributes(), TableSpec.ColumnType.json());
        if (m.deletionRecords()) {
            bookkeeping.put(n.isDeleted(), TableSpec.ColumnType.bool());
        }
        bookkeeping.put(n.openedSeq(), TableSpec.ColumnType.like(m.sequenceColumn()));
        bookkeeping.put(n.closedSeq(), TableSpec.ColumnType.like(m.sequenceColumn()));
        SourceColumn flag = m.deletionRecords() ? RunSchema.column(r.targetColumns(), n.isDeleted()) : null;
        if (flag != null && flag.jdbcType() != java.sql.Types.BOOLEAN && flag.jdbcType() != java.sql.Types.BIT) {
            throw new ItersnapException(ErrorCode.INVALID_SETTING, "model '" + cx.settings().name() + "': target " + key
                    + " has column '" + flag.name() + "' of type " + flag.typeName() + "; itersnap keeps the deletion "
                    + "flag as a BOOLEAN (dbt writes the text 'True' / 'False'). Convert the column to BOOLEAN first, "
                    + "then adopt. Nothing was written");
        }
        List<String> added = new ArrayList<>();
        bookkeeping.forEach((c, type) -> {
            if (RunSchema.column(r.targetColumns(), c) == null) {
                cx.jdbc().update(cx.sql().primitives().addColumn(m.target(), c, type).inStep("adopt"));
                added.add(c);
            }
        });
        cx.jdbc().commit("adopt: add bookkeeping columns");
        String validToType = cx.settings().validToCurrent() == null ? null
                : cx.dialect().columnType(RunSchema.column(r.targetColumns(), n.validTo()));
        r.tables().adoptVersions(through.value(), cut, validToType, m.deletionRecords())
                .forEach(st -> cx.jdbc().update(st.inStep("adopt")));
        if (cx.settings().validToCurrent() != null) {
            cx.jdbc().update(cx.sql().markOpenVersions(m).inStep("adopt"));
        }
        long versions = cx.jdbc().query(r.tables().countHistory().inStep("adopt"),
                rs -> rs.getLong(1)).get(0);
        TreeSet<Seq> declared = declared(source.sequences(), through);
        Map<Seq, Fingerprint> fingerprints = new java.util.HashMap<>(source.fingerprints());
        if (!source.sequences().contains(through) && source.prints() != null) {
            // the point is no batch of the source: recorded as an empty batch whose hash no content has, so that
            // rows arriving for it later are a restatement, refused below the adoption point, not taken as applied
            fingerprints.put(through, source.prints().of(0, java.math.BigDecimal.valueOf(-1)));
        }
        List<Seq> seqs = new ArrayList<>(declared);
        List<BatchResult> results = new ArrayList<>();
        List<String> deletionTimes = new ArrayList<>();
        for (Seq s : seqs) {
            boolean last = s.equals(through);
            results.add(new BatchResult(s.shown(), source.rows().getOrDefault(s, 0L), last ? versions : 0, 0, 0, 0,
                    false, 0));
            deletionTimes.add(null);
        }
        // the adoption point goes into this run's run-log row before the ledger entries (in the same transaction where
        // the database has one): whenever the ledger holds the adoption's entries, later runs find the point, also
        // when this run fails afterwards (a rebuild's apply) or dies before its row is marked finished
        cx.store().markAdoption(cx.runId(), through.text());
        cx.store().fingerprints(fingerprints);
        cx.store().recordAll(results, seqs, cx.runId(), deletionTimes);
        Map<String, String> columns = new LinkedHashMap<>();
        for (SourceColumn src : m.sourceColumns()) {
            if (RunSchema.column(r.targetColumns(), src.name()) != null) {
                columns.put(src.name(), null); // a column the table lacks is added by the next run
            }
        }
        cx.store().registerColumns(columns);
        cx.store().own(key, cx.runId());
        cx.jdbc().update(r.tables().markOwner());
        cx.jdbc().commit("adopt");
        cx.listener().onEvent(new SnapshotEvent.HistoryAdopted(cx.settings().name(), cx.runId(), through.shown(),
                seqs.size(),
                versions, added));
        return new Adopted(through, new RunResult(cx.runId(), cx.settings().name(), results, false, null, 0,
                Duration.ZERO));
    }

    /**
     * The sequence an adoption is asked for ({@code through}, or {@code rebuilding} from), read as the model's sequence.
     *
     * @throws ItersnapException INVALID_SEQUENCE when it is no value of the sequence
     */
    static Seq point(ResolvedModel m, Object asked, boolean rebuilding) {
        try {
            return Seq.coerce(m, asked);
        } catch (IllegalArgumentException e) {
            throw new ItersnapException(ErrorCode.INVALID_SEQUENCE, "model '" + m.name() + "': cannot adopt "
                    + (rebuilding ? "rebuilding from " : "through ") + asked + ": " + e.getMessage()
                    + " (" + m.sequenceDescription() + ")");
        }
    }

    /** The batches an adoption through {@code through} declares applied: the source's up to it, and the point itself. */
    static TreeSet<Seq> declared(java.util.SortedSet<Seq> source, Seq through) {
        TreeSet<Seq> declared = new TreeSet<>(source.headSet(through));
        declared.add(through);
        return declared;
    }

    /**
     * Refuses an adoption point no table and source can be at (before anything is written): one after the newest batch
     * the source holds (every later batch up to it would be refused as below the adoption), and, where the point is a
     * time (a date or timestamp {@code sequence_by} over a date or timestamp history), one that ends before the table's
     * first version starts (the earliest {@code valid_from}, or the earliest {@code updated_at} of the table's rows
     * where that is earlier: a dbt check snapshot dates versions by the run that saw them): the next run would apply
     * over the versions the batches they came from. A point of another kind has no place in the versions' validity.
     */
    void checkAdoptionPoint(SnapshotRun.Resolved r, Seq through, SnapshotRun.Discovery source) {
        ResolvedModel m = r.m();
        String cannot = "model '" + cx.settings().name() + "': cannot adopt through " + through + ": ";
        if (source.sequences().isEmpty()) {
            throw new ItersnapException(ErrorCode.INVALID_SEQUENCE, cannot + "the source holds no batch, so no batch "
                    + "can be the last one the table holds (" + m.sequenceDescription()
                    + "). Adopt once the source "
                    + "holds the batches the table was built from. Nothing was written");
        }
        Seq newest = source.sequences().last();
        if (through.compareTo(newest) > 0) {
            throw new ItersnapException(ErrorCode.INVALID_SEQUENCE, cannot + "it is after " + newest + ", the newest "
                    + "batch the source holds; every batch up to " + through + " arriving later would be refused as "
                    + "below the adoption point. Adopt through the last batch the table holds, at most " + newest
                    + ". Nothing was written");
        }
        if (m.sequenceKey() != null || !m.sequenceType().temporal()) {
            return;
        }
        SourceColumn validFrom = RunSchema.column(r.targetColumns(), m.meta().validFrom());
        SourceColumn updatedAt = RunSchema.column(r.targetColumns(), m.updatedAt());
        if (updatedAt != null && !updatedAt.valueType().temporal()) {
            updatedAt = null;
        }
        if (!validFrom.valueType().temporal()) {
            return;
        }
        SourceColumn u = updatedAt;
        List<java.time.LocalDateTime> earliest = new ArrayList<>();
        cx.jdbc().query(r.tables().earliestTimes(u == null ? null : u.name()).inStep("adopt"), rs -> {
            for (java.time.LocalDateTime t : new java.time.LocalDateTime[] {asTime(validFrom.valueType().read(rs, 1)),
                    u == null ? null : asTime(u.valueType().read(rs, 2))}) {
                if (t != null) {
                    earliest.add(t);
                }
            }
            return null;
        });
        if (earliest.isEmpty()) {
            return; // an empty table: no version to compare with
        }
        java.time.LocalDateTime first = java.util.Collections.min(earliest);
        // a date point covers its day (a batch of a day holds rows updated during it); a timestamp is an instant
        boolean before = through.value() instanceof java.time.LocalDate d
                ? !first.isBefore(d.plusDays(1).atStartOfDay()) : first.isAfter(asTime(through.value()));
        if (before) {
            throw new ItersnapException(ErrorCode.INVALID_SEQUENCE, cannot + "it is before the table's first "
                    + "version, which starts at " + first.toString().replace('T', ' ') + " (the earliest "
                    + m.meta().validFrom() + (u != null ? " or " + u.name() : "")
                    + "); the next run would apply the "
                    + "batches after " + through + " over the versions they already made. Adopt through the last "
                    + "batch the table holds. Nothing was written");
        }
    }

    /** A date or time as a local date-time (a date at its start, an instant in UTC); null for null. */
    static java.time.LocalDateTime asTime(Object v) {
        return v instanceof java.time.LocalDate d ? d.atStartOfDay()
                : v instanceof java.time.LocalDateTime t ? t
                : v instanceof java.time.OffsetDateTime o ? o.withOffsetSameInstant(java.time.ZoneOffset.UTC)
                        .toLocalDateTime() : null;
    }

    /**
     * Where a rebuild from {@code from} cuts the versions' validity: the sequence as a time of the updated_at type
     * (a date as its start of day). Only for a date or timestamp sequence_by over a date or timestamp updated_at.
     */
    Object cutTime(ResolvedModel m, Seq from) {
        Object v = from.value();
        dev.itersnap.spi.ValueType u = m.updatedAtType();
        if (m.sequenceType().temporal() && u.temporal()) {
            if (u == m.sequenceType()) {
                return v;
            }
            if (v instanceof java.time.LocalDate d && u == dev.itersnap.spi.ValueType.TIMESTAMP) {
                return d.atStartOfDay();
            }
            if (v instanceof java.time.LocalDateTime d && u == dev.itersnap.spi.ValueType.DATE) {
                return d.toLocalDate();
            }
        }
        throw new ItersnapException(ErrorCode.INVALID_SETTING, "model '" + cx.settings().name()
                + "': adopt --rebuild-from "
                + "places the rebuild point in the versions' validity, which needs sequence_by and updated_at of the "
                + "same kind of time (DATE or TIMESTAMP; " + m.sequenceDescription() + ", updated_at '"
                + m.updatedAt() + "' is "
                + m.updatedAtColumn().typeName() + "); adopt --through the last batch the table holds instead");
    }

    /** The sequence just before a date or timestamp one (a day, a microsecond). */
    static Seq predecessor(Seq s) {
        Object v = s.value();
        Object p = v instanceof java.time.LocalDate d ? d.minusDays(1)
                : v instanceof java.time.LocalDateTime d ? d.minusNanos(1000)
                : v instanceof java.time.OffsetDateTime d ? d.minusNanos(1000) : null;
        if (p == null) {
            throw new IllegalStateException("no predecessor of " + s);
        }
        return new Seq(s.type(), p);
    }
}
