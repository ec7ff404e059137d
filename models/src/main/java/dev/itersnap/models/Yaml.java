package dev.itersnap.models;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLParser;
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
import java.util.HashMap;
import java.util.Map;

/**
 * The YAML reader of model and project files: one document of at most {@link ModelFiles#MAX_BYTES} bytes of UTF-8,
 * no aliases, no duplicate keys, limited nesting. {@code kind} ("model file", "project file") names the file in
 * messages.
 */
final class Yaml {
    private static final ObjectMapper MAPPER = new ObjectMapper(YAMLFactory.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .loaderOptions(loaderOptions())
            .streamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(20)
                    .maxStringLength(ModelFiles.MAX_BYTES).maxNumberLength(100)
                    .maxDocumentLength(ModelFiles.MAX_BYTES).build())
            .build());

    private Yaml() {
    }

    /** A document read from text, and the line of each key ({@code /profiles/prod/password} -> 7). */
    record Document(JsonNode root, Map<String, Integer> lines) {
        /** " (line N)" for the key at {@code pointer}, or nothing when it is not known. */
        String at(String pointer) {
            Integer line = lines.get(pointer);
            return line == null ? "" : " (line " + line + ")";
        }
    }

    /** Limits of the YAML parser: no alias bombs, no deep nesting, nothing longer than a model file may be. */
    private static LoaderOptions loaderOptions() {
        LoaderOptions o = new LoaderOptions();
        o.setMaxAliasesForCollections(20);
        o.setNestingDepthLimit(20);
        o.setCodePointLimit(ModelFiles.MAX_BYTES);
        o.setAllowRecursiveKeys(false);
        return o;
    }

    /** The text of {@code file}: at most {@link ModelFiles#MAX_BYTES} bytes (checked before reading), UTF-8. */
    static String read(Path file, String kind) {
        try {
            long size = Files.size(file);
            if (size > ModelFiles.MAX_BYTES) {
                throw new ModelFileException(kind + " " + file + " is " + size + " bytes; a " + kind + " is at most "
                        + ModelFiles.MAX_BYTES + " bytes (1 MiB)");
            }
            return text(Files.readAllBytes(file), file.toString(), kind);
        } catch (NoSuchFileException e) {
            throw new ModelFileException("cannot read " + kind + " " + file + ": no such file", e);
        } catch (IOException e) {
            throw new ModelFileException("cannot read " + kind + " " + file + ": " + e.getMessage(), e);
        }
    }

    /** The bytes of a file as text: refused when binary (a NUL byte) or not UTF-8; a byte order mark dropped. */
    static String text(byte[] bytes, String origin, String kind) {
        for (int i = 0; i < bytes.length; i++) {
            if (bytes[i] == 0) {
                throw new ModelFileException(kind + " " + origin + " is a binary file (a NUL byte at offset " + i
                        + "), not YAML text");
            }
        }
        ByteBuffer in = ByteBuffer.wrap(bytes);
        CharBuffer out = CharBuffer.allocate(bytes.length);
        CoderResult r = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT).decode(in, out, true);
        if (r.isError()) {
            throw new ModelFileException(kind + " " + origin + " is not UTF-8 text (byte 0x"
                    + String.format("%02X", bytes[in.position()] & 0xFF) + " at offset " + in.position()
                    + "); save it as UTF-8");
        }
        String text = out.flip().toString();
        return text.startsWith("\uFEFF") ? text.substring(1) : text;
    }

    /** Parses one YAML document (null root when empty); {@code origin} names it in error messages. */
    static Document parse(String yaml, String origin, String kind) {
        if (yaml.length() > ModelFiles.MAX_BYTES) {
            throw new ModelFileException(origin + " is longer than a " + kind + " may be (" + ModelFiles.MAX_BYTES
                    + " characters)");
        }
        Map<String, Integer> lines = new HashMap<>();
        JsonNode root;
        try (JsonParser parser = MAPPER.createParser(yaml)) {
            scan(yaml, origin, kind, lines);
            root = MAPPER.readTree(parser);
            if (parser.nextToken() != null) {
                throw new ModelFileException(origin + " holds more than one YAML document (a second one starts at line "
                        + parser.currentLocation().getLineNr() + "); a " + kind + " is one document");
            }
        } catch (JacksonException e) {
            String where = e.getLocation() == null ? "" : " (line " + e.getLocation().getLineNr() + ")";
            throw new ModelFileException(origin + " is not valid YAML" + where + ": " + e.getOriginalMessage(), e);
        } catch (IOException e) {
            throw new ModelFileException(origin + " cannot be read: " + e.getMessage(), e);
        }
        return new Document(root == null || root.isMissingNode() || root.isNull() ? null : root, lines);
    }

    /**
     * Records the line of every key, and refuses YAML aliases ({@code *name}): Jackson reads one as the text of the
     * anchor's name (so {@code updated_at: *ts} became the column {@code ts}), and these files have nothing worth
     * repeating.
     */
    private static void scan(String yaml, String origin, String kind, Map<String, Integer> lines) throws IOException {
        try (JsonParser scan = MAPPER.createParser(yaml)) {
            YAMLParser p = (YAMLParser) scan;
            JsonToken t;
            while ((t = p.nextToken()) != null) {
                if (t == JsonToken.FIELD_NAME) {
                    lines.putIfAbsent(p.getParsingContext().pathAsPointer().toString(),
                            p.currentTokenLocation().getLineNr());
                }
                if (p.isCurrentAlias()) {
                    String key = p.currentName();
                    throw new ModelFileException(origin + " uses the YAML alias *" + p.getText() + " (line "
                            + p.currentLocation().getLineNr() + (key == null ? "" : ", setting '" + key + "'")
                            + "); a " + kind + " does not support anchors and aliases: write the value out");
                }
            }
        }
    }

    /** How a value reads in a message. */
    static String shape(JsonNode node) {
        return node.isArray() ? "a list" : node.isObject() ? "a mapping" : node.isNull() ? "nothing"
                : "'" + node.asText() + "'";
    }
}
