package dev.itersnap.internal;

import dev.itersnap.core.ColumnNames;
import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.internal.sql.ModelTables;
import dev.itersnap.internal.sql.SqlSteps;
import dev.itersnap.spi.Dialect;
import dev.itersnap.spi.Relation;
import dev.itersnap.spi.SourceColumn;
import dev.itersnap.spi.Statement;
import dev.itersnap.spi.TableSpec;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.UnaryOperator;
import java.util.regex.Pattern;

/** Resolves settings against the database: identifier case, the source's real columns, the history's columns. */
final class ModelResolver {
    private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    /**
     * The resolved model and the columns of the history and the archive (null when they do not exist yet); {@code
     * targetHasRows}: whether the history held a row when it was described (the same statement), null when it is
     * missing.
     */
    record Resolution(ResolvedModel model, List<SourceColumn> targetColumns, List<SourceColumn> archiveColumns,
                      List<SourceColumn> pendingColumns, Boolean targetHasRows) {
    }

    private ModelResolver() {
    }

    static Resolution resolve(Jdbc jdbc, Dialect d, ModelSettings s) throws SQLException {
        return withTables(jdbc, d, resolveSource(jdbc, d, s));
    }

    /**
     * Resolves the settings against the source query only (its columns, the settings' columns, delete_when): the
     * model with no history-only columns, enough to name every table; {@link #withTables} adds what the history and
     * the archive hold. A run resolves the source once, before it takes the lock, and the tables under the lock
     * (another run may have created or changed them meanwhile).
     */
    static ResolvedModel resolveSource(Jdbc jdbc, Dialect d, ModelSettings s) throws SQLException {
        return resolveSource(jdbc, d, s, null);
    }

