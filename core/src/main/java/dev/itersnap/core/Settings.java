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
