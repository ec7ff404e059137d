package dev.itersnap.cli;

import dev.itersnap.models.ModelFiles;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.w3c.dom.Document;
import org.w3c.dom.NodeList;
import picocli.CommandLine;

import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import javax.xml.parsers.DocumentBuilderFactory;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.StringReader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Keeps the documentation from drifting: every fenced block of the README, of docs/ and of examples/README.md is
 * checked by its language. {@code java}: compiles (a block with imports or a class as a file; any other block as the
 * body of a method that has {@code dataSource}, {@code customers}, {@code snapshots}, {@code log} and
 * {@code alerts} at hand; Spark's session is a compile-only stand-in, Spark is not on this class path); a block
 * using the test kit is also run (its {@code @Test} methods, or the snippet with {@code customers} set to the
 * README's model), so its assertions must hold.
 * {@code yaml}: a valid model file (a block whose first line is {@code # itersnap_project.yml}: a valid project file).
 * {@code xml}: well formed, and every {@code dev.itersnap} artifact it names is
 * built by this repository. {@code bash}, {@code console}, {@code python}: every {@code itersnap.jar} command is a
 * real command and every option it passes a real option of that command; every {@code mvn -pl} names real modules,
 * every {@code -f} and script path exists. {@code properties}: loads. {@code sql} (Databricks statements run only on
 * a workspace) and {@code text} (pictures and output) are not executed. Also: every relative link resolves, and no
 * file of the repository refers to a requirements document or a path outside the repository.
 */
class DocsTest {
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final Pattern FENCE = Pattern.compile("(?m)^```([a-z]*)[^\\n]*\\n(.*?)^```\\s*$", Pattern.DOTALL);

    record Block(Path file, int line, String language, String text) {
        String where() {
            return ROOT.relativize(file) + ":" + line;
        }
    }

    static List<Path> documents() throws IOException {
        List<Path> out = new ArrayList<>();
        out.add(ROOT.resolve("README.md"));
        out.add(ROOT.resolve("examples/README.md"));
        try (Stream<Path> docs = Files.walk(ROOT.resolve("docs"))) {
            docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(out::add);
        }
        return out;
    }

    static List<Block> blocks() throws IOException {
        List<Block> out = new ArrayList<>();
        for (Path doc : documents()) {
            String text = Files.readString(doc);
            Matcher m = FENCE.matcher(text);
            while (m.find()) {
                int line = (int) text.substring(0, m.start()).chars().filter(c -> c == '\n').count() + 1;
                out.add(new Block(doc, line, m.group(1), m.group(2)));
            }
        }
        return out;
    }

    @TestFactory
    Stream<DynamicTest> every_block_of_the_documentation_is_checked() throws IOException {
        List<Block> blocks = blocks();
        assertThat(blocks).hasSizeGreaterThan(30);
        return blocks.stream().map(b -> DynamicTest.dynamicTest(b.language() + " block at " + b.where(), () -> {
            switch (b.language()) {
                case "java" -> compiles(b);
                case "yaml" -> yaml(b);
                case "xml" -> xml(b);
                case "bash", "console", "python" -> shell(b);
                case "properties" -> new Properties().load(new StringReader(b.text()));
                case "sql", "text" -> { }
                default -> throw new AssertionError(b.where() + ": a block without a checked language ("
                        + (b.language().isEmpty() ? "none" : b.language()) + "); use java, yaml, xml, bash, console,"
                        + " python, properties, sql or text");
            }
        }));
    }

    // ------------------------------------------------------------------ yaml

    /**
     * A model file, or (first line {@code # itersnap_project.yml}) a project file: read as a project of one model,
     * every profile chosen once, with every environment variable set.
     */
    private static void yaml(Block b) throws IOException {
        if (!b.text().startsWith("# " + dev.itersnap.models.Project.FILE_NAME + "\n")) {
            ModelFiles.parse(b.text(), b.where());
            return;
        }
        Path dir = Files.createTempDirectory("docs-project");
        Files.writeString(dir.resolve(dev.itersnap.models.Project.FILE_NAME), b.text());
        Files.writeString(dir.resolve("m.yml"), "name: m\ntarget: t\nsource: SELECT 1\nunique_key: k\n"
                + "updated_at: u\nsequence_by: s\n");
        dev.itersnap.models.Project p = dev.itersnap.models.Project.load(dir, name -> "x");
        for (String profile : p.profileNames()) {
            assertThat(p.profile(profile)).as("%s: profile %s", b.where(), profile).isPresent();
        }
    }

    // ------------------------------------------------------------------ java

    private static final String IMPORTS = """
            import dev.itersnap.*;
            import dev.itersnap.core.*;
            import dev.itersnap.testing.*;
            import dev.itersnap.dialect.databricks.SparkDataSource;
            import com.zaxxer.hikari.HikariDataSource;
            import org.apache.spark.sql.SparkSession;
            import javax.sql.DataSource;
            import java.nio.file.*;
            import java.time.*;
            import java.util.*;
            import static dev.itersnap.testing.ItersnapAssertions.assertThat;
            import static dev.itersnap.testing.Version.version;
            """;

    /** Compile-only stand-ins for the parts of Spark's API the documentation calls. */
    private static final String SPARK = """
            package org.apache.spark.sql;
            public class SparkSession {
                public static Builder builder() { return new Builder(); }
                public Dataset sql(String sql) { return new Dataset(); }
                public RuntimeConfig conf() { return new RuntimeConfig(); }
                public static class Builder {
                    public Builder master(String m) { return this; }
                    public Builder appName(String n) { return this; }
                    public Builder config(String k, String v) { return this; }
                    public SparkSession getOrCreate() { return new SparkSession(); }
                }
                public static class Dataset { public void createOrReplaceTempView(String name) { } }
                public static class RuntimeConfig { public String get(String key) { return null; } }
            }
            """;

    private static void compiles(Block b) throws Exception {
        String code = b.text();
        String className;
        String source;
        Matcher cls = Pattern.compile("(?m)^(?:public\\s+)?(?:final\\s+)?class\\s+(\\w+)").matcher(code);
        if (cls.find() || code.contains("\nimport ") || code.startsWith("import ")) {
            className = cls.find(0) ? cls.group(1) : "Snippet";
            source = code;
        } else {
            className = "Snippet";
            String declared = importsDeclaredBefore(b);
            source = (declared.isEmpty() ? IMPORTS : declared) + """
                    class Snippet {
                        interface Alerts { void publish(Object event); }
                        javax.sql.DataSource dataSource;
                        dev.itersnap.core.ModelSettings customers;
                        dev.itersnap.IterativeSnapshot snapshots;
                        org.slf4j.Logger log;
                        Alerts alerts;
                        void snippet() throws Exception {
                    """ + code + "\n}\n}\n";
        }
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        Path out = Files.createTempDirectory("docs-java");
        try (StandardJavaFileManager files = javac.getStandardFileManager(diagnostics, Locale.ROOT,
                StandardCharsets.UTF_8)) {
            List<JavaFileObject> units = List.of(new Source(className, source),
                    new Source("org/apache/spark/sql/SparkSession", SPARK));
            boolean ok = javac.getTask(null, files, diagnostics, List.of("-d", out.toString(), "-proc:none",
                    "-classpath", System.getProperty("java.class.path"), "--release", "17"), null, units).call();
            StringBuilder errors = new StringBuilder();
            for (Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics()) {
                if (d.getKind() == Diagnostic.Kind.ERROR) {
                    errors.append("\n  line ").append(d.getLineNumber()).append(": ").append(d.getMessage(Locale.ROOT));
                }
            }
            assertThat(ok).as("java block at %s compiles:%s%n%s", b.where(), errors, source).isTrue();
        }
        if (code.contains("SnapshotTestKit")) {
            run(out, className, b);
        }
    }

    /**
     * The imports a document declares for its snippets before {@code b}: its {@code java} blocks that hold imports
     * only (the README's list, the Spark quickstart's own). A document that declares some compiles its snippets with
     * those alone, so that a snippet using a class the list lacks fails here as it would in a user's project; the
     * others with {@link #IMPORTS}.
     */
    static String importsDeclaredBefore(Block b) throws IOException {
        StringBuilder out = new StringBuilder();
        for (Block earlier : blocks()) {
            if (earlier.file().equals(b.file()) && earlier.line() < b.line() && earlier.language().equals("java")
                    && importsOnly(earlier.text())) {
                out.append(earlier.text().strip()).append('\n');
            }
        }
        return out.toString();
    }

    private static boolean importsOnly(String code) {
        return code.lines().map(String::strip).allMatch(l -> l.isEmpty() || l.startsWith("import ")
                || l.startsWith("//"));
    }

    /** The model of the README's Java quickstart, which the test-kit snippets use as {@code customers}. */
    static final dev.itersnap.core.ModelSettings CUSTOMERS = dev.itersnap.core.ModelSettings.builder("customers")
            .target("analytics.customers_history").source("SELECT * FROM raw.customer_exports")
            .uniqueKey("customer_id").updatedAt("updated_at").sequenceBy("file_date")
            .hardDeletes(dev.itersnap.core.HardDeletes.INVALIDATE).build();

    /**
     * Runs a test-kit example: a snippet's method with {@code customers} set, or every {@code @Test} method of a
     * class. Their assertions must hold.
     */
    private static void run(Path classes, String className, Block b) throws Exception {
        try (java.net.URLClassLoader loader = new java.net.URLClassLoader(new java.net.URL[] {classes.toUri().toURL()},
                DocsTest.class.getClassLoader())) {
            Class<?> type = loader.loadClass(className);
            int ran = 0;
            if (className.equals("Snippet")) {
                java.lang.reflect.Constructor<?> c = type.getDeclaredConstructor();
                c.setAccessible(true);
                Object snippet = c.newInstance();
                java.lang.reflect.Field f = type.getDeclaredField("customers");
                f.setAccessible(true);
                f.set(snippet, CUSTOMERS);
                java.lang.reflect.Method m = type.getDeclaredMethod("snippet");
                m.setAccessible(true);
                invoke(m, snippet, b);
                ran++;
            } else {
                java.lang.reflect.Constructor<?> c = type.getDeclaredConstructor();
                c.setAccessible(true);
                for (java.lang.reflect.Method m : type.getDeclaredMethods()) {
                    if (m.isAnnotationPresent(Test.class)) {
                        m.setAccessible(true);
                        invoke(m, c.newInstance(), b);
                        ran++;
                    }
                }
            }
            assertThat(ran).as("%s: test-kit example ran", b.where()).isPositive();
        }
    }

    private static void invoke(java.lang.reflect.Method m, Object target, Block b) throws Exception {
        try {
            m.invoke(target);
        } catch (java.lang.reflect.InvocationTargetException e) {
            throw new AssertionError(b.where() + ": the example's " + m.getName() + " failed: " + e.getCause(),
                    e.getCause());
        }
    }

    private static final class Source extends SimpleJavaFileObject {
        private final String code;

        Source(String name, String code) {
            super(URI.create("string:///" + name + ".java"), Kind.SOURCE);
            this.code = code;
        }

        @Override
        public CharSequence getCharContent(boolean ignoreEncodingErrors) {
            return code;
        }
    }

    // ------------------------------------------------------------------ xml

    private static void xml(Block b) throws Exception {
        Document doc = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(new ByteArrayInputStream(
                ("<root>" + b.text() + "</root>").getBytes(StandardCharsets.UTF_8)));
        NodeList ids = doc.getElementsByTagName("artifactId");
        Set<String> ours = artifacts();
        for (int i = 0; i < ids.getLength(); i++) {
            String id = ids.item(i).getTextContent().trim();
            if (id.startsWith("itersnap-")) {
                assertThat(ours).as("%s names artifact %s", b.where(), id).contains(id);
            }
        }
    }

    static Set<String> artifacts() throws IOException {
        Set<String> out = new TreeSet<>();
        try (Stream<Path> poms = Files.walk(ROOT, 2)) {
            for (Path pom : poms.filter(p -> p.getFileName().toString().equals("pom.xml")).toList()) {
                if (pom.startsWith(ROOT.resolve("examples"))) {
                    continue;
                }
                Matcher m = Pattern.compile("<artifactId>(itersnap-[\\w-]+)</artifactId>").matcher(Files.readString(pom));
                if (m.find()) {
                    out.add(m.group(1));
                }
                while (m.find()) {
                    out.add(m.group(1));
                }
            }
        }
        return out;
    }

    // ------------------------------------------------------------------ shell

    private static final Pattern JAR_COMMAND = Pattern.compile("itersnap\\.jar\\s+(.*)");
    private static final Pattern PYTHON_ARGS = Pattern.compile("itersnap\\.jar\"\\s*,(.*?)\\]", Pattern.DOTALL);

    private static void shell(Block b) {
        String text = b.text().replace("\\\n", " ");
        CommandLine cli = ItersnapCommand.commandLine();
        int commands = 0;
        if (b.language().equals("python")) {
            Matcher m = PYTHON_ARGS.matcher(text);
            while (m.find()) {
                List<String> args = new ArrayList<>();
                Matcher q = Pattern.compile("\"([^\"]*)\"|(\\w+)").matcher(m.group(1));
                while (q.find()) {
                    args.add(q.group(1) != null ? q.group(1) : "VALUE");
                }
                checkCommand(cli, args, b);
                commands++;
            }
            assertThat(commands).as("%s runs itersnap.jar", b.where()).isPositive();
            return;
        }
        for (String line : text.split("\n")) {
            String command = line.strip();
            if (command.startsWith("$ ")) {
                command = command.substring(2);
            } else if (b.language().equals("console")) {
                continue;                       // output
            }
            command = command.replaceAll("\\s#.*$", "");
            Matcher jar = JAR_COMMAND.matcher(command);
            if (jar.find()) {
                String rest = jar.group(1).split("[;|&]|&&")[0];
                checkCommand(cli, tokens(rest), b);
            }
            mavenAndPaths(command, b);
        }
    }

    private static List<String> tokens(String text) {
        List<String> out = new ArrayList<>();
        Matcher m = Pattern.compile("'[^']*'|\"[^\"]*\"|\\S+").matcher(text);
        while (m.find()) {
            String t = m.group().replaceAll("^[\\[(]+|[\\])]+$", "");
            if (!t.isEmpty() && !t.equals("|")) {
                out.add(t);
            }
        }
        return out;
    }

    private static void checkCommand(CommandLine cli, List<String> args, Block b) {
        assertThat(args).as("%s: a command after itersnap.jar", b.where()).isNotEmpty();
        String name = args.get(0);
        CommandLine sub = cli.getSubcommands().get(name);
        assertThat(sub).as("%s: itersnap has a command %s", b.where(), name).isNotNull();
        if (name.equals("help")) {
            if (args.size() > 1 && !args.get(1).equals("COMMAND")) {
                assertThat(cli.getSubcommands()).as("%s: help for a command", b.where()).containsKey(args.get(1));
            }
            return;
        }
        for (String arg : args.subList(1, args.size())) {
            if (arg.startsWith("--")) {
                String option = arg.contains("=") ? arg.substring(0, arg.indexOf('=')) : arg;
                assertThat(sub.getCommandSpec().findOption(option))
                        .as("%s: %s is an option of itersnap %s", b.where(), option, name).isNotNull();
            }
        }
    }

    private static void mavenAndPaths(String command, Block b) {
        List<String> words = tokens(command);
        for (int i = 0; i < words.size(); i++) {
            String w = words.get(i);
            if ((w.equals("-pl") || w.equals("-f")) && i + 1 < words.size()) {
                for (String module : words.get(i + 1).replace("'", "").split(",")) {
                    if (module.startsWith(":") || module.replace("\"", "").startsWith("$")) {
                        continue; // a module by artifact id; a path the script makes ($repo/...)
                    }
                    Path p = ROOT.resolve(module);
                    assertThat(w.equals("-pl") ? Files.isRegularFile(p.resolve("pom.xml")) : Files.exists(p))
                            .as("%s: %s %s exists in the repository", b.where(), w, module).isTrue();
                }
            }
            if (w.matches("(examples|\\.ci)/[\\w./-]+") && (i == 0 || !words.get(i - 1).startsWith("-"))) {
                assertThat(ROOT.resolve(w)).as("%s: %s exists", b.where(), w).exists();
            }
        }
    }

    // ------------------------------------------------------------------ links and references

    /**
     * The {@code status --json} reference of docs/command-line.md names every key {@code StatusCommand} writes, and
     * no other (each backticked name of the table's first column, split at its dots, against the keys of the
     * command's {@code put}, {@code putObject} and {@code putArray} calls), and every field of a real {@code status
     * --json} (a file H2 database after a run) by its full path ({@code runs[].holder}).
     */
    @Test
    void the_status_json_reference_lists_every_field_status_writes(@org.junit.jupiter.api.io.TempDir Path dir)
            throws Exception {
        String doc = Files.readString(ROOT.resolve("docs/command-line.md"));
        int start = doc.indexOf("| field | type | meaning |", doc.indexOf("`status --json` prints one object"));
        assertThat(start).as("the status --json field table").isPositive();
        Set<String> paths = new TreeSet<>();
        Set<String> names = new TreeSet<>();
        for (String row : doc.substring(start).split("\n")) {
            if (!row.startsWith("|")) {
                break;
            }
            String cell = row.split("\\|")[1];
            Matcher name = Pattern.compile("`([a-z_.\\[\\]]+)`").matcher(cell);
            String first = null;
            while (name.find()) {
                String token = name.group(1);
                // `ledger[].inserted`, `.updated`: a sibling; `errors_by_reason[]`: `reason`: a child
                String path = first == null || token.contains(".") && !token.startsWith(".") ? token
                        : token.startsWith(".") ? first.substring(0, first.lastIndexOf('.')) + token
                        : first + "." + token;
                first = first == null ? token : first;
                paths.add(path);
                for (String part : path.replace("[]", "").split("\\.")) {
                    names.add(part);
                }
            }
        }
        String code = Files.readString(ROOT.resolve("cli/src/main/java/dev/itersnap/cli/StatusCommand.java"));
        String json = code.substring(code.indexOf("private static String json(Status s)"));
        Set<String> written = new TreeSet<>();
        Matcher put = Pattern.compile("\\.put(?:Object|Array)?\\(\"([a-z_]+)\"").matcher(json);
        while (put.find()) {
            written.add(put.group(1));
        }
        assertThat(written).hasSizeGreaterThan(20);
        assertThat(names).as("the keys of docs/command-line.md's status --json table").isEqualTo(written);

        String url = "jdbc:h2:" + dir.resolve("w").toAbsolutePath();
        try (java.sql.Connection c = java.sql.DriverManager.getConnection(url, "sa", "");
             java.sql.Statement st = c.createStatement()) {
            st.execute("CREATE TABLE raw_customers (customer_id INT, status VARCHAR(20), updated_at TIMESTAMP, "
                    + "file_date DATE)");
            st.execute("INSERT INTO raw_customers VALUES (1, 'Active', TIMESTAMP '2024-01-01 09:00', DATE '2024-01-01'),"
                    + " (1, 'Active', TIMESTAMP '2024-01-01 09:00', DATE '2024-01-02'),"
                    + " (1, 'Gold', TIMESTAMP '2024-01-02 09:00', DATE '2024-01-02')");
        }
        Path config = Files.writeString(dir.resolve("m.yml"), "name: customers\ntarget: customers_history\n"
                + "source: SELECT * FROM raw_customers\nunique_key: customer_id\nupdated_at: updated_at\n"
                + "sequence_by: file_date\n");
        Execution run = Execution.of("run", "--jdbc-url", url, "--user", "sa", "--config", config.toString());
        assertThat(run.exitCode()).as(run.err()).isZero();
        Execution status = Execution.of("status", "--jdbc-url", url, "--user", "sa", "--config", config.toString(),
                "--json");
        assertThat(status.exitCode()).as(status.err()).isZero();
        Set<String> emitted = new TreeSet<>();
        collect(new com.fasterxml.jackson.databind.ObjectMapper().readTree(status.out()), "", emitted);
        assertThat(emitted).as("the fields of a real status --json").contains("errors_by_sequence[].reason")
                .isSubsetOf(paths);
    }

    private static void collect(com.fasterxml.jackson.databind.JsonNode node, String path, Set<String> out) {
        if (node.isObject()) {
            for (Map.Entry<String, com.fasterxml.jackson.databind.JsonNode> f : node.properties()) {
                String p = path.isEmpty() ? f.getKey() : path + "." + f.getKey();
                if (!f.getValue().isContainerNode()) {
                    out.add(p);
                }
                collect(f.getValue(), p, out);
            }
        } else if (node.isArray()) {
            node.forEach(e -> collect(e, path + "[]", out));
        }
    }

    @Test
    void every_relative_link_of_the_documentation_resolves() throws IOException {
        List<String> broken = new ArrayList<>();
        Pattern link = Pattern.compile("\\]\\(([^)\\s]+)\\)");
        for (Path doc : documents()) {
            Matcher m = link.matcher(Files.readString(doc));
            while (m.find()) {
                String target = m.group(1);
                if (target.startsWith("http") || target.startsWith("#") || target.startsWith("mailto:")) {
                    continue;
                }
                String path = target.contains("#") ? target.substring(0, target.indexOf('#')) : target;
                if (!Files.exists(doc.getParent().resolve(path))) {
                    broken.add(ROOT.relativize(doc) + ": " + target);
                }
            }
        }
        assertThat(broken).as("links to files that do not exist").isEmpty();
    }

    @Test
    void no_file_refers_to_a_document_or_path_outside_the_repository() throws IOException {
        List<String> found = new ArrayList<>();
        Pattern outside = Pattern.compile("SPEC\\.md|SPEC §|/work/|/home/\\w");
        try (Stream<Path> files = Files.walk(ROOT)) {
            for (Path f : files.filter(Files::isRegularFile).filter(DocsTest::isSourceText).toList()) {
                List<String> lines = Files.readAllLines(f, StandardCharsets.ISO_8859_1);
                for (int i = 0; i < lines.size(); i++) {
                    if (outside.matcher(lines.get(i)).find()) {
                        found.add(ROOT.relativize(f) + ":" + (i + 1) + ": " + lines.get(i).strip());
                    }
                }
            }
        }
        assertThat(found).as("references outside the repository").isEmpty();
    }

    private static boolean isSourceText(Path f) {
        Path rel = ROOT.relativize(f);
        String first = rel.getName(0).toString();
        if (first.equals(".git") || rel.toString().contains("/target/") || first.equals("target")
                || rel.toString().equals("cli/src/test/java/dev/itersnap/cli/DocsTest.java")) {
            return false;
        }
        String name = f.getFileName().toString();
        return name.endsWith(".md") || name.endsWith(".java") || name.endsWith(".xml") || name.endsWith(".yml")
                || name.endsWith(".yaml") || name.endsWith(".sql") || name.endsWith(".properties")
                || name.endsWith(".sh") || name.equals("run") || name.endsWith(".config");
    }
}
