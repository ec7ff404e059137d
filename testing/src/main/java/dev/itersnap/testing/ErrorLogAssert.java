package dev.itersnap.testing;

import org.assertj.core.api.AbstractAssert;

import java.util.List;
import java.util.Locale;

/** AssertJ assertions on the rows a model set aside ({@link ErrorLog}); created by {@link ItersnapAssertions}. */
public final class ErrorLogAssert extends AbstractAssert<ErrorLogAssert, ErrorLog> {

    ErrorLogAssert(ErrorLog actual) {
        super(actual, ErrorLogAssert.class);
        isNotNull();
    }

    /**
     * A row whose {@code column} holds {@code value} was set aside for {@code reason} ({@code null_sequence},
     * {@code null_key}, {@code duplicate_key}, {@code null_updated_at}, {@code updated_at_regression}).
     */
    public ErrorLogAssert hasSetAside(String reason, String column, Object value) {
        String c = column.toLowerCase(Locale.ROOT);
        boolean found = actual.rows().stream().anyMatch(r -> r.reason().equals(reason) && r.record().containsKey(c)
                && Values.matches(value, r.record().get(c)));
        if (!found) {
            failWithMessage("expected a row with %s = %s set aside for %s, but the error log holds:%s", column, value,
                    reason, lines(actual.rows()));
        }
        return this;
    }

    /** Exactly this many rows were set aside for {@code reason}. */
    public ErrorLogAssert hasSetAsideCount(String reason, int count) {
        long n = actual.rows().stream().filter(r -> r.reason().equals(reason)).count();
        if (n != count) {
            failWithMessage("expected %s rows set aside for %s, but found %s; the error log holds:%s", count, reason,
                    n, lines(actual.rows()));
        }
        return this;
    }

    /** No row was set aside. */
    public ErrorLogAssert isEmpty() {
        if (!actual.rows().isEmpty()) {
            failWithMessage("expected no rows set aside, but the error log holds:%s", lines(actual.rows()));
        }
        return this;
    }

    private static String lines(List<SetAsideRow> rows) {
        if (rows.isEmpty()) {
            return " (nothing)";
        }
        StringBuilder out = new StringBuilder();
        rows.forEach(r -> out.append("\n  ").append(r.reason()).append(" in batch ").append(r.sequence())
                .append(": ").append(r.record()));
        return out.toString();
    }
}
