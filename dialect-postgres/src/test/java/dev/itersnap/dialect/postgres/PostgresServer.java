package dev.itersnap.dialect.postgres;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.postgresql.ds.PGSimpleDataSource;

import javax.sql.DataSource;
import java.io.IOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The PostgreSQL server the tests run on: an embedded one started from Maven artifacts (zonky, PostgreSQL 18), or the
 * server named by {@code ITERSNAP_PG_URL} (a JDBC URL of a database whose user may CREATE DATABASE; user and password
 * from {@code ITERSNAP_PG_USER} / {@code ITERSNAP_PG_PASSWORD}). One per JVM; each scenario gets a fresh database.
 */
public final class PostgresServer {
    private static final AtomicInteger COUNTER = new AtomicInteger();
    private static PostgresServer instance;

    private final String baseUrl;
    private final String user;
    private final String password;
    private final DataSource admin;

    private PostgresServer(String baseUrl, String user, String password, DataSource admin) {
        this.baseUrl = baseUrl;
        this.user = user;
        this.password = password;
        this.admin = admin;
    }

    public static synchronized PostgresServer get() {
        if (instance == null) {
            String url = System.getenv("ITERSNAP_PG_URL");
            if (url != null && !url.isBlank()) {
                String user = System.getenv().getOrDefault("ITERSNAP_PG_USER", "postgres");
                String password = System.getenv().getOrDefault("ITERSNAP_PG_PASSWORD", "");
                instance = new PostgresServer(url.substring(0, url.lastIndexOf('/') + 1), user, password,
                        dataSource(url, user, password));
            } else {
                try {
                    // a throwaway server: durability settings off make each scenario's CREATE DATABASE and commits
                    // cheap; correctness under crashes is tested by fault injection, not by fsync
                    EmbeddedPostgres pg = EmbeddedPostgres.builder().setServerConfig("fsync", "off")
                            .setServerConfig("synchronous_commit", "off").setServerConfig("full_page_writes", "off")
                            .start();
                    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                        try {
                            pg.close();
                        } catch (IOException ignored) {
                            // the JVM is going away
                        }
                    }));
                    instance = new PostgresServer("jdbc:postgresql://localhost:" + pg.getPort() + "/", "postgres",
                            "", pg.getPostgresDatabase());
                } catch (IOException e) {
                    throw new IllegalStateException("cannot start embedded PostgreSQL: " + e.getMessage(), e);
                }
            }
        }
        return instance;
    }

    /** A new, empty database. */
    public DataSource newDatabase() {
        String name = "itersnap_t" + ProcessHandle.current().pid() + "_" + COUNTER.incrementAndGet();
        try (Connection c = admin.getConnection(); Statement st = c.createStatement()) {
            st.execute("CREATE DATABASE " + name);
        } catch (SQLException e) {
            throw new IllegalStateException("cannot create test database " + name + ": " + e.getMessage(), e);
        }
        return dataSource(baseUrl + name, user, password);
    }

    /** A new database copied from one made by {@link #newDatabase()} (which must have no open session). */
    public DataSource copy(DataSource template) {
        String source = ((PGSimpleDataSource) template).getDatabaseName();
        String name = "itersnap_t" + ProcessHandle.current().pid() + "_" + COUNTER.incrementAndGet();
        for (int attempt = 1; ; attempt++) {
            try (Connection c = admin.getConnection(); Statement st = c.createStatement()) {
                st.execute("CREATE DATABASE " + name + " TEMPLATE " + source);
                return dataSource(baseUrl + name, user, password);
            } catch (SQLException e) {
                // 55006: a session of the source is still closing (the server ends it just after the client)
                if (!"55006".equals(e.getSQLState()) || attempt == 50) {
                    throw new IllegalStateException("cannot copy test database " + source + ": " + e.getMessage(), e);
                }
                try {
                    Thread.sleep(20);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(ie);
                }
            }
        }
    }

    /** Drops a database made by {@link #newDatabase()}, closing its sessions. */
    public void drop(DataSource database) {
        String name = ((PGSimpleDataSource) database).getDatabaseName();
        try (Connection c = admin.getConnection(); Statement st = c.createStatement()) {
            st.execute("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
        } catch (SQLException e) {
            throw new IllegalStateException("cannot drop test database " + name + ": " + e.getMessage(), e);
        }
    }

    /** The server's version, e.g. 18.1. */
    public String version() {
        try (Connection c = admin.getConnection()) {
            return c.getMetaData().getDatabaseProductVersion();
        } catch (SQLException e) {
            return "unknown";
        }
    }

    private static DataSource dataSource(String url, String user, String password) {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setURL(url);
        ds.setUser(user);
        ds.setPassword(password);
        return ds;
    }
}
