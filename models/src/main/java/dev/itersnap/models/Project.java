package dev.itersnap.models;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.Secrets;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A project: a folder of model files ({@code *.yml}, {@code *.yaml}; not its subfolders) and an optional project file,
 * {@value #FILE_NAME}, in the same folder:
 *
 * <pre>
 * default_profile: dev
 * profiles:                     # connections, by environment (the command line's --profile)
 *   dev:  {url: "jdbc:h2:./warehouse"}
 *   prod: {url: "jdbc:postgresql://db/dw", user: itersnap, password: "${env:DW_PASSWORD}", pool_size: 8}
 * defaults:                     # settings every model inherits; a model file's own value wins
 *   metadata_schema: snap_meta
 *   lock_timeout: 5m
 * </pre>
 *
 * A value of the project file may hold {@code ${env:NAME}}, replaced by the environment variable (refused naming the
 * variable when it is not set; a profile's variables are read when the profile is chosen). Models carry their
 * {@code tags} for {@link #select}. Immutable and thread-safe.
 */
public final class Project {
    /** The project file's name. */
    public static final String FILE_NAME = "itersnap_project.yml";
    /** The settings a project's {@code defaults} may give (the rest belong to one model). */
    public static final List<String> DEFAULT_KEYS = List.of("metadata_schema", "lock_timeout", "restatements",
            "restatement_lookback", "restatement_sweep", "hard_deletes", "strategy", "column_names",
            "keep_superseded", "superseded_retention");
    static final List<String> KEYS = List.of("default_profile", "profiles", "defaults");
    static final List<String> PROFILE_KEYS = List.of("url", "user", "password", "pool_size");
    /** The most connections a profile's pool may hold. */
    public static final int MAX_POOL_SIZE = 64;

    private static final String KIND = "project file";
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}");
    private static final Pattern PLACEHOLDER = Pattern.compile("\\$\\{([^}]*)}");
    private static final Pattern ENV = Pattern.compile("env:([A-Za-z_][A-Za-z0-9_]*)");

    private final Path dir;
    private final List<Model> models;
    private final String defaultProfile;
    private final Map<String, ObjectNode> profiles;
    private final Yaml.Document projectFile;
    private final String projectOrigin;
    private final Function<String, String> environment;

    /** A model of the project: its settings, its tags and the file it was read from. */
    public record Model(ModelSettings settings, List<String> tags, Path file) {
        public Model {
            Objects.requireNonNull(settings, "settings");
            tags = List.copyOf(tags);
        }

        /** The model's name. */
        public String name() {
            return settings.name();
        }
    }

    /**
     * A connection profile: a JDBC URL, a user and password (each null when not given), the pool's size (null: the
     * tool's default). {@link #toString()} masks the password.
     */
    public record Profile(String name, String url, String user, String password, Integer poolSize) {
        @Override
        public String toString() {
            return "Profile[name=" + name + ", url=" + Secrets.mask(url) + ", user=" + user + ", password="
                    + (password == null ? null : Secrets.MASK) + ", poolSize=" + poolSize + "]";
        }
    }

    private Project(Path dir, List<Model> models, String defaultProfile, Map<String, ObjectNode> profiles,
                    Yaml.Document projectFile, String projectOrigin, Function<String, String> environment) {
        this.dir = dir;
        this.models = models;
        this.defaultProfile = defaultProfile;
        this.profiles = profiles;
        this.projectFile = projectFile;
        this.projectOrigin = projectOrigin;
        this.environment = environment;
    }

    /** Reads the project in {@code dir}, its {@code ${env:NAME}} from the process's environment. */
    public static Project load(Path dir) {
        return load(dir, System::getenv);
    }

    /**
     * Reads the project in {@code dir}: the project file when there is one, then every model file, each with the
     * project's defaults where it does not give the setting itself. {@code environment} answers {@code ${env:NAME}}
     * (null: not set).
     */
    public static Project load(Path dir, Function<String, String> environment) {
        Objects.requireNonNull(environment, "environment");
        if (!Files.isDirectory(dir)) {
            throw new ModelFileException("project folder " + dir + ": no such folder");
        }
        if (Files.exists(dir.resolve("itersnap_project.yaml"))) {
            throw new ModelFileException(dir.resolve("itersnap_project.yaml") + ": a project file is named "
                    + FILE_NAME + "; rename it");
        }
        Path file = dir.resolve(FILE_NAME);
        Yaml.Document doc = null;
        String origin = file.toString();
        Map<String, JsonNode> defaults = Map.of();
        Map<String, ObjectNode> profiles = new LinkedHashMap<>();
        String defaultProfile = null;
        if (Files.exists(file)) {
            doc = Yaml.parse(Yaml.read(file, KIND), origin, KIND);
            JsonNode root = doc.root() == null ? JsonNodeFactory.instance.objectNode() : doc.root();
            if (!root.isObject()) {
                throw new ModelFileException(origin + " must be a mapping of " + String.join(", ", KEYS));
            }
            for (Map.Entry<String, JsonNode> e : root.properties()) {
                if (!KEYS.contains(e.getKey())) {
                    throw new ModelFileException("unknown key '" + e.getKey() + "' in " + origin
                            + doc.at("/" + e.getKey()) + "; valid keys: " + String.join(", ", KEYS));
                }
            }
            profiles = profiles(root.get("profiles"), doc, origin);
            JsonNode dp = root.get("default_profile");
            if (dp != null && !dp.isNull()) {
                if (!dp.isTextual() || !profiles.containsKey(dp.asText())) {
                    throw new ModelFileException(origin + ": default_profile" + doc.at("/default_profile")
                            + " names no profile: " + Yaml.shape(dp) + "; profiles: " + names(profiles.keySet()));
                }
                defaultProfile = dp.asText();
            }
            defaults = defaults(root.get("defaults"), doc, origin, environment);
        }
        List<Model> models = models(dir, defaults);
        return new Project(dir, models, defaultProfile, profiles, doc, origin, environment);
    }

    /** The project's folder. */
    public Path dir() {
        return dir;
    }

    /** Every model of the project, by name. */
    public List<Model> models() {
        return models;
    }

    /** The names of the connection profiles, as the project file lists them. */
    public Set<String> profileNames() {
        return new LinkedHashSet<>(profiles.keySet());
    }

    /**
     * The connection profile {@code name}, or with null the project's {@code default_profile} (empty when it has
     * none); its {@code ${env:NAME}} are read now. An unknown name is refused naming the profiles there are.
     */
    public Optional<Profile> profile(String name) {
        String chosen = name == null ? defaultProfile : name;
        if (chosen == null) {
            return Optional.empty();
        }
        ObjectNode p = profiles.get(chosen);
        if (p == null) {
            throw new ModelFileException("no profile '" + chosen + "' in " + (projectFile == null ? dir + " (it has no "
                    + FILE_NAME + ")" : projectOrigin) + "; profiles: " + names(profiles.keySet()));
        }
        String at = "/profiles/" + chosen + "/";
        String url = value(p, "url", at, environment);
        String poolSize = value(p, "pool_size", at, environment);
        Integer pool = null;
        if (poolSize != null) {
            if (!poolSize.trim().matches("[0-9]{1,3}") || Integer.parseInt(poolSize.trim()) < 2
                    || Integer.parseInt(poolSize.trim()) > MAX_POOL_SIZE) {
                throw new ModelFileException(projectOrigin + ": profiles." + chosen + ".pool_size"
                        + projectFile.at(at + "pool_size") + " expected a number of connections from 2 to "
                        + MAX_POOL_SIZE + " (a run holds two), got '" + poolSize + "'");
            }
            pool = Integer.parseInt(poolSize.trim());
        }
        return Optional.of(new Profile(chosen, url, value(p, "user", at, environment),
                value(p, "password", at, environment), pool));
    }

    /**
     * The models chosen by {@code select} (all when empty) less those chosen by {@code exclude}, by name. A selector
     * is a model name ({@code customers}, any case), a glob over the names ({@code stg_*}, {@code ?} one character)
     * or {@code tag:NAME}. A selector that matches no model is refused naming it, the models and the tags, and so is
     * a selection that leaves no model.
     */
    public List<Model> select(List<String> select, List<String> exclude) {
        Set<Model> chosen = new LinkedHashSet<>();
        if (select == null || select.isEmpty()) {
            chosen.addAll(models);
        } else {
            for (String s : select) {
                chosen.addAll(matching(s, "selector"));
            }
        }
        if (exclude != null) {
            for (String s : exclude) {
                matching(s, "exclusion").forEach(chosen::remove);
            }
        }
        if (chosen.isEmpty()) {
            throw new ItersnapException(ErrorCode.INVALID_SETTING, "the selection leaves no model of " + dir
                    + " to work on (models: " + names(models.stream().map(Model::name).toList()) + ")");
        }
        return models.stream().filter(chosen::contains).toList();
    }

    private List<Model> matching(String selector, String what) {
        String s = selector.trim();
        List<Model> found;
        if (s.startsWith("tag:")) {
            String tag = s.substring(4);
            found = models.stream().filter(m -> m.tags().contains(tag)).toList();
        } else {
            Pattern glob = glob(s);
            found = models.stream().filter(m -> glob.matcher(m.name()).matches()).toList();
        }
        if (found.isEmpty()) {
            Set<String> tags = new TreeSet<>();
            models.forEach(m -> tags.addAll(m.tags()));
            throw new ItersnapException(ErrorCode.INVALID_SETTING, what + " '" + selector + "' matches no model of "
                    + dir + " (models: " + names(models.stream().map(Model::name).toList()) + "; tags: "
                    + (tags.isEmpty() ? "none" : String.join(", ", tags)) + ")");
        }
        return found;
    }

    /** A glob ({@code *}, {@code ?}) over model names, case-insensitive as the names are. */
    private static Pattern glob(String glob) {
        StringBuilder re = new StringBuilder();
        for (char c : glob.toCharArray()) {
            re.append(c == '*' ? ".*" : c == '?' ? "." : Pattern.quote(String.valueOf(c)));
        }
        return Pattern.compile(re.toString(), Pattern.CASE_INSENSITIVE | Pattern.UNICODE_CASE);
    }

    private static String names(java.util.Collection<String> names) {
        return names.isEmpty() ? "none" : String.join(", ", names);
    }

    /** The profiles, their shape checked (names, known keys, single values, a url); values are read when chosen. */
    private static Map<String, ObjectNode> profiles(JsonNode node, Yaml.Document doc, String origin) {
        Map<String, ObjectNode> out = new LinkedHashMap<>();
        if (node == null || node.isNull()) {
            return out;
        }
        if (!node.isObject()) {
            throw new ModelFileException(origin + ": profiles" + doc.at("/profiles") + " expected a mapping of "
                    + "profile names to connections, got " + Yaml.shape(node));
        }
        for (Map.Entry<String, JsonNode> e : node.properties()) {
            String at = "/profiles/" + e.getKey();
            if (!NAME.matcher(e.getKey()).matches()) {
                throw new ModelFileException(origin + ": profile name '" + e.getKey() + "'" + doc.at(at)
                        + " expected letters, digits, _, . and - (at most 64 characters)");
            }
            if (!e.getValue().isObject()) {
                throw new ModelFileException(origin + ": profiles." + e.getKey() + doc.at(at) + " expected a mapping "
                        + "of " + String.join(", ", PROFILE_KEYS) + ", got " + Yaml.shape(e.getValue()));
            }
            for (Map.Entry<String, JsonNode> k : e.getValue().properties()) {
                if (!PROFILE_KEYS.contains(k.getKey())) {
                    throw new ModelFileException("unknown key '" + k.getKey() + "' in profile '" + e.getKey()
                            + "' of " + origin + doc.at(at + "/" + k.getKey()) + "; valid keys: "
                            + String.join(", ", PROFILE_KEYS));
                }
                if (!k.getValue().isValueNode()) {
                    throw new ModelFileException(origin + ": profiles." + e.getKey() + "." + k.getKey()
                            + doc.at(at + "/" + k.getKey()) + " expected a single value, got "
                            + Yaml.shape(k.getValue()));
                }
            }
            JsonNode url = e.getValue().get("url");
            if (url == null || url.isNull() || url.asText().isBlank()) {
                throw new ModelFileException(origin + ": profile '" + e.getKey() + "'" + doc.at(at)
                        + " has no url (the JDBC URL of its database)");
            }
            out.put(e.getKey(), (ObjectNode) e.getValue());
        }
        return out;
    }

    /**
     * The project's defaults: known keys only, {@code ${env:NAME}} replaced, and checked as settings now (on a model
     * of placeholders) so that a bad default is named once, in the project file, not in every model.
     */
    private static Map<String, JsonNode> defaults(JsonNode node, Yaml.Document doc, String origin,
                                                  Function<String, String> environment) {
        Map<String, JsonNode> out = new LinkedHashMap<>();
        if (node == null || node.isNull()) {
            return out;
        }
        if (!node.isObject()) {
            throw new ModelFileException(origin + ": defaults" + doc.at("/defaults") + " expected a mapping of "
                    + "settings, got " + Yaml.shape(node));
        }
        for (Map.Entry<String, JsonNode> e : node.properties()) {
            String at = "/defaults/" + e.getKey();
            if (!DEFAULT_KEYS.contains(e.getKey())) {
                throw new ModelFileException("unknown default '" + e.getKey() + "' in " + origin + doc.at(at)
                        + "; the settings a project may default: " + String.join(", ", DEFAULT_KEYS)
                        + (ModelFiles.KEYS.contains(e.getKey()) ? " (" + e.getKey() + " belongs to each model file)"
                        : ""));
            }
            if (e.getValue().isNull()) {
                continue;
            }
            JsonNode value = e.getValue();
            if (value.isValueNode()) {
                value = JsonNodeFactory.instance.textNode(substitute(value.asText(), origin, "defaults."
                        + e.getKey(), doc.at(at), environment));
            } else if (value.isObject()) {
                ObjectNode copy = JsonNodeFactory.instance.objectNode();
                for (Map.Entry<String, JsonNode> v : value.properties()) {
                    copy.set(v.getKey(), v.getValue().isValueNode() && !v.getValue().isNull()
                            ? JsonNodeFactory.instance.textNode(substitute(v.getValue().asText(), origin, "defaults."
                            + e.getKey() + "." + v.getKey(), doc.at(at + "/" + v.getKey()), environment))
                            : v.getValue());
                }
                value = copy;
            }
            out.put(e.getKey(), value);
        }
        Map<String, JsonNode> probe = new LinkedHashMap<>(out);
        JsonNodeFactory f = JsonNodeFactory.instance;
        probe.put("name", f.textNode("defaults"));
        probe.put("target", f.textNode("defaults"));
        probe.put("source", f.textNode("SELECT 1"));
        probe.put("unique_key", f.textNode("k"));
        probe.put("updated_at", f.textNode("u"));
        probe.put("sequence_by", f.textNode("s"));
        try {
            ModelFiles.settings(probe, origin);
        } catch (ItersnapException e) {
            throw new ModelFileException(origin + ": defaults: " + e.getMessage(), e);
        }
        return out;
    }

    /** The model files of {@code dir}, each with the defaults it does not give itself, by name; no name twice. */
    private static List<Model> models(Path dir, Map<String, JsonNode> defaults) {
        List<Path> files;
        try (Stream<Path> list = Files.list(dir)) {
            files = list.filter(Files::isRegularFile)
                    .filter(p -> {
                        String n = p.getFileName().toString();
                        String lower = n.toLowerCase(Locale.ROOT);
                        return !n.startsWith(".") && !n.equals(FILE_NAME)
                                && (lower.endsWith(".yml") || lower.endsWith(".yaml"));
                    })
                    .sorted().toList();
        } catch (IOException e) {
            throw new ModelFileException("cannot read project folder " + dir + ": " + e.getMessage(), e);
        }
        if (files.isEmpty()) {
            throw new ModelFileException("project folder " + dir + " holds no model file (*.yml, *.yaml)");
        }
        Map<String, Model> byName = new LinkedHashMap<>();
        for (Path file : files) {
            String origin = file.toString();
            Map<String, JsonNode> settings = ModelFiles.read(Yaml.read(file, ModelFiles.KIND), origin);
            // an empty value (metadata_schema:) reads as "" and means "not given": the default applies
            defaults.forEach((key, value) -> {
                JsonNode own = settings.get(key);
                if (own == null || own.isValueNode() && own.asText().isEmpty()) {
                    settings.put(key, value);
                }
            });
            Model model;
            try {
                model = new Model(ModelFiles.settings(settings, origin), ModelFiles.tags(settings, origin), file);
            } catch (ModelFileException e) {
                throw e.getMessage().contains(origin) ? e : new ModelFileException(origin + ": " + e.getMessage(), e);
            } catch (ItersnapException e) {
                throw new ModelFileException(origin + ": " + e.getMessage(), e);
            }
            Model same = byName.put(model.name().toLowerCase(Locale.ROOT), model);
            if (same != null) {
                throw new ModelFileException("two model files name the model '" + model.name() + "': "
                        + same.file() + " and " + file + "; a model name is one model (names are case-insensitive)");
            }
        }
        List<Model> out = new ArrayList<>(byName.values());
        out.sort(Comparator.comparing(m -> m.name().toLowerCase(Locale.ROOT)));
        return List.copyOf(out);
    }

    /** A profile's value with its {@code ${env:NAME}} replaced, or null when not given. */
    private String value(ObjectNode profile, String key, String at, Function<String, String> env) {
        JsonNode v = profile.get(key);
        if (v == null || v.isNull()) {
            return null;
        }
        String pointer = at + key;
        return substitute(v.asText(), projectOrigin, pointer.substring(1).replace('/', '.'), projectFile.at(pointer),
                env);
    }

    /**
     * {@code text} with each {@code ${env:NAME}} replaced by the variable's value; any other {@code ${...}}, and a
     * variable that is not set, refused naming the file, the key, its line and the variable.
     */
    static String substitute(String text, String origin, String key, String line, Function<String, String> env) {
        Matcher m = PLACEHOLDER.matcher(text);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            Matcher name = ENV.matcher(m.group(1));
            if (!name.matches()) {
                throw new ModelFileException(origin + ": " + key + line + " holds ${" + m.group(1) + "}; write "
                        + "${env:NAME} to read the environment variable NAME");
            }
            String value = env.apply(name.group(1));
            if (value == null) {
                throw new ModelFileException(origin + ": the environment variable " + name.group(1) + " that "
                        + key + line + " reads is not set");
            }
            m.appendReplacement(out, Matcher.quoteReplacement(value));
        }
        m.appendTail(out);
        return out.toString();
    }
}
