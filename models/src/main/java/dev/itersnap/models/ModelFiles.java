package dev.itersnap.models;

import com.fasterxml.jackson.databind.JsonNode;
import dev.itersnap.core.HardDeletes;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.Restatements;
import dev.itersnap.core.Strategy;
import dev.itersnap.core.UntrackedColumns;

import java.nio.file.Path;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads a model's settings from a YAML model file whose keys are exactly the setting names of docs/settings.md, plus
 * {@code tags}. This class checks the shape (known keys, text or list or map); {@link ModelSettings.Builder#build()}
 * checks the values. The command line reads its {@code --config} file and its {@code --project} folder through it.
 *
 * <pre>{@code
 * ModelSettings customers = ModelFiles.load(Path.of("models/customers.yml"));
 * List<ModelSettings> all = ModelFiles.loadFolder(Path.of("models"));   // a project: Project.load for more
 * }</pre>
 *
 * Every failure is an {@link dev.itersnap.core.ItersnapException} with code {@code INVALID_SETTING}: a
 * {@link ModelFileException} for the file and its shape, the builder's own for a value. Thread-safe.
 */
public final class ModelFiles {
    /** Every key a model file may hold: the settings, and {@code tags} (a project's selection, not a setting). */
    public static final List<String> KEYS = List.of("name", "target", "source", "unique_key", "updated_at",
            "sequence_by", "strategy", "check_cols", "hard_deletes", "delete_when", "column_names", "metadata_schema",
            "lock_timeout", "restatements", "restatement_lookback", "restatement_sweep", "valid_to_current",
            "ignore_null_updates", "untracked_columns", "keep_superseded", "superseded_retention", "tags");

    /** The largest model file read (a model is a few hundred bytes; anything near this is not a model). */
    public static final int MAX_BYTES = 1 << 20;

    static final String KIND = "model file";
    private static final Pattern SIMPLE_DURATION = Pattern.compile("(\\d+)\\s*(ms|s|m|h|d)?");
    private static final Pattern TAG = Pattern.compile("[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}");

    private ModelFiles() {
    }

    /**
     * Reads and validates the model file: at most {@link #MAX_BYTES} bytes (checked before reading), UTF-8 text (a
     * binary file or another encoding is refused saying so), one YAML document.
     */
    public static ModelSettings load(Path file) {
        return parse(Yaml.read(file, KIND), file.toString());
    }

    /** Parses the text of a model file; {@code origin} (a file name) names it in error messages. */
    public static ModelSettings parse(String yaml, String origin) {
        return settings(read(yaml, origin), origin);
    }

    /**
     * Reads every model file of a folder ({@code *.yml} and {@code *.yaml}, not in subfolders), with the defaults of
     * its project file ({@value Project#FILE_NAME}) when it has one, sorted by model name; two files of the same model
     * name (names are case-insensitive) are refused naming both. The same as {@code Project.load(dir)}'s models.
     */
    public static List<ModelSettings> loadFolder(Path dir) {
        return Project.load(dir).models().stream().map(Project.Model::settings).toList();
    }

    /** The settings of a model file, by key, values of nothing left out; unknown keys refused. */
    static Map<String, JsonNode> read(String yaml, String origin) {
        JsonNode root = Yaml.parse(yaml, origin, KIND).root();
        if (root == null) {
            throw new ModelFileException(origin + " is empty; expected the model's settings: "
                    + String.join(", ", KEYS));
        }
        if (!root.isObject()) {
            throw new ModelFileException(origin + " must be a mapping of setting names to values");
        }
        Map<String, JsonNode> settings = new LinkedHashMap<>();
        for (Map.Entry<String, JsonNode> e : root.properties()) {
            if (!KEYS.contains(e.getKey())) {
                throw new ModelFileException("unknown setting '" + e.getKey() + "' in " + origin
                        + "; valid settings: " + String.join(", ", KEYS));
            }
            if (!e.getValue().isNull()) {
                settings.put(e.getKey(), e.getValue());
            }
        }
        return settings;
    }

    /** The model's tags ({@code tags: nightly} or a list), each a word of letters, digits, {@code _ . -}. */
    static List<String> tags(Map<String, JsonNode> settings, String origin) {
        JsonNode node = settings.get("tags");
        if (node == null) {
            return List.of();
        }
        List<String> tags = new ArrayList<>();
        for (JsonNode item : node.isArray() ? node : List.of(node)) {
            String tag = item.isValueNode() && !item.isNull() ? item.asText() : null;
            if (tag == null || !TAG.matcher(tag).matches()) {
                throw new ModelFileException("setting 'tags' of " + origin + " expected tags of letters, digits, _, . "
                        + "and - (at most 64 characters), got " + Yaml.shape(item));
            }
            tags.add(tag);
        }
        return tags.stream().distinct().toList();
    }

    /** The settings built from a model file's keys. */
    static ModelSettings settings(Map<String, JsonNode> settings, String origin) {
        ModelSettings.Builder b = ModelSettings.builder(text(settings, "name"))
                .target(text(settings, "target"))
                .source(text(settings, "source"))
                .uniqueKey(list(settings, "unique_key"))
                .updatedAt(text(settings, "updated_at"))
                .sequenceBy(list(settings, "sequence_by"))
                .deleteWhen(text(settings, "delete_when"))
                .validToCurrent(text(settings, "valid_to_current"))
                .columnNames(map(settings, "column_names"));
        String strategy = text(settings, "strategy");
        if (strategy != null) {
            b.strategy(Strategy.parse(strategy));
        }
        List<String> checkCols = list(settings, "check_cols");
        if (checkCols != null) {
            b.checkCols(checkCols);
        }
        String hardDeletes = text(settings, "hard_deletes");
        if (hardDeletes != null) {
            b.hardDeletes(HardDeletes.parse(hardDeletes));
        }
        String schema = text(settings, "metadata_schema");
        if (schema != null) {
            b.metadataSchema(schema);
        }
        String lockTimeout = text(settings, "lock_timeout");
        if (lockTimeout != null) {
            b.lockTimeout(duration("lock_timeout", lockTimeout));
        }
        String restatements = text(settings, "restatements");
        if (restatements != null) {
            b.restatements(Restatements.parse(restatements));
        }
        String lookback = text(settings, "restatement_lookback");
        if (lookback != null) {
            b.restatementLookback(count("restatement_lookback", lookback));
        }
        String sweep = text(settings, "restatement_sweep");
        if (sweep != null) {
            b.restatementSweep(count("restatement_sweep", sweep));
        }
        String ignoreNulls = text(settings, "ignore_null_updates");
        if (ignoreNulls != null) {
            b.ignoreNullUpdates(bool("ignore_null_updates", ignoreNulls));
        }
        String keepSuperseded = text(settings, "keep_superseded");
        if (keepSuperseded != null) {
            b.keepSuperseded(bool("keep_superseded", keepSuperseded));
        }
        String retention = text(settings, "superseded_retention");
        if (retention != null) {
            b.supersededRetention(duration("superseded_retention", retention));
        }
        String untracked = text(settings, "untracked_columns");
        if (untracked != null) {
            b.untrackedColumns(UntrackedColumns.parse(untracked));
        }
        tags(settings, origin);
        return b.build();
    }

    /** A number of batches: digits only (the builder checks the range and names the setting). */
    static int count(String setting, String value) {
        String v = value.trim();
        if (!v.matches("[0-9]{1,9}")) {
            throw new ModelFileException("setting '" + setting + "' expected a number of batches, got '" + value + "'");
        }
        return Integer.parseInt(v);
    }

    /** Reads {@code true} or {@code false} (any case). */
    static boolean bool(String setting, String value) {
        String v = value.trim().toLowerCase(Locale.ROOT);
        if (v.equals("true") || v.equals("false")) {
            return v.equals("true");
        }
        throw new ModelFileException("setting '" + setting + "' expected true or false, got '" + value + "'");
    }

    /**
     * Reads {@code 30s}, {@code 10m}, {@code 1h}, {@code 500ms}, plain seconds ({@code 600}) or ISO-8601
     * ({@code PT10M}).
     */
    static Duration duration(String setting, String value) {
        String v = value.trim().toLowerCase(Locale.ROOT);
        Matcher m = SIMPLE_DURATION.matcher(v);
        try {
            if (m.matches()) {
                long n = Long.parseLong(m.group(1));
                String unit = m.group(2) == null ? "s" : m.group(2);
                return switch (unit) {
                    case "ms" -> Duration.ofMillis(n);
                    case "m" -> Duration.ofMinutes(n);
                    case "h" -> Duration.ofHours(n);
                    case "d" -> Duration.ofDays(n);
                    default -> Duration.ofSeconds(n);
                };
            }
            if (v.startsWith("p")) {
                Duration d = Duration.parse(v.toUpperCase(Locale.ROOT));
                if (!d.isNegative()) {
                    return d;
                }
            }
        } catch (NumberFormatException | ArithmeticException | DateTimeParseException e) {
            // reported below
        }
        throw new ModelFileException("setting '" + setting + "' expected a duration such as 30s, 10m, 1h, 90d, 600 "
                + "(seconds) or PT10M, got '" + value + "'");
    }

    static String text(Map<String, JsonNode> settings, String key) {
        JsonNode node = settings.get(key);
        if (node == null) {
            return null;
        }
        if (!node.isValueNode()) {
            throw new ModelFileException("setting '" + key + "' expected a single value, got " + Yaml.shape(node));
        }
        return node.asText();
    }

    /** A list, or one value standing for a list of one. */
    private static List<String> list(Map<String, JsonNode> settings, String key) {
        JsonNode node = settings.get(key);
        if (node == null) {
            return null;
        }
        if (node.isValueNode()) {
            return List.of(node.asText());
        }
        if (!node.isArray()) {
            throw new ModelFileException("setting '" + key + "' expected a column or a list of columns, got "
                    + Yaml.shape(node));
        }
        List<String> values = new ArrayList<>();
        for (JsonNode item : node) {
            if (!item.isValueNode() || item.isNull()) {
                throw new ModelFileException("setting '" + key + "' expected a list of column names, got an item that "
                        + "is " + Yaml.shape(item));
            }
            values.add(item.asText());
        }
        return values;
    }

    private static Map<String, String> map(Map<String, JsonNode> settings, String key) {
        JsonNode node = settings.get(key);
        if (node == null) {
            return null;
        }
        if (!node.isObject()) {
            throw new ModelFileException("setting '" + key + "' expected a mapping such as {dbt_valid_to: valid_until}, "
                    + "got " + Yaml.shape(node));
        }
        Map<String, String> values = new LinkedHashMap<>();
        for (Map.Entry<String, JsonNode> e : node.properties()) {
            if (!e.getValue().isValueNode() || e.getValue().isNull()) {
                throw new ModelFileException("setting '" + key + "' expected a column name for '" + e.getKey()
                        + "', got " + Yaml.shape(e.getValue()));
            }
            values.put(e.getKey(), e.getValue().asText());
        }
        return values;
    }
}
