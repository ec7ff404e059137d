package dev.itersnap.cli;

import dev.itersnap.spi.Relation;
import dev.itersnap.spi.ResolvedModel;
import dev.itersnap.spi.SequenceKey;
import dev.itersnap.spi.ValueType;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.TreeSet;

/**
 * The sequence of a model the library resolved ({@code IterativeSnapshot.validate}), as the command line reads and
 * prints it: its type, the source's batches, a user's sequence text typed. The model is resolved (and every problem
 * with it named) by the library only.
 */
final class ModelSequences {
    private final ResolvedModel model;
    /** The key of a sequence_by list, null for one column. */
    private final SequenceKey sequenceKey;
    /** The sequence column's type; for a sequence_by list STRING: the typed values are the lists' keys. */
    final ValueType type;

    ModelSequences(ResolvedModel model) {
        this.model = model;
        this.sequenceKey = model.sequenceKey();
        this.type = sequenceKey != null ? ValueType.STRING : model.sequenceType();
    }

    /** The sequence column, or a sequence_by list's columns joined by ", ". */
    String columns() {
        return String.join(", ", model.sequenceParts());
    }

    /** The type of the sequence as text shows it: the column's, or the list's components'. */
    String typeText() {
        if (sequenceKey == null) {
            return name(type);
        }
        return "list: " + String.join(", ", sequenceKey.types().stream().map(ModelSequences::name).toList());
    }

    private static String name(ValueType t) {
        return t.name().toLowerCase(Locale.ROOT).replace('_', ' ');
    }

    /** The distinct non-NULL sequences the source holds now, typed and in business order. */
    TreeSet<Comparable<?>> sourceSequences(Sql sql) throws SQLException {
        TreeSet<Comparable<?>> out = new TreeSet<>(type::compare);
        List<String> parts = model.sequenceParts();
        String query = "SELECT DISTINCT " + String.join(", ", parts.stream().map(p -> "s." + sql.quote(p)).toList())
                + " FROM " + Relation.parenthesized(model.settings().source()) + " s";
        try (var st = sql.connection().createStatement(); var rs = st.executeQuery(query)) {
            while (rs.next()) {
                if (sequenceKey == null) {
                    Object v = type.read(rs, 1);
                    if (v != null) {
                        out.add((Comparable<?>) v);
                    }
                    continue;
                }
                List<Object> values = new ArrayList<>();
                for (int i = 0; i < parts.size(); i++) {
                    values.add(sequenceKey.types().get(i).read(rs, i + 1));
                }
                if (!values.contains(null)) {
                    out.add(sequenceKey.encode(values));
                }
            }
        }
        return out;
    }

    /** A value of the sequence type from its text (a user's --through or --rebuild-from). */
    Comparable<?> typed(String text) {
        try {
            return sequenceKey != null ? sequenceKey.keyOf(text) : (Comparable<?>) type.coerce(text);
        } catch (IllegalArgumentException e) {
            throw new ConfigException("model '" + model.name() + "': sequence '" + text + "' is not a value of "
                    + "sequence_by '" + columns() + "' (" + typeText() + ")"
                    + (sequenceKey != null ? ": " + e.getMessage() : ""), e);
        }
    }

    /** The text of a typed sequence, as the ledger writes it. */
    String text(Object sequence) {
        return sequenceKey != null ? sequenceKey.text(sequenceKey.decode((String) sequence)) : type.format(sequence);
    }
}
