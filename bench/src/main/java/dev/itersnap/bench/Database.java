package dev.itersnap.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;

import javax.sql.DataSource;
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
                try (Stream<Path> files = Files.walk(dir)) {
                    files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
                }
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

        @Override
        String plusHours(String hoursExpr) {
            return "(TIMESTAMP '2024-01-01 00:00:00' + to_hours(CAST(" + hoursExpr + " AS BIGINT)))";
        }

        @Override
        public void close() throws java.io.IOException, SQLException {
            super.close();
            if (dir != null) {
                try (Stream<Path> files = Files.walk(dir)) {
                    files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
                }
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
            pool = pool("jdbc:postgresql://localhost:" + pg.getPort() + "/" + database, "postgres", "");
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
}
