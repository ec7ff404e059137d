package dev.itersnap.cli;

import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.Inspection;
import dev.itersnap.spi.Relation;
import dev.itersnap.spi.SequenceKey;
import dev.itersnap.spi.ValueType;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * A model checked against the database without writing anything: the source query's columns, the configured columns
 * found in it, the sequence type, the delete_when predicate; and read-only views of its ledger and source batches.
 * Every problem is a {@link ConfigException} (exit code 2) with one line naming it.
 */
final class ModelInspection {
    final ModelSettings settings;
    final Sql sql;
    final List<Sql.Column> sourceColumns;
    final List<String> keys;
    final String updatedAt;
    /** The sequence column, or a sequence_by list's columns joined by ", ". */
    final String sequenceBy;
    /** The sequence column's type; for a sequence_by list STRING: the typed values are the lists' keys. */
    final ValueType sequenceType;
    /** The key of a sequence_by list, null for one column. */
    final SequenceKey sequenceKey;
    final List<String> sequenceParts;
    final List<String> tracked;

    private ModelInspection(ModelSettings settings, Sql sql, List<Sql.Column> sourceColumns, List<String> keys,
                            String updatedAt, List<String> sequenceParts, SequenceKey sequenceKey,
                            ValueType sequenceType, List<String> tracked) {
        this.settings = settings;
        this.sql = sql;
        this.sourceColumns = sourceColumns;
        this.keys = keys;
        this.updatedAt = updatedAt;
        this.sequenceParts = sequenceParts;
        this.sequenceBy = String.join(", ", sequenceParts);
        this.sequenceKey = sequenceKey;
        this.sequenceType = sequenceType;
        this.tracked = tracked;
    }

    /** The type of the sequence as text shows it: the column's, or the list's components'. */
    String sequenceTypeText() {
        if (sequenceKey == null) {
            return sequenceType.name().toLowerCase(Locale.ROOT).replace('_', ' ');
        }
        return "list: " + String.join(", ", sequenceKey.types().stream()
                .map(t -> t.name().toLowerCase(Locale.ROOT).replace('_', ' ')).toList());
    }

    /** Describes the source ({@code SELECT * FROM (source) s WHERE 1=0}) and checks every configured column. */
    static ModelInspection of(ModelSettings s, Sql sql) {
        String model = "model '" + s.name() + "': ";
        List<Sql.Column> source;
        try {
            source = sql.describe("SELECT * FROM " + Relation.parenthesized(s.source()) + " s WHERE 1 = 0");
        } catch (SQLException e) {
            throw new ConfigException(model + "cannot read the source query: " + firstLine(e.getMessage()), e);
        }
        for (int i = 0; i < source.size(); i++) {
            for (int j = i + 1; j < source.size(); j++) {
                if (source.get(i).name().equalsIgnoreCase(source.get(j).name())) {
                    throw new ConfigException(model + "source columns '" + source.get(i).name() + "' and '"
                            + source.get(j).name() + "' differ only by case; settings, the history and the column "
                            + "registry match column names case-insensitively, so alias one of them in the source "
                            + "query");
                }
            }
        }
        List<String> keys = new ArrayList<>();
        for (String k : s.uniqueKey()) {
            keys.add(find(source, "unique_key", k, s));
        }
        String updatedAt = find(source, "updated_at", s.updatedAt(), s);
        List<String> parts = new ArrayList<>();
        for (String p : s.sequenceByColumns()) {
            parts.add(find(source, "sequence_by", p, s));
        }
        SequenceKey key = null;
        ValueType seqType;
        if (parts.size() == 1) {
            Sql.Column seq = Sql.find(source, parts.get(0));
            if (!seq.valueType().orderable()) {
                throw new ConfigException(model + "setting 'sequence_by' column '" + parts.get(0) + "' has type "
                        + seq.typeName() + ", which is not a DATE, TIMESTAMP, integer, decimal or string type");
            }
            seqType = seq.valueType();
        } else {
            try {
                key = SequenceKey.of(parts.stream().map(p -> Sql.find(source, p).source()).toList());
            } catch (IllegalArgumentException e) {
                throw new ConfigException(model + "setting 'sequence_by' " + e.getMessage(), e);
            }
            seqType = ValueType.STRING;
        }
        if (s.deleteWhen() != null) {
            try {
                sql.rows("SELECT 1 FROM " + Relation.parenthesized(s.source()) + " s WHERE (" + s.deleteWhen()
                        + ") AND 1 = 0");
            } catch (SQLException e) {
                throw new ConfigException(model + "setting 'delete_when' is not a valid predicate over the source rows: "
                        + firstLine(e.getMessage()), e);
            }
        }
        List<String> tracked = new ArrayList<>();
        if (s.checkCols() != null) {
            for (String c : s.checkCols()) {
                tracked.add(find(source, "check_cols", c, s));
            }
        } else {
            for (Sql.Column c : source) {
                if (!keys.contains(c.name()) && !c.name().equals(updatedAt) && !parts.contains(c.name())) {
                    tracked.add(c.name());
                }
            }
        }
        return new ModelInspection(s, sql, source, keys, updatedAt, parts, key, seqType, tracked);
    }

