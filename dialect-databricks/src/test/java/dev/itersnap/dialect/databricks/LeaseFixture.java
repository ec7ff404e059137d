package dev.itersnap.dialect.databricks;

import dev.itersnap.conformance.LeaseModels;
import dev.itersnap.spi.lease.LeaseLock;

import java.util.Locale;
import java.util.function.UnaryOperator;

/** The lease statements of the Delta lease tests. */
final class LeaseFixture {
    /** Spark SQL's quoting (what DatabricksDialect.quote does). */
    static final UnaryOperator<String> BACKTICKS = id -> "`" + id.replace("`", "``") + "`";

    private LeaseFixture() {
    }

    /** The lease statements of a model on Delta, as the Databricks dialect makes them. */
    static LeaseLock.Statements deltaLease(String model, String metadataSchema) {
        return new LeaseLock.Statements(new DatabricksDialect(), LeaseModels.leaseModel(model, metadataSchema,
                x -> x.toLowerCase(Locale.ROOT)), DatabricksDialect.CLOCK);
    }
}
