package dev.itersnap.dialect.h2;

import org.h2.jdbcx.JdbcDataSource;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;

/** Fresh in-memory H2 databases for the conformance suite: one per test, kept open until discarded. */
final class H2Databases {
    private H2Databases() {
    }

    /** {@code jdbc:h2:mem:<unique>;DB_CLOSE_DELAY=-1}: every connection sees the same database; no case settings. */
    static DataSource fresh() {
        JdbcDataSource ds = new JdbcDataSource();
        ds.setURL("jdbc:h2:mem:conformance_" + UUID.randomUUID().toString().replace("-", "") + ";DB_CLOSE_DELAY=-1");
        return ds;
    }

    /** Shuts the database down, freeing its memory. */
    static void shutdown(DataSource ds) {
        try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
            st.execute("SHUTDOWN");
        } catch (SQLException ignored) {
            // already gone
        }
    }
}