    private static String find(List<Sql.Column> source, String setting, String name, ModelSettings s) {
        Sql.Column c = Sql.find(source, name);
        if (c == null) {
            throw new ConfigException("model '" + s.name() + "': setting '" + setting + "' names column '" + name
                    + "', which the source query does not return; source columns: "
                    + source.stream().map(Sql.Column::name).toList());
        }
        return c.name();
    }

    static String firstLine(String message) {
        if (message == null) {
            return "";
        }
        int nl = message.indexOf('\n');
        return (nl < 0 ? message : message.substring(0, nl)).strip();
    }

    /** The sequences in the model's ledger, typed and in business order, mapped to their ledger text. */
    TreeMap<Comparable<?>, String> ledgerSequences(Inspection inspection) {
        TreeMap<Comparable<?>, String> out = sequenceMap();
        for (Inspection.Batch b : inspection.ledger()) {
            out.put(typed(b.sequence()), b.sequence());
        }
        return out;
    }

    /** The distinct non-NULL sequences the source holds now, typed and in business order. */
    TreeSet<Comparable<?>> sourceSequences() throws SQLException {
        TreeSet<Comparable<?>> out = new TreeSet<>(sequenceMap().comparator());
        String query = "SELECT DISTINCT " + String.join(", ", sequenceParts.stream().map(p -> "s." + sql.quote(p))
                .toList()) + " FROM " + Relation.parenthesized(settings.source()) + " s";
        try (var st = sql.connection().createStatement(); var rs = st.executeQuery(query)) {
            while (rs.next()) {
                if (sequenceKey == null) {
                    Object v = sequenceType.read(rs, 1);
                    if (v != null) {
                        out.add((Comparable<?>) v);
                    }
                    continue;
                }
                List<Object> values = new ArrayList<>();
                for (int i = 0; i < sequenceParts.size(); i++) {
                    values.add(sequenceKey.types().get(i).read(rs, i + 1));
                }
                if (!values.contains(null)) {
                    out.add(sequenceKey.encode(values));
                }
            }
        }
        return out;
    }

    /** A value of the sequence type from its text (ledger text or a user's --from). */
    Comparable<?> typed(String text) {
        try {
            return sequenceKey != null ? sequenceKey.keyOf(text)
                    : (Comparable<?>) sequenceType.coerce(text);
        } catch (IllegalArgumentException e) {
            throw new ConfigException("model '" + settings.name() + "': sequence '" + text + "' is not a value of "
                    + "sequence_by '" + sequenceBy + "' (" + sequenceTypeText() + ")"
                    + (sequenceKey != null ? ": " + e.getMessage() : ""), e);
        }
    }

    String text(Object sequence) {
        return sequenceKey != null ? sequenceKey.text(sequenceKey.decode((String) sequence))
                : sequenceType.format(sequence);
    }

    private TreeMap<Comparable<?>, String> sequenceMap() {
        return new TreeMap<>(sequenceType::compare);
    }
}
