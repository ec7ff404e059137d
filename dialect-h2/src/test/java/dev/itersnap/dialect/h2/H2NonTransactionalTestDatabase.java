package dev.itersnap.dialect.h2;

import dev.itersnap.conformance.TestDatabase;
import dev.itersnap.spi.Dialect;

import javax.sql.DataSource;

/**
 * H2 run the way itersnap runs on Delta Lake: the dialect reports no transactional DML, so the engine leaves every
 * statement in auto-commit and relies on the ledger, recovery and the pending table for crash safety. Running the
 * conformance suite (fault injection above all) on it proves the engine's non-transactional path in seconds; the
 * Databricks module runs a lean selection of the same suite on Spark + Delta.
 */
final class H2NonTransactionalTestDatabase implements TestDatabase {
    private final H2TestDatabase h2 = new H2TestDatabase();
    private final Dialect dialect;

    H2NonTransactionalTestDatabase() {
        this(new H2Dialect(false));
    }

    /** With another H2 dialect without transactional DML (one locked by a lease). */
    H2NonTransactionalTestDatabase(Dialect dialect) {
        this.dialect = dialect;
    }

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
