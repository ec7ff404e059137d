package dev.itersnap.cli;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLParser;
import dev.itersnap.core.HardDeletes;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.Restatements;
import dev.itersnap.core.Strategy;
import dev.itersnap.core.UntrackedColumns;

import org.yaml.snakeyaml.LoaderOptions;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.CoderResult;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
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
 * Reads a model's settings from YAML whose keys are exactly the setting names of docs/settings.md. The CLI checks the shape
 * (known keys, text or list or map); {@link ModelSettings.Builder#build()} checks the values.
 */
final class ModelConfig {
    /** Every key a model file may hold. */
    static final List<String> KEYS = List.of("name", "target", "source", "unique_key", "updated_at", "sequence_by",
            "strategy", "check_cols", "hard_deletes", "delete_when", "column_names", "metadata_schema", "lock_timeout",
            "restatements", "restatement_lookback", "restatement_sweep", "valid_to_current", "ignore_null_updates",
            "untracked_columns");

    /** The largest model file read (a model is a few hundred bytes; anything near this is not a model). */
    static final int MAX_BYTES = 1 << 20;

    private static final ObjectMapper YAML = new ObjectMapper(YAMLFactory.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .loaderOptions(loaderOptions())
            .streamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(20).maxStringLength(MAX_BYTES)
                    .maxNumberLength(100).maxDocumentLength(MAX_BYTES).build())
            .build());
    private static final Pattern SIMPLE_DURATION = Pattern.compile("(\\d+)\\s*(ms|s|m|h)?");

    private ModelConfig() {
    }

    /** Limits of the YAML parser: no alias bombs, no deep nesting, nothing longer than a model file may be. */
    private static LoaderOptions loaderOptions() {
        LoaderOptions o = new LoaderOptions();
        o.setMaxAliasesForCollections(20);
        o.setNestingDepthLimit(20);
        o.setCodePointLimit(MAX_BYTES);
        o.setAllowRecursiveKeys(false);
        return o;
    }

    /**
     * Reads and validates the model file: at most {@link #MAX_BYTES} bytes (checked before reading), UTF-8 text (a
     * binary file or another encoding is refused saying so), one YAML document.
     */
    static ModelSettings load(Path file) {
        try {
            long size = Files.size(file);
            if (size > MAX_BYTES) {
                throw new ConfigException("model file " + file + " is " + size + " bytes; a model file is at most "
                        + MAX_BYTES + " bytes (1 MiB)");
            }
            return parse(text(Files.readAllBytes(file), file.toString()), file.toString());
        } catch (NoSuchFileException e) {
            throw new ConfigException("cannot read model file " + file + ": no such file", e);
        } catch (IOException e) {
            throw new ConfigException("cannot read model file " + file + ": " + e.getMessage(), e);
        }
    }

    /** The bytes of a model file as text: refused when binary (a NUL byte) or not UTF-8; a byte order mark dropped. */
    static String text(byte[] bytes, String origin) {
        for (int i = 0; i < bytes.length; i++) {
            if (bytes[i] == 0) {
                throw new ConfigException("model file " + origin + " is a binary file (a NUL byte at offset " + i
                        + "), not YAML text");
            }
        }
        ByteBuffer in = ByteBuffer.wrap(bytes);
        CharBuffer out = CharBuffer.allocate(bytes.length);
        CoderResult r = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT).decode(in, out, true);
        if (r.isError()) {
            throw new ConfigException("model file " + origin + " is not UTF-8 text (byte 0x"
                    + String.format("%02X", bytes[in.position()] & 0xFF) + " at offset " + in.position()
                    + "); save it as UTF-8");
        }
        String text = out.flip().toString();
        return text.startsWith("\uFEFF") ? text.substring(1) : text;
    }

    /** Parses YAML text; {@code origin} names it in error messages. */
    static ModelSettings parse(String yaml, String origin) {
        Map<String, JsonNode> settings = read(yaml, origin);
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
        String untracked = text(settings, "untracked_columns");
        if (untracked != null) {
            b.untrackedColumns(UntrackedColumns.parse(untracked));
        }
        return b.build();
    }

    /** Reads {@code true} or {@code false} (any case). */
    /** A number of batches: digits only (the builder checks the range and names the setting). */
    static int count(String setting, String value) {
        String v = value.trim();
        if (!v.matches("[0-9]{1,9}")) {
            throw new ConfigException("setting '" + setting + "' expected a number of batches, got '" + value + "'");
        }
        return Integer.parseInt(v);
    }

    static boolean bool(String setting, String value) {
        String v = value.trim().toLowerCase(Locale.ROOT);
        if (v.equals("true") || v.equals("false")) {
            return v.equals("true");
        }
        throw new ConfigException("setting '" + setting + "' expected true or false, got '" + value + "'");
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
        throw new ConfigException("setting '" + setting + "' expected a duration such as 30s, 10m, 1h, 600 (seconds)"
                + " or PT10M, got '" + value + "'");
    }

    private static Map<String, JsonNode> read(String yaml, String origin) {
        if (yaml.length() > MAX_BYTES) {
            throw new ConfigException(origin + " is longer than a model file may be (" + MAX_BYTES + " characters)");
        }
        JsonNode root;
        try (JsonParser parser = YAML.createParser(yaml)) {
            refuseAliases(yaml, origin);
            root = YAML.readTree(parser);
            if (parser.nextToken() != null) {
                throw new ConfigException(origin + " holds more than one YAML document (a second one starts at line "
                        + parser.currentLocation().getLineNr() + "); a model file is one document");
            }
        } catch (JacksonException e) {
            String where = e.getLocation() == null ? "" : " (line " + e.getLocation().getLineNr() + ")";
            throw new ConfigException(origin + " is not valid YAML" + where + ": " + e.getOriginalMessage(), e);
        } catch (IOException e) {
            throw new ConfigException(origin + " cannot be read: " + e.getMessage(), e);
        }
        if (root == null || root.isMissingNode() || root.isNull()) {
            throw new ConfigException(origin + " is empty; expected the model's settings: " + String.join(", ", KEYS));
        }
        if (!root.isObject()) {
            throw new ConfigException(origin + " must be a mapping of setting names to values");
        }
        Map<String, JsonNode> settings = new LinkedHashMap<>();
        for (Map.Entry<String, JsonNode> e : root.properties()) {
            if (!KEYS.contains(e.getKey())) {
                throw new ConfigException("unknown setting '" + e.getKey() + "' in " + origin + "; valid settings: "
                        + String.join(", ", KEYS));
            }
            if (!e.getValue().isNull()) {
                settings.put(e.getKey(), e.getValue());
            }
        }
        return settings;
    }

    /**
     * Refuses YAML aliases ({@code *name}): Jackson reads one as the text of the anchor's name (so {@code updated_at:
     * *ts} became the column {@code ts}), and a model file has nothing worth repeating.
     */
    private static void refuseAliases(String yaml, String origin) throws IOException {
        try (JsonParser scan = YAML.createParser(yaml)) {
            YAMLParser p = (YAMLParser) scan;
            while (p.nextToken() != null) {
                if (p.isCurrentAlias()) {
                    String key = p.currentName();
                    throw new ConfigException(origin + " uses the YAML alias *" + p.getText() + " (line "
                            + p.currentLocation().getLineNr() + (key == null ? "" : ", setting '" + key + "'")
                            + "); a model file does not support anchors and aliases: write the value out");
                }
            }
        }
    }

    private static String text(Map<String, JsonNode> settings, String key) {
        JsonNode node = settings.get(key);
        if (node == null) {
            return null;
        }
        if (!node.isValueNode()) {
            throw new ConfigException("setting '" + key + "' expected a single value, got " + shape(node));
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
            throw new ConfigException("setting '" + key + "' expected a column or a list of columns, got " + shape(node));
        }
        List<String> values = new ArrayList<>();
        for (JsonNode item : node) {
            if (!item.isValueNode() || item.isNull()) {
                throw new ConfigException("setting '" + key + "' expected a list of column names, got an item that is "
                        + shape(item));
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
            throw new ConfigException("setting '" + key + "' expected a mapping such as {dbt_valid_to: valid_until}, got "
                    + shape(node));
        }
        Map<String, String> values = new LinkedHashMap<>();
        for (Map.Entry<String, JsonNode> e : node.properties()) {
            if (!e.getValue().isValueNode() || e.getValue().isNull()) {
                throw new ConfigException("setting '" + key + "' expected a column name for '" + e.getKey() + "', got "
                        + shape(e.getValue()));
            }
            values.put(e.getKey(), e.getValue().asText());
        }
        return values;
    }

    private static String shape(JsonNode node) {
        return node.isArray() ? "a list" : node.isObject() ? "a mapping" : node.isNull() ? "nothing"
                : "'" + node.asText() + "'";
    }
}
