package dev.itersnap.core;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/** Validation shared by the settings classes. Package-private: the messages are part of the public contract. */
final class Settings {
    private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    private Settings() {
    }

    static <E extends Enum<E>> E parseEnum(Class<E> type, String setting, String value) {
        if (value == null || value.isBlank()) {
            throw invalid(setting, "expected one of " + allowed(type) + ", got nothing");
        }
        try {
            return Enum.valueOf(type, value.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw invalid(setting, "expected one of " + allowed(type) + ", got '" + value + "'");
        }
    }

    private static <E extends Enum<E>> String allowed(Class<E> type) {
        return Arrays.stream(type.getEnumConstants()).map(e -> e.name().toLowerCase(Locale.ROOT))
                .collect(Collectors.joining(", "));
    }

    static String identifier(String setting, String value) {
        if (value == null || value.isBlank()) {
            throw invalid(setting, "is required");
        }
        if (!IDENTIFIER.matcher(value).matches()) {
            throw invalid(setting, "expected an identifier (letters, digits, underscore; not starting with a digit), got '"
                    + value + "'");
        }
        return value;
    }

    /**
     * A name in backticks: Unity Catalog allows catalog, schema and table names with hyphens and non-ASCII letters
     * when quoted with backticks; it refuses periods, spaces, slashes and control characters. Quotes, backslashes and
     * backticks are refused here too (a name is written into table comments).
     */
    private static final Pattern QUOTED = Pattern.compile("`([^`.\\s\\p{Z}/'\"\\\\\\p{Cntrl}]+)`");

    /**
     * One part of a table or schema name: a plain identifier, or a name in backticks (returned without them), e.g.
     * {@code `sales-eu`} or {@code `kunden_ü`}. The dialect quotes every part when it writes SQL.
     */
    static String namePart(String setting, String value) {
        return namePart(setting, value, value);
    }

    /**
     * {@link #namePart(String, String)} of one part of the dotted name {@code whole}: a refused part is quoted with
     * the whole name ({@code got 'sales-eu' in 'sales-eu.customers'}), so that the message never shows the name as if
     * it were cut at a period.
     */
    static String namePart(String setting, String value, String whole) {
        String got = "got '" + value + "'" + (whole == null || whole.equals(value) ? "" : " in '" + whole + "'");
        if (value != null && value.startsWith("`")) {
            java.util.regex.Matcher m = QUOTED.matcher(value);
            if (!m.matches()) {
                throw invalid(setting, "a name in backticks may hold any character but a period, space, slash, quote, "
                        + "backslash, backtick or control character, " + got);
            }
            return m.group(1);
        }
        if (value != null && !value.isBlank() && !IDENTIFIER.matcher(value).matches()) {
            throw invalid(setting, "expected an identifier (letters, digits, underscore; not starting with a digit) or "
                    + "a name in backticks (`sales-eu`), " + got);
        }
        return identifier(setting, value);
    }

    static List<String> identifiers(String setting, List<String> values) {
        if (values == null || values.isEmpty()) {
            throw invalid(setting, "is required (one column or a list of columns)");
        }
        for (int i = 0; i < values.size(); i++) {
            if (values.get(i) == null) { // a null element (uniqueKey((String) null), a list with a hole)
                throw invalid(setting, "lists no column at position " + (i + 1) + " (null); expected column names, got "
                        + values);
            }
            identifier(setting, values.get(i));
        }
        if (values.stream().map(v -> v.toLowerCase(Locale.ROOT)).distinct().count() != values.size()) {
            throw invalid(setting, "lists a column twice: " + values);
        }
        return List.copyOf(values);
    }

    static ItersnapException invalid(String setting, String what) {
        return new ItersnapException(ErrorCode.INVALID_SETTING, "setting '" + setting + "' " + what);
    }
}