    /**
     * {@link #resolveSource(Jdbc, Dialect, ModelSettings)} from the source's columns as {@link #describeSource}
     * described them in another statement ({@code described}; null: described here).
     */
    static ResolvedModel resolveSource(Jdbc jdbc, Dialect d, ModelSettings s, List<SourceColumn> described)
            throws SQLException {
        UnaryOperator<String> fold = Jdbc.folding(jdbc.connection(), d);
        List<SourceColumn> source = new ArrayList<>(described != null ? described
                : describe(jdbc, describeSource(d, s), "source", s));
        for (SourceColumn col : source) {
            if (!IDENTIFIER.matcher(col.name()).matches()) {
                throw invalid(s, "source column '" + col.name() + "' is not a plain identifier; alias it in the source"
                        + " query (letters, digits, underscore)");
            }
            if (col.name().toLowerCase(Locale.ROOT).startsWith("itersnap_")) {
                throw invalid(s, "source column '" + col.name() + "' uses the reserved prefix itersnap_; rename it");
            }
        }
        for (SourceColumn col : source) {
            try {
                d.columnType(col);
            } catch (IllegalArgumentException e) {
                throw invalid(s, "source column '" + col.name() + "' has type " + col.typeName() + ", which the "
                        + "history cannot carry exactly (" + e.getMessage() + "); cast it in the source query");
            }
        }
        for (int i = 0; i < source.size(); i++) {
            for (int j = i + 1; j < source.size(); j++) {
                if (source.get(i).name().equalsIgnoreCase(source.get(j).name())) {
                    throw invalid(s, "source columns '" + source.get(i).name() + "' and '" + source.get(j).name()
                            + "' differ only by case; settings, the history and the column registry match column "
                            + "names case-insensitively, so alias one of them in the source query");
                }
            }
        }
        List<String> keys = new ArrayList<>();
        for (String k : s.uniqueKey()) {
            keys.add(find(source, "unique_key", k, s));
        }
        String updatedAt = find(source, "updated_at", s.updatedAt(), s);
        List<String> sequenceParts = new ArrayList<>();
        for (String p : s.sequenceByColumns()) {
            sequenceParts.add(find(source, "sequence_by", p, s));
        }
        String sequenceBy = sequenceParts.get(0);
        if (sequenceParts.size() == 1) {
            SourceColumn seqCol = column(source, sequenceBy);
            if (!seqCol.valueType().orderable()) {
                throw invalid(s, "setting 'sequence_by' column '" + sequenceBy + "' has type " + seqCol.typeName()
                        + ", which is not a DATE, TIMESTAMP, integer, decimal or string type");
            }
        } else {
            List<SourceColumn> parts = sequenceParts.stream().map(p -> column(source, p)).toList();
            try {
                dev.itersnap.internal.SequenceKey.of(parts);
            } catch (IllegalArgumentException e) {
                throw invalid(s, "setting 'sequence_by' " + e.getMessage());
            }
            // the engine's own column: the key of the list, computed by the database from each source row
            sequenceBy = fold.apply("itersnap_sequence");
            String keyed = "SELECT s.*, " + SqlSteps.of(d).sequenceKey(parts, "s") + " AS " + d.quote(sequenceBy) + " FROM "
                    + Relation.parenthesized(s.source()) + " s";
            List<SourceColumn> withKey = describe(jdbc, SqlSteps.of(d).describe(Relation.query(keyed)), "source", s);
            source.add(withKey.get(withKey.size() - 1));
        }
        if (s.deleteWhen() != null) {
            Statement probe = SqlSteps.of(d).describe(Relation.query(s.source()).where(s.deleteWhen()));
            try {
                jdbc.describe(probe);
            } catch (SQLException e) {
                throw new ItersnapException(ErrorCode.INVALID_SETTING, "model '" + s.name() + "': setting "
                        + "'delete_when' is not a valid predicate over the source rows: "
                        + jdbc.summary(e), "resolve", probe.sql(), e);
            }
        }
        List<String> tracked = new ArrayList<>();
        if (s.checkCols() != null) {
            for (String cc : s.checkCols()) {
                tracked.add(find(source, "check_cols", cc, s));
            }
            tracked.sort((a, b) -> Integer.compare(indexOf(source, a), indexOf(source, b)));
        } else {
            for (SourceColumn col : source) {
                String n = col.name();
                if (!keys.contains(n) && !n.equals(updatedAt) && !n.equals(sequenceBy) && !sequenceParts.contains(n)) {
                    tracked.add(n);
                }
            }
        }
        refuseCollations(source, keys, sequenceParts, tracked, s);
        ColumnNames meta = foldMeta(s.columnNames(), fold);
        int limit = d.capabilities().maxIdentifierLength();
        if (limit > 0) {
            for (String part : s.target().parts()) {
                tooLong("target", part, limit, d, s);
            }
            tooLong("metadata_schema", s.metadataSchema(), limit, d, s);
            for (String mc : meta.asMap().values()) {
                tooLong("column_names", mc, limit, d, s);
            }
        }
        for (SourceColumn col : source) {
            for (String mc : meta.asMap().values()) {
                if (mc.equalsIgnoreCase(col.name())) {
                    throw invalid(s, "source column '" + col.name() + "' collides with meta column '" + mc
                            + "'; rename it in the source or through column_names");
                }
            }
        }
        ResolvedModel resolved = ResolvedModel.builder(s, fold).sourceColumns(source).keys(keys).updatedAt(updatedAt)
                .sequenceBy(sequenceBy).sequenceParts(sequenceParts).tracked(tracked).meta(meta).maxIdentifierLength(limit).build();
        try {
            resolved.validToCurrent();
        } catch (IllegalArgumentException e) {
            throw new ItersnapException(ErrorCode.INVALID_SETTING, "model '" + s.name() + "': setting "
                    + "'valid_to_current' must be a value of updated_at's type (column '" + updatedAt + "', "
                    + column(source, updatedAt).typeName() + "): " + e.getMessage());
        }
        refuseTooWide(d, resolved);
        return resolved;
    }

    /** The statement that describes the source query: its columns, none of its rows. */
    static Statement describeSource(Dialect d, ModelSettings s) {
        return SqlSteps.of(d).describe(Relation.query(s.source()));
    }

