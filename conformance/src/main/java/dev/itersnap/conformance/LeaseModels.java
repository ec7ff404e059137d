package dev.itersnap.conformance;

import dev.itersnap.core.ModelSettings;
import dev.itersnap.internal.ResolvedModel;
import dev.itersnap.spi.ModelView;
import dev.itersnap.spi.SourceColumn;

import java.sql.Types;
import java.util.List;
import java.util.function.UnaryOperator;

/** Models for the tests of the model lock's lease, which reads only a model's name and metadata schema. */
public final class LeaseModels {
    private LeaseModels() {
    }

    /** A model as a dialect's lock receives it from the engine; the lease reads only its name and metadata schema. */
    public static ModelView leaseModel(String name, String metadataSchema, UnaryOperator<String> fold) {
        ModelSettings s = ModelSettings.builder(name).target("snap." + name).source("SELECT * FROM raw")
                .uniqueKey("id").updatedAt("updated_at").sequenceBy("file_date").metadataSchema(metadataSchema)
                .build();
        List<SourceColumn> columns = List.of(new SourceColumn(fold.apply("id"), Types.INTEGER, "INT", 10, 0),
                new SourceColumn(fold.apply("updated_at"), Types.TIMESTAMP, "TIMESTAMP", 26, 6),
                new SourceColumn(fold.apply("file_date"), Types.DATE, "DATE", 10, 0));
        return ResolvedModel.builder(s, fold).sourceColumns(columns).keys(List.of(fold.apply("id")))
                .updatedAt(fold.apply("updated_at")).sequenceBy(fold.apply("file_date")).build();
    }
}
