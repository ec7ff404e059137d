package dev.itersnap.cli;

import org.junit.jupiter.api.Test;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The layers, checked on the compiled classes (docs/decisions/0010-read-api-and-layers.md): the engine
 * ({@code dev.itersnap.internal}) is reached only through {@code dev.itersnap.IterativeSnapshot}. No class of the
 * command-line tool, the test kit, a dialect module or the Micrometer module refers to an engine class, and neither
 * does the SPI ({@code dev.itersnap.spi}: the engine depends on the SPI, not the other way round) or the public model
 * ({@code dev.itersnap.core}). A reference is any class name in a class file's constant pool (imports, fully
 * qualified names, field and method types, generic signatures), so an import cannot hide. The public model refers to
 * no SPI class either: it is the bottom layer. The facade refers to the SPI classes it declares ({@link #FACADE_SPI})
 * and no other: what the engine hands a dialect (a model as a {@code ModelView}) is not the public API's
 * (docs/decisions/0015-one-decision-the-plan-and-the-contract.md).
 */
class LayersTest {
    private static final String ENGINE = "dev/itersnap/internal/";
    private static final String SPI = "dev/itersnap/spi/";
    /**
     * The SPI classes the public API ({@code dev.itersnap.IterativeSnapshot} and its builder) may refer to, each
     * declared here with why: a user gives the dialect ({@code Builder.dialect(Dialect)}, {@code dialect()}), or its
     * name, which {@code Dialects} finds.
     */
    private static final java.util.Set<String> FACADE_SPI = java.util.Set.of("dev.itersnap.spi.Dialect",
            "dev.itersnap.spi.Dialects");

    @Test
    void noModuleButTheEngineItselfRefersToTheEngine() {
        Map<String, List<String>> offenders = new TreeMap<>();
        check(offenders, "command-line tool", ItersnapCommand.class, "dev/itersnap/cli/");
        check(offenders, "test kit", dev.itersnap.testing.SnapshotTestKit.class, "dev/itersnap/testing/");
        check(offenders, "H2 dialect", dev.itersnap.dialect.h2.H2Dialect.class, "dev/itersnap/dialect/");
        check(offenders, "PostgreSQL dialect", dev.itersnap.dialect.postgres.PostgresDialect.class,
                "dev/itersnap/dialect/");
        check(offenders, "Databricks dialect", dev.itersnap.dialect.databricks.DatabricksDialect.class,
                "dev/itersnap/dialect/");
        check(offenders, "DuckDB dialect", dev.itersnap.dialect.duckdb.DuckDbDialect.class, "dev/itersnap/dialect/");
        check(offenders, "Micrometer module", dev.itersnap.micrometer.MicrometerListener.class,
                "dev/itersnap/micrometer/");
        check(offenders, "model files", dev.itersnap.models.ModelFiles.class, "dev/itersnap/models/");
        check(offenders, "SPI", dev.itersnap.spi.Dialect.class, "dev/itersnap/spi/");
        check(offenders, "public model", dev.itersnap.core.ModelSettings.class, "dev/itersnap/core/");

        assertThat(offenders).as("classes that refer to the engine (%s) though only IterativeSnapshot may; move what "
                + "they need into dev.itersnap.core (public values) or dev.itersnap.spi (what dialects implement)",
                ENGINE.replace('/', '.')).isEmpty();
    }

    /**
     * The public model ({@code dev.itersnap.core}: settings, results, events, plans) is the bottom layer: the SPI and
     * the engine build on it, it refers to neither. What a user of the library sees needs no dialect's type.
     */
    @Test
    void thePublicModelRefersToNoSpiClass() {
        Map<String, List<String>> offenders = new TreeMap<>();
        check(offenders, "public model", dev.itersnap.core.ModelSettings.class, "dev/itersnap/core/", SPI);
        assertThat(offenders).as("public model classes that refer to the SPI (%s); move what they need into "
                + "dev.itersnap.core", SPI.replace('/', '.')).isEmpty();
    }

    /**
     * The facade ({@code IterativeSnapshot}, with its builder) refers to the SPI only through the classes declared in
     * {@link #FACADE_SPI}: a value it returns or takes is a public one ({@code dev.itersnap.core}), never the engine's
     * model or a dialect's view of it.
     */
    @Test
    void theFacadeRefersToTheSpiOnlyWhereDeclared() {
        Map<String, List<String>> refs = new TreeMap<>();
        check(refs, "facade", dev.itersnap.IterativeSnapshot.class, "dev/itersnap/IterativeSnapshot", SPI);
        assertThat(refs).as("the facade must refer to some SPI class, or this check reads nothing").isNotEmpty();
        Map<String, List<String>> offenders = new TreeMap<>();
        refs.forEach((c, used) -> {
            List<String> undeclared = used.stream().filter(r -> !FACADE_SPI.contains(r)).toList();
            if (!undeclared.isEmpty()) {
                offenders.put(c, undeclared);
            }
        });
        assertThat(offenders).as("SPI classes the public API refers to that LayersTest.FACADE_SPI does not declare; "
                + "return or take a public value (dev.itersnap.core) instead, or declare the class there with why")
                .isEmpty();
    }

    @Test
    void theCheckSeesTheClassesItChecks() {
        // a check that reads no class would pass for ever: each module must yield its classes, and the engine's own
        // classes must be seen to refer to the engine
        assertThat(classes(ItersnapCommand.class, "dev/itersnap/cli/")).hasSizeGreaterThan(20);
        assertThat(classes(dev.itersnap.spi.Dialect.class, "dev/itersnap/spi/")).hasSizeGreaterThan(10);
        Map<String, List<String>> engine = new TreeMap<>();
        check(engine, "facade", dev.itersnap.IterativeSnapshot.class, "dev/itersnap/IterativeSnapshot");
        assertThat(engine.keySet()).singleElement().asString().contains("dev.itersnap.IterativeSnapshot");
        assertThat(engine.values().iterator().next()).contains("dev.itersnap.internal.SnapshotEngine");
    }

    /** Adds each class under {@code prefix} of {@code anchor}'s module that refers to the engine. */
    private static void check(Map<String, List<String>> offenders, String module, Class<?> anchor, String prefix) {
        check(offenders, module, anchor, prefix, ENGINE);
    }

    /** Adds each class under {@code prefix} of {@code anchor}'s module that refers to a class under {@code forbidden}. */
    private static void check(Map<String, List<String>> offenders, String module, Class<?> anchor, String prefix,
                              String forbidden) {
        for (Map.Entry<String, byte[]> c : classes(anchor, prefix).entrySet()) {
            TreeSet<String> refs = new TreeSet<>();
            for (String utf8 : utf8Constants(c.getValue())) {
                int at = utf8.indexOf(forbidden);
                while (at >= 0) {
                    int end = at;
                    while (end < utf8.length() && (Character.isJavaIdentifierPart(utf8.charAt(end))
                            || utf8.charAt(end) == '/')) {
                        end++;
                    }
                    refs.add(utf8.substring(at, end).replace('/', '.'));
                    at = utf8.indexOf(forbidden, end);
                }
            }
            if (!refs.isEmpty()) {
                offenders.put(module + ": " + c.getKey().replace('/', '.').replace(".class", ""),
                        new ArrayList<>(refs));
            }
        }
    }

    /** The class files under {@code prefix} of the directory or jar {@code anchor} was loaded from, by name. */
    private static Map<String, byte[]> classes(Class<?> anchor, String prefix) {
        Map<String, byte[]> out = new TreeMap<>();
        try {
            Path location = Path.of(anchor.getProtectionDomain().getCodeSource().getLocation().toURI());
            if (Files.isDirectory(location)) {
                try (Stream<Path> files = Files.walk(location)) {
                    for (Path p : files.filter(f -> f.toString().endsWith(".class")).toList()) {
                        String name = location.relativize(p).toString().replace('\\', '/');
                        if (name.startsWith(prefix)) {
                            out.put(name, Files.readAllBytes(p));
                        }
                    }
                }
            } else {
                try (JarFile jar = new JarFile(location.toFile())) {
                    for (JarEntry e : java.util.Collections.list(jar.entries())) {
                        if (e.getName().startsWith(prefix) && e.getName().endsWith(".class")) {
                            try (InputStream in = jar.getInputStream(e)) {
                                out.put(e.getName(), in.readAllBytes());
                            }
                        }
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
        return out;
    }

    /** The UTF-8 entries of a class file's constant pool (JVMS 4.4): every class name and type descriptor. */
    static List<String> utf8Constants(byte[] classFile) {
        List<String> out = new ArrayList<>();
        try (DataInputStream in = new DataInputStream(new java.io.ByteArrayInputStream(classFile))) {
            if (in.readInt() != 0xCAFEBABE) {
                throw new IllegalArgumentException("not a class file");
            }
            in.readUnsignedShort(); // minor
            in.readUnsignedShort(); // major
            int count = in.readUnsignedShort();
            for (int i = 1; i < count; i++) {
                int tag = in.readUnsignedByte();
                switch (tag) {
                    case 1 -> out.add(in.readUTF());
                    case 7, 8, 16, 19, 20 -> in.skipBytes(2);
                    case 15 -> in.skipBytes(3);
                    case 3, 4, 9, 10, 11, 12, 17, 18 -> in.skipBytes(4);
                    case 5, 6 -> {
                        in.skipBytes(8);
                        i++; // a long or double takes two entries
                    }
                    default -> throw new IllegalArgumentException("unknown constant pool tag " + tag);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }
}