    /**
     * Refuses a model the database cannot hold or query, before anything is written, so that {@code validate} and
     * {@code check} refuse what a run could not do, naming the limit and the counts: the widest table (the history:
     * the source's columns, the columns that left the source and the engine's own) against {@link
     * dev.itersnap.spi.Capabilities#maxColumns()}, and the widest statements against {@link
     * dev.itersnap.spi.Capabilities#maxQueryColumns()}. Those carry two of each column of the history through a join
     * (the staged row and the version it is compared with: "find changed keys") and, under {@code strategy: check},
     * the row and two of each tracked column ("derive versions": each event with the values it is compared with);
     * {@link #ENGINE_QUERY_COLUMNS} more at most. Measured on PostgreSQL 18: a 547-column source with every column
     * tracked runs, 548 do not; the rule below allows 546 (PostgresWideSourceTest runs that one).
     */
    static void refuseTooWide(Dialect d, ResolvedModel m) {
        int source = m.sourceColumns().size() - (m.sequenceKey() != null ? 1 : 0); // less the engine's sequence key
        int left = m.historyOnly().size();
        String table = null;
        int limit = d.capabilities().maxColumns();
        if (limit > 0) {
            ModelTables t = new ModelTables(d, m);
            TableSpec widest = java.util.stream.Stream.of(t.history(), t.archive(), t.pending(), t.stage(), t.work())
                    .max(java.util.Comparator.comparingInt(spec -> spec.columns().size())).orElseThrow();
            int columns = widest.columns().size();
            if (columns > limit) {
                table = "the engine adds " + (columns - source - left) + ", so table " + widest.name() + " would have "
                        + columns + " columns, and a " + d.name() + " table has at most " + limit;
            }
        }
        String query = null;
        String trackedNote = "";
        int queryLimit = d.capabilities().maxQueryColumns();
        if (queryLimit > 0) {
            int data = m.historyDataSourceColumns().size();
            int compared = m.settings().strategy() == dev.itersnap.core.Strategy.TIMESTAMP ? 0 : m.tracked().size();
            int widest = Math.max(2 * data, data + 2 * compared) + ENGINE_QUERY_COLUMNS;
            if (widest > queryLimit) {
                trackedNote = compared > 0 ? ", " + compared + " of them tracked" : "";
                query = "the engine's widest statements would carry " + widest + " values (" + (2 * data >= data + 2 * compared ? "two of each "
                        + "column" : "each column and two of each tracked one") + ", and " + ENGINE_QUERY_COLUMNS
                        + " of its own), and " + d.name() + " allows " + queryLimit + " in a query";
            }
        }
        if (table != null || query != null) {
            throw new ItersnapException(ErrorCode.INVALID_SOURCE, "model '" + m.settings().name() + "': the source "
                    + "query returns " + source + " columns" + trackedNote + (left > 0 ? " and the history keeps "
                    + left + " that left it" : "") + "; " + (table == null ? query : query == null ? table
                    : table + "; " + query) + ": select fewer columns in the source query"
                    + (query == null ? "" : " (each tracked column counts three times, each other column twice in "
                    + "the engine's statements), or track fewer with check_cols"));
        }
    }

    /** The most values of its own the engine's widest statements carry besides the model's columns (with a margin). */
    static final int ENGINE_QUERY_COLUMNS = 32;

    /** Refuses an identifier from a setting that the database would cut or reject. */
    private static void tooLong(String setting, String identifier, int limit, Dialect d, ModelSettings s) {
        if (identifier.length() > limit) {
            throw new ItersnapException(ErrorCode.INVALID_SETTING, "model '" + s.name() + "': setting '" + setting
                    + "' names '" + identifier + "', " + identifier.length() + " characters long; " + d.name()
                    + " identifiers have at most " + limit);
        }
    }

    /** Adds the columns of the history and the archive (null when missing) to a model from {@link #resolveSource}. */
    static Resolution withTables(Jdbc jdbc, Dialect d, ResolvedModel m) throws SQLException {
        return withTables(jdbc, d, m, true);
    }

