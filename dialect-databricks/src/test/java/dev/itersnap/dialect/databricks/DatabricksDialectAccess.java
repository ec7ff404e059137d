package dev.itersnap.dialect.databricks;

/** The package's test-only dialects, for tests in other packages. */
public final class DatabricksDialectAccess {
    private DatabricksDialectAccess() {
    }

    /** {@link DatabricksDialect#truncatingScratchTables()}. */
    public static DatabricksDialect truncating() {
        return DatabricksDialect.truncatingScratchTables();
    }
}
