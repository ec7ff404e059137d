package dev.itersnap.dialect.postgres;

import org.postgresql.ds.PGSimpleDataSource;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;

/** Fresh PostgreSQL databases for the conformance suite, dropped when a test is done with them. */
final class PostgresDatabases {
    private PostgresDatabases() {
    }

    static DataSource fresh() {
        return PostgresServer.get().newDatabase();
    }

    /** Drops the database (connections that are still open are closed by the server). */
    static void drop(DataSource ds) {
        if (!(ds instanceof PGSimpleDataSource pg)) {
            return;
        }
        String name = pg.getDatabaseName();
        PGSimpleDataSource admin = new PGSimpleDataSource();
        admin.setURL(pg.getURL());
        admin.setDatabaseName("postgres");
        admin.setUser(pg.getUser());
        admin.setPassword(pg.getPassword());
        try (Connection c = admin.getConnection(); Statement st = c.createStatement()) {
            st.execute("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
        } catch (SQLException ignored) {
            // left for the server's shutdown
        }
    }
}
