package dev.itersnap.testing;

import org.assertj.core.api.AbstractAssert;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/** AssertJ assertions on a {@link History}, phrased as the business rule; created by {@link ItersnapAssertions}. */
public final class HistoryAssert extends AbstractAssert<HistoryAssert, History> {

    HistoryAssert(History actual) {
        super(actual, HistoryAssert.class);
        isNotNull();
    }

    /**
     * The key (one value, or an array for a composite key) has a current version holding the given values.
     *
     * @param key            the key value; an {@code Object[]} for a composite key
     * @param columnsAndValues column name, value, column name, value, ...
     */
    public HistoryAssert hasCurrentVersion(Object key, Object... columnsAndValues) {
        Version expected = Version.version().validTo(null);
        if (columnsAndValues.length % 2 != 0) {
            throw new IllegalArgumentException("give column names and values in pairs: "
                    + Arrays.toString(columnsAndValues));
        }
        Map<String, Object> values = new java.util.LinkedHashMap<>();
        for (int i = 0; i < columnsAndValues.length; i += 2) {
            expected = expected.with(String.valueOf(columnsAndValues[i]), columnsAndValues[i + 1]);
            values.put(String.valueOf(columnsAndValues[i]), columnsAndValues[i + 1]);
        }
        List<Map<String, Object>> versions = actual.versionsOf(keyValues(key));
        Map<String, Object> current = actual.current(keyValues(key)).orElse(null);
        if (current == null) {
            failWithMessage("expected key %s to have a current version with %s, but it has none; its versions:%s",
                    keyText(key), values, lines(versions));
        }
        List<String> problems = expected.mismatches(current, actual.metaColumns());
        if (!problems.isEmpty()) {
            failWithMessage("expected the current version of key %s to hold %s, but %s; its versions:%s",
                    keyText(key), values, String.join("; ", problems), lines(versions));
        }
        return this;
    }

    /** The key has no current version: it never existed or its last version was closed (deleted). */
    public HistoryAssert hasNoCurrentVersion(Object key) {
        if (actual.current(keyValues(key)).isPresent()) {
            failWithMessage("expected key %s to have no current version, but it has; its versions:%s", keyText(key),
                    lines(actual.versionsOf(keyValues(key))));
        }
        return this;
    }

    /**
     * The key has exactly these versions, oldest first; each expectation checks only what it sets
     * (see {@link Version}).
     */
    public HistoryAssert hasVersions(Object key, Version... expected) {
        List<Map<String, Object>> versions = actual.versionsOf(keyValues(key));
        if (versions.size() != expected.length) {
            failWithMessage("expected key %s to have %s versions, but it has %s:%s", keyText(key), expected.length,
                    versions.size(), lines(versions));
        }
        List<String> problems = new ArrayList<>();
        for (int i = 0; i < expected.length; i++) {
            for (String p : expected[i].mismatches(versions.get(i), actual.metaColumns())) {
                problems.add("version " + (i + 1) + ": " + p);
            }
        }
        if (!problems.isEmpty()) {
            failWithMessage("expected the versions of key %s to be %s, but%n  %s%nits versions:%s", keyText(key),
                    Arrays.toString(expected), String.join("\n  ", problems), lines(versions));
        }
        return this;
    }

    /** The history holds this many versions in all. */
    public HistoryAssert hasVersionCount(int count) {
        if (actual.rows().size() != count) {
            failWithMessage("expected %s versions in the history, but it holds %s:%s", count, actual.rows().size(),
                    lines(actual.rows()));
        }
        return this;
    }

    private Object[] keyValues(Object key) {
        return key instanceof Object[] parts ? parts : new Object[] {key};
    }

    private static String keyText(Object key) {
        return key instanceof Object[] parts ? Arrays.toString(parts) : String.valueOf(key);
    }

    private static String lines(List<Map<String, Object>> versions) {
        if (versions.isEmpty()) {
            return " (none)";
        }
        StringBuilder out = new StringBuilder();
        versions.forEach(v -> out.append("\n  ").append(v));
        return out.toString();
    }
}
