package dev.itersnap.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;

import javax.sql.DataSource;
import org.apache.spark.sql.SparkSession;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Comparator;
import java.util.stream.Stream;

/** One benchmark database (a fresh one per data size) and the few SQL spellings that differ between databases. */
abstract class Database implements AutoCloseable {
    protected HikariDataSource pool;

    abstract String name();

    /** Opens a fresh, empty database. */
    abstract void open(String label) throws Exception;

    /** A derived table {@code keys(k)} of BIGINT 1..n. */
    abstract String keySeries(long n);

    /** TIMESTAMP '2024-01-01 00:00:00' plus {@code hoursExpr} hours. */
    abstract String plusHours(String hoursExpr);

    /** Refreshes planner statistics of a table (untimed bookkeeping). */
    void analyze(String table) throws SQLException {
    }

    /** Whether the database has secondary indexes ({@code CREATE INDEX}); Delta tables have none. */
    boolean indexes() {
        return true;
    }

    /** The quotient of two integers, truncated (Spark's {@code /} always divides exactly). */
    String intDiv(String a, String b) {
        return "(" + a + ") / (" + b + ")";
    }

    /** The type a value is cast to for its text. */
    String textType() {
        return "VARCHAR";
    }

    /**
     * Commits written so far to every table of the database (Delta: the log entries of every table under the
     * warehouse), or -1 where the database does not say (a transactional database commits once per transaction).
     */
    long commits() {
        return -1;
    }

    String version() {
        try (Connection c = pool.getConnection()) {
            return c.getMetaData().getDatabaseProductName() + " " + c.getMetaData().getDatabaseProductVersion();
        } catch (SQLException e) {
            return name();
        }
    }

    /**
     * CPU time the database server has spent so far, in ms, or -1 where not known (H2 runs in this JVM: its time is the
     * process's). For comparisons on a shared machine: CPU time depends far less on other processes than wall time.
     */
    long serverCpuMillis() {
        return -1;
    }

    DataSource dataSource() {
        return pool;
    }

    protected static HikariDataSource pool(String url, String user, String password) {
        HikariConfig config = new HikariConfig();
        config.setPoolName("bench");
        config.setJdbcUrl(url);
        config.setUsername(user);
        config.setPassword(password);
        config.setMaximumPoolSize(4);
        config.setMinimumIdle(1);
        return new HikariDataSource(config);
    }

    @Override
    public void close() throws java.io.IOException, SQLException {
        if (pool != null) {
            pool.close();
            pool = null;
        }
    }

    /** Deletes a temporary directory and everything in it. */
    static void deleteTree(Path dir) throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    /** H2 2.x, file-based (MVStore) in a temporary directory deleted afterwards. */
    static final class H2 extends Database {
        private Path dir;

        @Override
        String name() {
            return "h2";
        }

        @Override
        void open(String label) throws IOException {
            dir = Files.createTempDirectory("itersnap-bench-h2-");
            pool = pool("jdbc:h2:file:" + dir.resolve(label).toAbsolutePath(), "sa", "");
        }

        @Override
        String keySeries(long n) {
            return "(SELECT X AS k FROM SYSTEM_RANGE(1, " + n + ")) keys";
        }

        @Override
        String plusHours(String hoursExpr) {
            return "DATEADD(HOUR, " + hoursExpr + ", TIMESTAMP '2024-01-01 00:00:00')";
        }

        @Override
        public void close() throws java.io.IOException, SQLException {
            if (pool != null) {
                try (Connection c = pool.getConnection(); Statement st = c.createStatement()) {
                    st.execute("SHUTDOWN");
                } catch (SQLException ignored) {
                    // already gone
                }
            }
            super.close();
            if (dir != null) {
                deleteTree(dir);
            }
        }
    }

    /** DuckDB, a database file in a temporary directory deleted afterwards. */
    static final class DuckDb extends Database {
        private Path dir;

        @Override
        String name() {
            return "duckdb";
        }

        @Override
        void open(String label) throws IOException {
            dir = Files.createTempDirectory("itersnap-bench-duckdb-");
            pool = pool("jdbc:duckdb:" + dir.resolve(label + ".duckdb").toAbsolutePath(), null, null);
        }

        @Override
        String keySeries(long n) {
            return "(SELECT range AS k FROM range(1, " + (n + 1) + ")) keys";
        }

        /**
         * DuckDB's {@code /} divides exactly (a DOUBLE) even between integers; {@code //} truncates. Until 2026-12-07
         * the workload used {@code /} here, so a key's version number was a fraction that moved with every batch and
         * about 40 % of the keys changed per batch instead of 1 % (the report's "keys changed": 4,020 where K/P + 2K/D
         * predicts 120); DuckDB's figures before then are of that heavier workload.
         */
        @Override
        String intDiv(String a, String b) {
            return "(" + a + ") // (" + b + ")";
        }

