package dev.itersnap.spi;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.function.IntFunction;

/**
 * One SQL statement as a value: its text, the values bound to its parameter markers, in order, and the step of a run
 * it belongs to (for error messages). Text and values are appended together ({@link Builder#bind}), so the markers
 * and the values cannot drift apart; nobody counts markers. Immutable and thread-safe.
 *
 * <p>The text is kept as the fragments between markers, so a marker can be rendered as a JDBC {@code ?} or as a named
 * marker {@code :_p1 … :_pN} for a connection that binds by name ({@link NamedMarkers}), without scanning SQL.
 */
public final class Statement {
    private final String step;
    private final List<String> fragments;
    private final List<Object> values;

    private Statement(String step, List<String> fragments, List<Object> values) {
        this.step = step;
        this.fragments = fragments;
        this.values = values;
    }

    /** A statement of {@code step} without parameters. */
    public static Statement of(String step, String sql) {
        return builder(step).sql(sql).build();
    }

    /** Starts a statement of {@code step} (a short phrase such as {@code "classify batch"}). */
    public static Builder builder(String step) {
        return new Builder(step);
    }

    /** The step of the run the statement belongs to. */
    public String step() {
        return step;
    }

    /** The same statement, named as part of another step. */
    public Statement inStep(String otherStep) {
        return new Statement(otherStep, fragments, values);
    }

    /**
     * The same statement without the leading text {@code prefix} (which must lie before its first parameter marker),
     * or null when its text does not start with it: the query of an {@code INSERT INTO t (columns) query}, to be
     * written into another statement ({@link Builder#sql(Statement)}).
     */
    public Statement afterPrefix(String prefix) {
        if (!fragments.get(0).startsWith(prefix)) {
            return null;
        }
        List<String> rest = new ArrayList<>(fragments);
        rest.set(0, rest.get(0).substring(prefix.length()));
        return new Statement(step, Collections.unmodifiableList(rest), values);
    }

    /** The text with a JDBC {@code ?} for each value. */
    public String sql() {
        return sql(i -> "?");
    }

    /** The text with {@code marker.apply(i)} for the i-th value (from 1). */
    public String sql(IntFunction<String> marker) {
        StringBuilder b = new StringBuilder(fragments.get(0));
        for (int i = 1; i < fragments.size(); i++) {
            b.append(marker.apply(i)).append(fragments.get(i));
        }
        return b.toString();
    }

    /** The bound values, in marker order (null is a value: SQL NULL). */
    public List<Object> values() {
        return values;
    }

    /**
     * Prepares the statement on a JDBC connection with every value bound: {@code ?} markers, or {@code :_pN} when the
     * connection binds named markers ({@link NamedMarkers}); each value through the setter of its SQL type
     * ({@link SqlValues#bind}). The caller closes the result.
     */
    public PreparedStatement prepare(Connection c) throws SQLException {
        return prepare(c, SqlValues::bind);
    }

    /**
     * As {@link #prepare(Connection)}, each value bound by {@code binder} (a dialect's {@link Dialect#valueBinder()}).
     */
    public PreparedStatement prepare(Connection c, ValueBinder binder) throws SQLException {
        boolean named = c.isWrapperFor(NamedMarkers.class);
        PreparedStatement ps = c.prepareStatement(named ? sql(NamedMarkers::marker) : sql());
        try {
            for (int i = 0; i < values.size(); i++) {
                binder.bind(ps, i + 1, values.get(i));
            }
            return ps;
        } catch (SQLException | RuntimeException e) {
            ps.close();
            throw e;
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Statement s && s.fragments.equals(fragments) && s.values.equals(values)
                && s.step.equals(step);
    }

    @Override
    public int hashCode() {
        return Objects.hash(step, fragments, values);
    }

    /** The text with {@code ?} markers (the form error messages and expected-SQL tests show). */
    @Override
    public String toString() {
        return sql();
    }

    /** Builds a {@link Statement}: text and bound values appended in the order they appear. Not thread-safe. */
    public static final class Builder {
        private final String step;
        private final List<String> fragments = new ArrayList<>();
        private final List<Object> values = new ArrayList<>();
        private StringBuilder current = new StringBuilder();

        private Builder(String step) {
            this.step = Objects.requireNonNull(step, "step");
        }

        /** Appends SQL text (no parameter markers: values go through {@link #bind}). */
        public Builder sql(String text) {
            current.append(text);
            return this;
        }

        /** Appends a parameter marker bound to {@code value}. */
        public Builder bind(Object value) {
            fragments.add(current.toString());
            current = new StringBuilder();
            values.add(value);
            return this;
        }

        /** Appends another statement's text and values (a subquery, a source). */
        public Builder sql(Statement part) {
            current.append(part.fragments.get(0));
            for (int i = 1; i < part.fragments.size(); i++) {
                bind(part.values.get(i - 1));
                current.append(part.fragments.get(i));
            }
            return this;
        }

        /** True when nothing has been appended yet. */
        public boolean isEmpty() {
            return fragments.isEmpty() && current.length() == 0;
        }

        /**
         * @throws IllegalStateException when the statement binds more than {@link SqlValues#MAX_PARAMETERS} values
         *                               (the Databricks driver's limit): a list must be split over statements
         */
        public Statement build() {
            if (values.size() > SqlValues.MAX_PARAMETERS) {
                throw new IllegalStateException("statement of step '" + step + "' binds " + values.size()
                        + " values, more than the " + SqlValues.MAX_PARAMETERS + " a statement may carry");
            }
            List<String> f = new ArrayList<>(fragments);
            f.add(current.toString());
            return new Statement(step, List.copyOf(f), Collections.unmodifiableList(new ArrayList<>(values)));
        }
    }
}
