package dev.itersnap.dialect.databricks;

import org.apache.spark.sql.SparkSession;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * The one local SparkSession with Delta Lake of the test JVM (Spark allows one SparkContext per JVM): two cores,
 * UTC, Delta as the default table format (so the suite's raw tables are Delta tables), its warehouse in a temporary directory deleted at exit.
 */
final class SparkTestSession {
    private static SparkSession spark;

    private SparkTestSession() {
    }

    static synchronized SparkSession get() {
        if (spark == null) {
            Path dir;
            try {
                dir = Files.createTempDirectory("itersnap-spark-");
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            SparkSession.Builder builder = SparkSession.builder()
                    .master("local[2]")
                    .appName("itersnap-dialect-databricks-tests")
                    .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
                    .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
                    .config("spark.sql.warehouse.dir", dir.resolve("warehouse").toString())
                    .config("spark.sql.sources.default", "delta")
                    // Spark 3.5 (dialect-databricks-spark35) makes CREATE TABLE without USING a Hive table unless told
                    // otherwise; Spark 4 defaults to this
                    .config("spark.sql.legacy.createHiveTableByDefault", "false")
                    .config("spark.sql.session.timeZone", "UTC")
                    // the suite's tables hold tens of rows and every engine statement is a job: one partition per
                    // shuffle and per Delta snapshot, no whole-stage code generation (compiling each new plan cost
                    // more than running it) and no adaptive re-planning; together about 12 % off a Spark test class
                    // (measured on SparkTamperingTest: 107 s -> 94 s); expressions interpreted rather than compiled
                    // (Janino compiles every new projection and predicate: a few milliseconds each, hundreds per
                    // statement) and a MERGE's source not copied before the merge (it reads Delta tables nobody else
                    // writes during the merge); these two took another 16-25 % off SparkCostFiguresTest's four runs
                    // (172 s -> 129-144 s). Semantics are Spark's either way: both are planner choices, not SQL.
                    .config("spark.sql.shuffle.partitions", "1")
                    .config("spark.default.parallelism", "2")
                    .config("spark.sql.codegen.wholeStage", "false")
                    .config("spark.sql.codegen.factoryMode", "NO_CODEGEN")
                    .config("spark.databricks.delta.merge.materializeSource", "none")
                    // a test table lives for a few dozen commits: no Parquet checkpoint of its log every ten
                    .config("spark.databricks.delta.properties.defaults.checkpointInterval", "1000")
                    .config("spark.sql.adaptive.enabled", "false")
                    .config("spark.ui.enabled", "false")
                    .config("spark.driver.host", "127.0.0.1")
                    .config("spark.driver.bindAddress", "127.0.0.1")
                    .config("spark.databricks.delta.snapshotPartitions", "1");
            // e.g. -Ditersnap.spark.conf=spark.sql.adaptive.enabled=false,spark.sql.codegen.wholeStage=false
            for (String kv : System.getProperty("itersnap.spark.conf", "").split(",")) {
                int eq = kv.indexOf('=');
                if (eq > 0) {
                    builder.config(kv.substring(0, eq).strip(), kv.substring(eq + 1).strip());
                }
            }
            spark = builder.getOrCreate();
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                spark.stop();
                delete(dir);
            }));
        }
        return spark;
    }

    private static SparkSession databricksLike;

    /**
     * A session of the test JVM's SparkContext set closer to Databricks' defaults than {@link #get}'s: eight shuffle
     * partitions, adaptive execution, whole-stage code generation and compiled expressions, a MERGE's source
     * materialized first (Delta's default), eight partitions per Delta snapshot. The rows then go through shuffles,
     * joins and windows split over several partitions, and through the plans adaptive execution re-makes.
     */
    static synchronized SparkSession databricksLike() {
        if (databricksLike == null) {
            SparkSession s = get().newSession();
            s.conf().set("spark.sql.shuffle.partitions", "8");
            s.conf().set("spark.sql.adaptive.enabled", "true");
            s.conf().set("spark.sql.adaptive.coalescePartitions.enabled", "true");
            s.conf().set("spark.sql.codegen.wholeStage", "true");
            s.conf().set("spark.sql.codegen.factoryMode", "FALLBACK");
            s.conf().set("spark.databricks.delta.merge.materializeSource", "auto");
            s.conf().set("spark.databricks.delta.snapshotPartitions", "8");
            databricksLike = s;
        }
        return databricksLike;
    }

    private static void delete(Path dir) {
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
            // a temporary directory left behind
        }
    }
}