        @Override
        String plusHours(String hoursExpr) {
            return "(TIMESTAMP '2024-01-01 00:00:00' + to_hours(CAST(" + hoursExpr + " AS BIGINT)))";
        }

        @Override
        public void close() throws java.io.IOException, SQLException {
            super.close();
            if (dir != null) {
                deleteTree(dir);
            }
        }
    }

    /**
     * PostgreSQL 18 started from Maven artifacts (zonky), as dialect-postgres's tests do: durability off (fsync,
     * synchronous_commit, full_page_writes), which favours every write equally (engine and baselines). One server
     * per JVM, a fresh database per data size.
     */
    static final class Postgres extends Database {
        private long postmaster = -1;

        /**
         * The postmaster's CPU time with that of the backends it has reaped (Linux /proc: utime, stime, cutime, cstime
         * of the postmaster) plus that of its live children.
         */
        @Override
        long serverCpuMillis() {
            try {
                if (postmaster < 0) {
                    long backend;
                    try (java.sql.Connection c = dataSource().getConnection(); java.sql.Statement st = c.createStatement();
                         java.sql.ResultSet rs = st.executeQuery("SELECT pg_backend_pid()")) {
                        rs.next();
                        backend = rs.getLong(1);
                    }
                    postmaster = Long.parseLong(stat(backend)[3]);
                }
                long ticks = 0;
                String[] pm = stat(postmaster);
                for (int f = 13; f <= 16; f++) {
                    ticks += Long.parseLong(pm[f]);
                }
                try (java.util.stream.Stream<java.nio.file.Path> procs = java.nio.file.Files.list(java.nio.file.Path.of("/proc"))) {
                    for (java.nio.file.Path p : procs.toList()) {
                        String name = p.getFileName().toString();
                        if (!name.chars().allMatch(Character::isDigit)) {
                            continue;
                        }
                        try {
                            String[] f = stat(Long.parseLong(name));
                            if (Long.parseLong(f[3]) == postmaster) {
                                ticks += Long.parseLong(f[13]) + Long.parseLong(f[14]);
                            }
                        } catch (IOException | RuntimeException gone) {
                            // a process that ended meanwhile
                        }
                    }
                }
                return ticks * 10; // USER_HZ = 100
            } catch (Exception e) {
                return -1;
            }
        }

        /** The fields of /proc/PID/stat, the command name (which may hold spaces) as one. */
        private static String[] stat(long pid) throws IOException {
            String text = java.nio.file.Files.readString(java.nio.file.Path.of("/proc/" + pid + "/stat"));
            String rest = text.substring(text.lastIndexOf(')') + 2);
            String[] tail = rest.trim().split(" ");
            String[] out = new String[tail.length + 2];
            out[0] = String.valueOf(pid);
            out[1] = "(comm)";
            System.arraycopy(tail, 0, out, 2, tail.length);
            return out;
        }

        private static EmbeddedPostgres server;
        private String database;
        private String url;

        @Override
        String name() {
            return "postgres";
        }

