package dev.itersnap.cli;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/** The BOM lists exactly the published modules of the reactor (those that do not skip deployment). */
class PublishedArtifactsTest {
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

    @Test
    void the_bom_lists_every_published_module_and_nothing_else() throws IOException {
        Set<String> published = new TreeSet<>();
        Set<String> internal = new TreeSet<>();
        Matcher module = Pattern.compile("<module>([\\w-]+)</module>").matcher(Files.readString(ROOT.resolve("pom.xml")));
        while (module.find()) {
            if (module.group(1).equals("bom")) {
                continue;
            }
            String pom = Files.readString(ROOT.resolve(module.group(1)).resolve("pom.xml"));
            Matcher id = Pattern.compile("</parent>\\s*<artifactId>([\\w-]+)</artifactId>").matcher(pom);
            assertThat(id.find()).as("artifactId of module %s", module.group(1)).isTrue();
            (pom.contains("<maven.deploy.skip>true</maven.deploy.skip>") ? internal : published).add(id.group(1));
        }
        Set<String> inBom = new TreeSet<>();
        Matcher listed = Pattern.compile("<artifactId>(itersnap-[\\w-]+)</artifactId>")
                .matcher(Files.readString(ROOT.resolve("bom/pom.xml")));
        while (listed.find()) {
            inBom.add(listed.group(1));
        }
        inBom.remove("itersnap-bom");
        assertThat(inBom).isEqualTo(published);
        assertThat(internal).containsExactlyInAnyOrder("itersnap-conformance", "itersnap-bench",
                "itersnap-dialect-databricks-spark4", "itersnap-dialect-databricks-spark35",
                "itersnap-dialect-databricks-connect");
        assertThat(Files.readString(ROOT.resolve("bom/pom.xml"))).doesNotContain("<parent>")
                .contains("<version>" + parentVersion() + "</version>");
    }

    private static String parentVersion() throws IOException {
        Matcher m = Pattern.compile("<artifactId>itersnap-parent</artifactId>\\s*<version>([^<]+)</version>")
                .matcher(Files.readString(ROOT.resolve("pom.xml")));
        assertThat(m.find()).isTrue();
        return m.group(1);
    }
}
