package dev.itersnap.dialect.h2;

import dev.itersnap.conformance.LeaseFencingTests;
import dev.itersnap.conformance.TestDatabase;
import dev.itersnap.spi.Dialect;

import javax.sql.DataSource;
import java.time.Duration;

/**
 * The lease's fencing by fault injection on H2 run the way itersnap runs on Delta Lake: no transactional DML, and
 * the model lock a lease ({@code LeaseLock}, the Databricks dialect's lock) of 300 ms instead of H2's lock row.
 * Every write point of both scenarios; each waits one TTL for the lease to lapse.
 */
class H2LeaseFencingTest extends LeaseFencingTests {
    private static final Duration TTL = Duration.ofMillis(200);

    @Override
    protected Duration leaseTtl() {
        return TTL;
    }

    @Override
    protected TestDatabase database() {
        return new H2LeaseDatabase();
    }

    /** H2 without transactional DML, locked by a lease. */
    private static final class H2LeaseDatabase implements TestDatabase {
        private final H2TestDatabase h2 = new H2TestDatabase();
        private final Dialect dialect = new H2Dialect(false, TTL);

        @Override
        public DataSource newDatabase(String scenario) {
            return h2.newDatabase(scenario);
        }

        @Override
        public void discard(DataSource database) {
            h2.discard(database);
        }

        @Override
        public String sqlType(ColumnType type) {
            return h2.sqlType(type);
        }

        @Override
        public Dialect dialect() {
            return dialect;
        }
    }
}