    /**
     * Adds the columns of the history and the archive (null when missing) to a model from {@link #resolveSource}.
     * {@code expected}: the history and its archive likely exist (the model ran before). They are then described
     * without asking the catalog first: one statement, where a catalog read per table is a round trip more on every
     * database (a metadata call to a SQL warehouse); only when that statement fails (a table is missing) are they
     * looked up, and described as before. Not tried after an uncommitted write, which a failed statement would end.
     */
    static Resolution withTables(Jdbc jdbc, Dialect d, ResolvedModel m, boolean expected) throws SQLException {
        ModelSettings s = m.settings();
        List<SourceColumn> targetColumns = null;
        List<SourceColumn> historyOnly = new ArrayList<>();
        boolean pending = !d.capabilities().transactionalDml() && jdbc.tableExists(m.pending());
        // the history with its archive and pending tables in one statement where they all exist, which also says
        // whether the history holds a row (its first row, if any, is what the statement returns)
        List<dev.itersnap.core.TableName> assumed = pending ? List.of(m.target(), m.archive(), m.pending())
                : List.of(m.target(), m.archive());
        Jdbc.Described described = expected && !jdbc.uncommitted()
                ? jdbc.tryDescribeWithRow(SqlSteps.of(d).describeTogether(assumed)) : null;
        boolean target = described != null || jdbc.tableExists(m.target());
        // the archive's name does not depend on the history's columns
        boolean archive = described != null || jdbc.tableExists(m.archive());
        Boolean hasRows = null;
        List<List<SourceColumn>> together = null;
        if (target) {
            List<dev.itersnap.core.TableName> tables = !archive ? List.of(m.target()) : assumed;
            if (described == null) {
                described = describeWithFirstRow(jdbc, d, tables, s);
            }
            hasRows = described.row();
            together = tables.size() == 1 ? List.of(described.columns()) : split(described.columns(), tables.size());
            targetColumns = together != null ? together.get(0)
                    : describe(jdbc, SqlSteps.of(d).describe(Relation.table(m.target())), "target", s);
            for (SourceColumn tc : targetColumns) {
                boolean isMeta = m.meta().asMap().values().stream().anyMatch(mc -> mc.equalsIgnoreCase(tc.name()));
                if (!isMeta && column(m.sourceColumns(), tc.name()) == null) {
                    historyOnly.add(tc);
                }
            }
        }
        ResolvedModel full = m.toBuilder().historyOnly(historyOnly).build();
        refuseTooWide(d, full);
        List<SourceColumn> archiveColumns = !archive ? null : together != null ? together.get(1)
                : describe(jdbc, SqlSteps.of(d).describe(Relation.table(full.archive())), "archive", s);
        List<SourceColumn> pendingColumns = !pending ? null : together != null && together.size() > 2
                ? together.get(2) : describe(jdbc, SqlSteps.of(d).describe(Relation.table(full.pending())), "pending", s);
        return new Resolution(full, targetColumns, archiveColumns, pendingColumns, hasRows);
    }

    /**
     * The columns of each of {@code tables} (which exist; the history first), described by one statement ({@link
     * SqlSteps#describeTogether}) that returns the history's first row, if any.
     */
    private static Jdbc.Described describeWithFirstRow(Jdbc jdbc, Dialect d, List<dev.itersnap.core.TableName> tables,
                                                       ModelSettings s) {
        return described(jdbc, SqlSteps.of(d).describeTogether(tables), "target", s);
    }

    /**
     * The columns {@link SqlSteps#describeTogether} described for {@code tables} tables, split at its markers; null
     * when a marker does not stand exactly once, in order.
     */
    static List<List<SourceColumn>> split(List<SourceColumn> all, int tables) {
        List<Integer> at = new ArrayList<>();
        for (int i = 1; i < tables; i++) {
            String marker = SqlSteps.describeMarker(i);
            List<Integer> found = new ArrayList<>();
            for (int c = 0; c < all.size(); c++) {
                if (all.get(c).name().equalsIgnoreCase(marker)) {
                    found.add(c);
                }
            }
            if (found.size() != 1 || (!at.isEmpty() && found.get(0) <= at.get(at.size() - 1))) {
                return null;
            }
            at.add(found.get(0));
        }
        List<List<SourceColumn>> out = new ArrayList<>();
        int from = 0;
        for (int marker : at) {
            out.add(List.copyOf(all.subList(from, marker)));
            from = marker + 1;
        }
        out.add(List.copyOf(all.subList(from, all.size())));
        return out;
    }

