package com.example.customers;

import dev.itersnap.core.HardDeletes;
import dev.itersnap.core.ModelSettings;

/** The application's history of customer tiers, built from a full export file a day. */
public final class CustomerModel {
    private CustomerModel() {
    }

    /**
     * The model. {@code sequenceBy} is the column that orders the files: the export's business date
     * ({@code file_date}) is right; the time a file was loaded ({@code loaded_at}) is the classic mistake.
     */
    public static ModelSettings customers(String sequenceBy) {
        return ModelSettings.builder("customers")
                .target("analytics.customers_history")
                .source("SELECT * FROM raw.customer_exports")
                .uniqueKey("customer_id")
                .updatedAt("updated_at")
                .sequenceBy(sequenceBy)
                .checkCols("tier")                     // loaded_at is bookkeeping, not a change
                .hardDeletes(HardDeletes.INVALIDATE)   // each file is a full picture: a missing customer left
                .build();
    }
}
