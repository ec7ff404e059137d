package dev.itersnap.cli;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.itersnap.IterativeSnapshot;
import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.core.ModelSettings;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.Statement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A run holds two connections at once, one for the model lock and one for its work: with a HikariCP pool of one
 * connection the run cannot get the second, and the failure says so (issue 29: it said only that the pool timed
 * out). A pool of two runs.
 */
class PoolOfOneConnectionTest {
    private static HikariDataSource pool(String db, int size) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl("jdbc:h2:mem:" + db + ";DB_CLOSE_DELAY=-1");
        config.setMaximumPoolSize(size);
        config.setConnectionTimeout(250);
        config.setPoolName("pool-of-" + size);
        return new HikariDataSource(config);
    }

    private static ModelSettings model() {
        return ModelSettings.builder("customers").target("customers_history").source("SELECT * FROM raw_customers")
                .uniqueKey("id").updatedAt("updated_at").sequenceBy("file_date").build();
    }

    private static void rawTable(HikariDataSource ds) throws Exception {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE raw_customers (id INT, status VARCHAR(20), updated_at TIMESTAMP, file_date DATE)");
            s.execute("INSERT INTO raw_customers VALUES (1, 'Active', TIMESTAMP '2024-01-01 09:00:00', "
                    + "DATE '2024-01-01')");
        }
    }

    @Test
    void aPoolOfOneConnectionFailsSayingARunNeedsTwo() throws Exception {
        try (HikariDataSource ds = pool("pool_of_one", 1)) {
            rawTable(ds);

            assertThatThrownBy(() -> IterativeSnapshot.builder().dataSource(ds).build().run(model()))
                    .isInstanceOfSatisfying(ItersnapException.class, e -> {
                        assertThat(e.code()).isEqualTo(ErrorCode.DATABASE_ERROR);
                        assertThat(e.getMessage()).contains("'customers'", "second connection", "two connections",
                                "one for the model lock and one for its work", "maximumPoolSize 2",
                                "Connection is not available");
                    });
        }
    }

    @Test
    void aPoolOfTwoConnectionsRuns() throws Exception {
        try (HikariDataSource ds = pool("pool_of_two", 2)) {
            rawTable(ds);

            assertThat(IterativeSnapshot.builder().dataSource(ds).build().run(model()).batchesApplied()).isEqualTo(1);
        }
    }
}