    /**
     * Refuses a key, sequence or tracked string column whose collation is not binary (Databricks' {@code UTF8_LCASE},
     * a locale): keys {@code A} and {@code a} would be one key, a case-only change would not be a change, string
     * sequences would order otherwise than the ledger. The type name says the collation where the database reports
     * it ({@code STRING COLLATE UTF8_LCASE} on Spark 4 and Databricks).
     */
    private static void refuseCollations(List<SourceColumn> source, List<String> keys, List<String> sequenceBy,
                                         List<String> tracked, ModelSettings s) {
        for (SourceColumn c : source) {
            String role = keys.contains(c.name()) ? "unique_key" : sequenceBy.contains(c.name()) ? "sequence_by"
                    : tracked.contains(c.name()) ? "tracked (check_cols)" : null;
            String collation = collation(c.typeName());
            if (role != null && collation != null) {
                throw new ItersnapException(ErrorCode.INVALID_SOURCE, "model '" + s.name() + "': source column '"
                        + c.name() + "' (" + role + ") has collation " + collation + ", which is not binary: values "
                        + "that differ only in case (or accents) would compare equal, so keys would collide, changes "
                        + "would be lost and string sequences would misorder. Make it binary in the source query, "
                        + "e.g. `" + c.name() + " COLLATE UTF8_BINARY AS " + c.name() + "`");
            }
        }
    }

    /** The non-binary collation in a type name such as {@code STRING COLLATE UTF8_LCASE}, or null. */
    static String collation(String typeName) {
        if (typeName == null) {
            return null;
        }
        java.util.regex.Matcher mt = java.util.regex.Pattern.compile("(?i)\\bCOLLATE\\s+`?([\\w.]+)`?")
                .matcher(typeName);
        if (!mt.find()) {
            return null;
        }
        String name = mt.group(1);
        String bare = name.substring(name.lastIndexOf('.') + 1).toUpperCase(Locale.ROOT);
        return bare.equals("UTF8_BINARY") || bare.equals("C") || bare.equals("POSIX") || bare.equals("BINARY")
                ? null : name;
    }

    private static ColumnNames foldMeta(ColumnNames n, UnaryOperator<String> fold) {
        Map<String, String> m = n.asMap();
        m.replaceAll((k, v) -> fold.apply(v));
        return ColumnNames.withOverrides(m);
    }

    private static List<SourceColumn> describe(Jdbc jdbc, Statement query, String what, ModelSettings s) {
        return described(jdbc, query, what, s).columns();
    }

    /** {@link Jdbc#describeWithRow} of {@code query}; a failure names what could not be read ({@code what}). */
    private static Jdbc.Described described(Jdbc jdbc, Statement query, String what, ModelSettings s) {
        try {
            return jdbc.describeWithRow(query);
        } catch (SQLException e) {
            throw new ItersnapException(what.equals("source") ? ErrorCode.INVALID_SOURCE : ErrorCode.DATABASE_ERROR,
                    "model '" + s.name() + "': cannot read the " + what + (what.equals("source") ? " query" : " table")
                            + ": " + jdbc.summary(e), "resolve", query.sql(), e);
        }
    }

    private static String find(List<SourceColumn> source, String setting, String name, ModelSettings s) {
        SourceColumn c = column(source, name);
        if (c == null) {
            throw invalid(s, "setting '" + setting + "' names column '" + name + "', which the source query does not "
                    + "return; source columns: " + source.stream().map(SourceColumn::name).toList());
        }
        return c.name();
    }

    private static SourceColumn column(List<SourceColumn> cols, String name) {
        for (SourceColumn c : cols) {
            if (c.name().equalsIgnoreCase(name)) {
                return c;
            }
        }
        return null;
    }

    private static int indexOf(List<SourceColumn> cols, String name) {
        for (int i = 0; i < cols.size(); i++) {
            if (cols.get(i).name().equals(name)) {
                return i;
            }
        }
        return -1;
    }

    private static ItersnapException invalid(ModelSettings s, String message) {
        return new ItersnapException(ErrorCode.INVALID_SOURCE, "model '" + s.name() + "': " + message);
    }
}
