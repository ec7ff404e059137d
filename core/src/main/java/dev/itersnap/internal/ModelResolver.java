package dev.itersnap.internal;

import dev.itersnap.core.ColumnNames;
import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.TableName;
import dev.itersnap.spi.Dialect;
import dev.itersnap.spi.ResolvedModel;
import dev.itersnap.spi.SourceColumn;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.UnaryOperator;
import java.util.regex.Pattern;

/** Resolves settings against the database: identifier case, the source's real columns, the history's columns. */
final class ModelResolver {
    private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    /** The resolved model and the columns of the history and the archive (null when they do not exist yet). */
    record Resolution(ResolvedModel model, List<SourceColumn> targetColumns, List<SourceColumn> archiveColumns,
                      List<SourceColumn> pendingColumns) {
    }

    private ModelResolver() {
    }

    static UnaryOperator<String> folding(Connection c) throws SQLException {
        DatabaseMetaData md = c.getMetaData();
        if (md.storesUpperCaseIdentifiers()) {
            return s -> s.toUpperCase(Locale.ROOT);
        }
        if (md.storesLowerCaseIdentifiers()) {
            return s -> s.toLowerCase(Locale.ROOT);
        }
        return s -> s;
    }

    static Resolution resolve(Connection c, Dialect d, ModelSettings s) throws SQLException {
        return withTables(c, d, resolveSource(c, d, s));
    }

    /**
     * Resolves the settings against the source query only (its columns, the settings' columns, delete_when): the
     * model with no history-only columns, enough to name every table; {@link #withTables} adds what the history and
     * the archive hold. A run resolves the source once, before it takes the lock, and the tables under the lock
     * (another run may have created or changed them meanwhile).
     */
    static ResolvedModel resolveSource(Connection c, Dialect d, ModelSettings s) throws SQLException {
        UnaryOperator<String> fold = folding(c);
        List<SourceColumn> source = describe(c, "SELECT * FROM (" + s.source() + ") s WHERE 1 = 0", "source", s);
        for (SourceColumn col : source) {
            if (!IDENTIFIER.matcher(col.name()).matches()) {
                throw invalid(s, "source column '" + col.name() + "' is not a plain identifier; alias it in the source"
                        + " query (letters, digits, underscore)");
            }
            if (col.name().toLowerCase(Locale.ROOT).startsWith("itersnap_")) {
                throw invalid(s, "source column '" + col.name() + "' uses the reserved prefix itersnap_; rename it");
            }
        }
        List<String> keys = new ArrayList<>();
        for (String k : s.uniqueKey()) {
            keys.add(find(source, "unique_key", k, s));
        }
        String updatedAt = find(source, "updated_at", s.updatedAt(), s);
        String sequenceBy = find(source, "sequence_by", s.sequenceBy(), s);
        SourceColumn seqCol = column(source, sequenceBy);
        if (!seqCol.valueType().orderable()) {
            throw invalid(s, "setting 'sequence_by' column '" + sequenceBy + "' has type " + seqCol.typeName()
                    + ", which is not a DATE, TIMESTAMP, integer, decimal or string type");
        }
        if (s.deleteWhen() != null) {
            String probe = "SELECT 1 FROM (" + s.source() + ") s WHERE (" + s.deleteWhen() + ") AND 1 = 0";
            try (Statement st = c.createStatement()) {
                st.executeQuery(probe).close();
            } catch (SQLException e) {
                throw new ItersnapException(ErrorCode.INVALID_SETTING, "model '" + s.name() + "': setting "
                        + "'delete_when' is not a valid predicate over the source rows: "
                        + Jdbc.firstLine(e.getMessage()), "resolve", probe, e);
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
                if (!keys.contains(n) && !n.equals(updatedAt) && !n.equals(sequenceBy)) {
                    tracked.add(n);
                }
            }
        }
        ColumnNames meta = foldMeta(s.columnNames(), fold);
        for (SourceColumn col : source) {
            for (String mc : meta.asMap().values()) {
                if (mc.equalsIgnoreCase(col.name())) {
                    throw invalid(s, "source column '" + col.name() + "' collides with meta column '" + mc
                            + "'; rename it in the source or through column_names");
                }
            }
        }
        TableName target = new TableName(s.target().parts().stream().map(fold).toList());
        String metaSchema = fold.apply(s.metadataSchema());
        TableName stage = new TableName(List.of(metaSchema, fold.apply("itersnap_stage_" + s.name())));
        TableName work = new TableName(List.of(metaSchema, fold.apply("itersnap_work_" + s.name())));
        return new ResolvedModel(s, fold, target, metaSchema, stage, work, source, List.of(), keys, updatedAt,
                sequenceBy, tracked, meta, seqCol, column(source, updatedAt));
    }

    /** Adds the columns of the history and the archive (null when missing) to a model from {@link #resolveSource}. */
    static Resolution withTables(Connection c, Dialect d, ResolvedModel m) throws SQLException {
        ModelSettings s = m.settings();
        List<SourceColumn> targetColumns = null;
        List<String> historyOnly = new ArrayList<>();
        if (d.tableExists(c, m.target())) {
            targetColumns = describe(c, "SELECT * FROM " + qualified(d, m.target()) + " WHERE 1 = 0", "target", s);
            for (SourceColumn tc : targetColumns) {
                boolean isMeta = m.meta().asMap().values().stream().anyMatch(mc -> mc.equalsIgnoreCase(tc.name()));
                if (!isMeta && column(m.sourceColumns(), tc.name()) == null) {
                    historyOnly.add(tc.name());
                }
            }
        }
        ResolvedModel full = new ResolvedModel(s, m.fold(), m.target(), m.metadataSchema(), m.stage(), m.work(),
                m.sourceColumns(), historyOnly, m.keys(), m.updatedAt(), m.sequenceBy(), m.tracked(), m.meta(),
                m.sequenceColumn(), m.updatedAtColumn());
        List<SourceColumn> archiveColumns = d.tableExists(c, full.archive())
                ? describe(c, "SELECT * FROM " + qualified(d, full.archive()) + " WHERE 1 = 0", "archive", s) : null;
        List<SourceColumn> pendingColumns = !d.transactionalDml() && d.tableExists(c, full.pending())
                ? describe(c, "SELECT * FROM " + qualified(d, full.pending()) + " WHERE 1 = 0", "pending", s) : null;
        return new Resolution(full, targetColumns, archiveColumns, pendingColumns);
    }

    static String qualified(Dialect d, TableName t) {
        return String.join(".", t.parts().stream().map(d::quote).toList());
    }

    private static ColumnNames foldMeta(ColumnNames n, UnaryOperator<String> fold) {
        Map<String, String> m = n.asMap();
        m.replaceAll((k, v) -> fold.apply(v));
        return ColumnNames.withOverrides(m);
    }

    private static List<SourceColumn> describe(Connection c, String sql, String what, ModelSettings s) {
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            ResultSetMetaData md = rs.getMetaData();
            List<SourceColumn> out = new ArrayList<>();
            for (int i = 1; i <= md.getColumnCount(); i++) {
                out.add(new SourceColumn(md.getColumnLabel(i), md.getColumnType(i), md.getColumnTypeName(i),
                        md.getPrecision(i), md.getScale(i)));
            }
            return out;
        } catch (SQLException e) {
            throw new ItersnapException(what.equals("source") ? ErrorCode.INVALID_SOURCE : ErrorCode.DATABASE_ERROR,
                    "model '" + s.name() + "': cannot read the " + what + (what.equals("source") ? " query" : " table")
                            + ": " + Jdbc.firstLine(e.getMessage()), "resolve", sql, e);
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