        private static synchronized EmbeddedPostgres server() throws IOException {
            if (server == null) {
                EmbeddedPostgres.Builder b = EmbeddedPostgres.builder().setServerConfig("fsync", "off")
                        .setServerConfig("synchronous_commit", "off").setServerConfig("full_page_writes", "off");
                // e.g. -Dbench.postgres.conf=work_mem=64MB: server settings for both the engine and the baselines
                for (String kv : System.getProperty("bench.postgres.conf", "").split(",")) {
                    int eq = kv.indexOf('=');
                    if (eq > 0) {
                        b.setServerConfig(kv.substring(0, eq).strip(), kv.substring(eq + 1).strip());
                    }
                }
                server = b.start();
                Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                    try {
                        server.close();
                    } catch (IOException ignored) {
                        // the JVM is going away
                    }
                }));
            }
            return server;
        }

        @Override
        void open(String label) throws Exception {
            EmbeddedPostgres pg = server();
            database = "bench_" + label.toLowerCase();
            try (Connection c = pg.getPostgresDatabase().getConnection(); Statement st = c.createStatement()) {
                st.execute("DROP DATABASE IF EXISTS " + database + " WITH (FORCE)");
                st.execute("CREATE DATABASE " + database);
            }
            url = "jdbc:postgresql://localhost:" + pg.getPort() + "/" + database;
            pool = pool(url, "postgres", "");
        }

        /** The JDBC URL of the database {@link #open} made (user {@code postgres}, no password), for other processes. */
        String url() {
            return url;
        }

        @Override
        String keySeries(long n) {
            return "(SELECT g AS k FROM generate_series(CAST(1 AS BIGINT), CAST(" + n + " AS BIGINT)) AS g) keys";
        }

        @Override
        String plusHours(String hoursExpr) {
            return "(TIMESTAMP '2024-01-01 00:00:00' + (" + hoursExpr + ") * INTERVAL '1 hour')";
        }

        @Override
        void analyze(String table) throws SQLException {
            try (Connection c = pool.getConnection(); Statement st = c.createStatement()) {
                st.execute("ANALYZE " + table);
            }
        }

        @Override
        public void close() throws java.io.IOException, SQLException {
            super.close();
            if (database != null) {
                try (Connection c = server().getPostgresDatabase().getConnection(); Statement st = c.createStatement()) {
                    st.execute("DROP DATABASE IF EXISTS " + database + " WITH (FORCE)");
                }
            }
        }
    }

    /**
     * Delta Lake on a local Spark 4.2 session (two cores, UTC, Delta the default table format, the warehouse in a
     * temporary directory deleted at exit), through the Databricks dialect's {@code SparkDataSource}, as Spark driver
     * code uses itersnap. One session per JVM (Spark allows one context); each data size gets a database of its own,
     * and the engine's metadata schema is dropped between sizes. Spark's defaults otherwise (adaptive execution,
     * code generation, a MERGE's source materialized), except four shuffle partitions for two cores;
     * {@code -Dbench.spark.conf=key=value,...} sets others for both the engine and the baselines.
     */
    static final class Spark extends Database {
        private static SparkSession session;
        private static Path warehouse;
        private SparkSession spark;
        private DataSource dataSource;
        private String database;

        @Override
        String name() {
            return "spark";
        }

        private static synchronized SparkSession session() throws IOException {
            if (session == null) {
                Path dir = Files.createTempDirectory("itersnap-bench-spark-");
                warehouse = dir.resolve("warehouse");
                SparkSession.Builder b = SparkSession.builder().master("local[2]").appName("itersnap-bench")
                        .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
                        .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
                        .config("spark.sql.warehouse.dir", warehouse.toString())
                        .config("spark.sql.sources.default", "delta")
                        .config("spark.sql.session.timeZone", "UTC")
                        .config("spark.sql.shuffle.partitions", "4")
                        .config("spark.ui.enabled", "false")
                        .config("spark.driver.host", "127.0.0.1")
                        .config("spark.driver.bindAddress", "127.0.0.1");
                for (String kv : System.getProperty("bench.spark.conf", "").split(",")) {
                    int eq = kv.indexOf('=');
                    if (eq > 0) {
                        b.config(kv.substring(0, eq).strip(), kv.substring(eq + 1).strip());
                    }
                }
                session = b.getOrCreate();
                session.sparkContext().setLogLevel("ERROR");
                Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                    session.stop();
                    try {
                        deleteTree(dir);
                    } catch (IOException ignored) {
                        // a temporary directory left behind
                    }
                }));
            }
            return session;
        }

        @Override
        void open(String label) throws IOException {
            database = "bench_" + label.toLowerCase(java.util.Locale.ROOT);
            SparkSession root = session();
            root.sql("DROP DATABASE IF EXISTS " + database + " CASCADE");
            root.sql("DROP DATABASE IF EXISTS itersnap_metadata CASCADE");
            root.sql("CREATE DATABASE " + database);
            spark = root.newSession();
            spark.sql("USE " + database);
            dataSource = dev.itersnap.dialect.databricks.SparkDataSource.of(spark);
        }

        @Override
        DataSource dataSource() {
            return dataSource;
        }

        @Override
        String version() {
            return "Spark " + spark.version() + " + Delta Lake " + io.delta.tables.DeltaTable.class.getPackage()
                    .getImplementationVersion();
        }

        @Override
        String keySeries(long n) {
            return "(SELECT id AS k FROM range(1, " + (n + 1) + ")) keys";
        }

        @Override
        String plusHours(String hoursExpr) {
            return "TIMESTAMPADD(HOUR, " + hoursExpr + ", TIMESTAMP '2024-01-01 00:00:00')";
        }

        @Override
        boolean indexes() {
            return false;
        }

        @Override
        String intDiv(String a, String b) {
            return "(" + a + ") DIV (" + b + ")";
        }

        @Override
        String textType() {
            return "STRING";
        }

        @Override
        long commits() {
            // every Delta commit writes one log entry, _delta_log/<20 digits>.json, in its table's directory
            try (Stream<Path> files = Files.walk(warehouse)) {
                return files.filter(p -> p.getParent() != null && p.getParent().getFileName() != null
                        && p.getParent().getFileName().toString().equals("_delta_log")
                        && p.getFileName().toString().matches("\\d{20}\\.json")).count();
            } catch (IOException | java.io.UncheckedIOException e) {
                return -1;
            }
        }

        @Override
        public void close() {
            if (spark != null) {
                spark.sql("USE default");
                session.sql("DROP DATABASE IF EXISTS " + database + " CASCADE");
                session.sql("DROP DATABASE IF EXISTS itersnap_metadata CASCADE");
                spark = null;
            }
        }
    }
}
