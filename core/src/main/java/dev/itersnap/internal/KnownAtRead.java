package dev.itersnap.internal;

import dev.itersnap.core.AsOf;
import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.core.TableName;
import dev.itersnap.spi.Relation;
import dev.itersnap.internal.sql.SqlSteps;
import dev.itersnap.internal.sql.Supersession;
import dev.itersnap.spi.Dialect;
import dev.itersnap.spi.SqlValues;
import dev.itersnap.spi.SourceColumn;
import dev.itersnap.spi.Statement;

import java.sql.SQLException;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The history as it was known at a moment ({@link AsOf.KnownAt}): what the moment knew, from the run log, the ledger
 * and the companion's rows ({@link Supersession.Known}), and the query over the history and its companion built on
 * it ({@link Supersession#knownAt}). Internal; see {@code IterativeSnapshot.asOfSql}.
 */
final class KnownAtRead {
    private KnownAtRead() {
    }

    static Statement query(Jdbc jdbc, Dialect dialect, ResolvedModel m, List<SourceColumn> historyColumns,
                           AsOf.KnownAt asOf) throws SQLException {
        LocalDateTime k = moment(m, asOf.knownAt());
        Supersession sql = new Supersession(SqlSteps.of(dialect));
        Map<String, LocalDateTime> finished = new HashMap<>();
        Map<String, String> status = new HashMap<>();
        jdbc.query(sql.runLog(m), rs -> {
            status.put(rs.getString(1), rs.getString(2));
            LocalDateTime f = SqlValues.readLocalDateTime(rs, 3);
            if (f != null) {
                finished.put(rs.getString(1), f);
            }
            return null;
        });
        // when each batch was first known: the earliest finish of a run that applied it (the ledger's run, or one
        // whose entry a repair replaced)
        TreeMap<Seq, LocalDateTime> first = new TreeMap<>();
        List<String[]> entries = new ArrayList<>();
        jdbc.query(sql.ledger(m), rs -> entries.add(new String[] {rs.getString(1), rs.getString(2)}));
        boolean companion = jdbc.tableExists(Supersession.table(m));
        List<String> repairs = new ArrayList<>();
        if (companion) {
            LocalDateTime pruned = jdbc.query(sql.prunedThrough(m), rs -> SqlValues.readLocalDateTime(rs, 1)).stream()
                    .filter(java.util.Objects::nonNull).findFirst().orElse(null);
            if (pruned != null && k.isBefore(pruned)) {
                throw new ItersnapException(ErrorCode.INVALID_SETTING, "model '" + m.name() + "': cannot read the "
                        + "history as known at " + k + ": superseded_retention deleted what the repairs finished up to "
                        + pruned + " superseded; read a moment from " + pruned + " on");
            }
            jdbc.query(sql.replacedEntries(m), rs -> entries.add(new String[] {rs.getString(1), rs.getString(2)}));
            jdbc.query(sql.runs(m), rs -> repairs.add(rs.getString(1)));
        }
        for (String[] e : entries) {
            LocalDateTime f = e[0] == null ? null : finished.get(e[1]);
            if (f != null) {
                first.merge(Seq.parse(m, e[0]), f, (a, b) -> a.isBefore(b) ? a : b);
            }
        }
        Seq maxKnown = null;
        for (Map.Entry<Seq, LocalDateTime> e : first.entrySet()) {
            if (!e.getValue().isAfter(k)) {
                maxKnown = e.getKey();
            }
        }
        List<Object> unknown = new ArrayList<>();
        if (maxKnown != null) {
            first.headMap(maxKnown, false).forEach((s, f) -> {
                if (f.isAfter(k)) {
                    unknown.add(s.value());
                }
            });
        }
        // a repair counts from its recorded end, whatever its status (one that committed and then failed to record
        // its success counts from its recorded failure); one still running, or dead and not found yet, after every
        // moment (what it wrote is not known until a run finishes or finds it dead: see MetadataStore.closeUnfinished)
        Map<String, LocalDateTime> end = new HashMap<>();
        for (String r : repairs) {
            if (r != null && finished.containsKey(r)) {
                end.put(r, finished.get(r));
            } else if (r != null && "running".equals(status.get(r))) {
                end.put(r, LocalDateTime.MAX);
            }
        }
        List<String> after = end.keySet().stream().filter(r -> end.get(r).isAfter(k))
                .sorted(Comparator.comparing((String r) -> end.get(r)).thenComparing(r -> r)).toList();
        Supersession.Known known = new Supersession.Known(maxKnown == null ? null : maxKnown.value(), unknown, after);
        List<String> columns = historyColumns.stream().map(SourceColumn::name).toList();
        try {
            return sql.knownAt(m, columns, known, asOf.value());
        } catch (IllegalArgumentException e) {
            throw new ItersnapException(ErrorCode.INVALID_SEQUENCE, "model '" + m.name() + "': cannot read "
                    + asOf.value() + " as a time (updated_at '" + m.updatedAt() + "'): " + e.getMessage());
        }
    }

    /**
     * Both timelines in one relation ({@link AsOf.Bitemporal}, {@link Supersession#bitemporal}). {@code forView}: the
     * query defines a view, which must read the companion even before the first repair creates it: it is created
     * here then (empty, as a repair would create it).
     */
    static Statement bitemporal(Jdbc jdbc, Dialect dialect, ResolvedModel m, List<SourceColumn> historyColumns,
                                boolean forView) throws SQLException {
        if (m.sequenceKey() != null) {
            throw new ItersnapException(ErrorCode.INVALID_SETTING, "model '" + m.name() + "': the relation of both "
                    + "timelines needs one sequence_by column (" + m.sequenceDescription() + "); read the history as "
                    + "known at a moment with AsOf.knownAt (as-of --known-at) instead");
        }
        SqlSteps steps = SqlSteps.of(dialect);
        Supersession sql = new Supersession(steps);
        TableName companion = Supersession.table(m);
        if (!jdbc.tableExists(companion) && forView) {
            for (Statement s : dialect.createTable(sql.spec(m, historyColumns))) {
                jdbc.update(s.inStep("create superseded"));
            }
        }
        List<String> companionColumns = jdbc.tableExists(companion)
                ? jdbc.describe(steps.describe(Relation.table(companion))).stream().map(SourceColumn::name).toList()
                : null;
        return sql.bitemporal(m, historyColumns, companionColumns);
    }

    /** The moment as a local date-time (the run log's clock). */
    private static LocalDateTime moment(ResolvedModel m, Object value) {
        if (value instanceof LocalDateTime t) {
            return t;
        }
        if (value instanceof LocalDate d) {
            return d.atStartOfDay();
        }
        if (value instanceof java.sql.Timestamp t) {
            return t.toLocalDateTime();
        }
        String text = String.valueOf(value).trim().replace(' ', 'T');
        try {
            return text.contains("T") ? LocalDateTime.parse(text) : LocalDate.parse(text).atStartOfDay();
        } catch (java.time.format.DateTimeParseException e) {
            throw new ItersnapException(ErrorCode.INVALID_SETTING, "model '" + m.name() + "': cannot read known-at '"
                    + value + "' as a date-time (2024-03-05T14:30:00 or 2024-03-05)");
        }
    }
}
