package dev.itersnap.dialect.databricks;

import dev.itersnap.conformance.SourceTypesTests;
import dev.itersnap.conformance.TestDatabase;

import java.util.List;

/**
 * Every Spark SQL type a Delta table stores, through a late batch's replay on local Spark + Delta (maps and variants,
 * which have no equality, compared as JSON); intervals, which Delta cannot store, refused up front. Selected: those two
 * (about 2 minutes); the other cases of the suite run on H2 and PostgreSQL, {@code -Ditersnap.spark.all=true} runs
 * them here.
 */
@SparkSelection({"everyTypeRoundTripsThroughALateBatchReplayAndItsChangesAreSeen",
        "columnsNamedLikeTheSqlsAliasesAreCarriedThroughEveryKindOfRun",
        "aTypeThatCannotRoundTripIsRefusedNamingTheColumnAndTheType",
        "sequenceKeyOfEveryComponentTypeIsTheJavaKeyAndSortsLikeTheValues"})
class SparkSourceTypesTest extends SourceTypesTests {
    /** Spark's TIMESTAMP is an instant already (its key is covered by the other key test); no type of its own. */
    @Override
    protected String timestampWithTimeZoneType() {
        return null;
    }

    @Override
    protected TestDatabase database() {
        return new SparkTestDatabase();
    }

    @Override
    protected List<TypeCase> roundTripTypes() {
        return List.of(
                new TypeCase("TINYINT", "CAST(1 AS TINYINT)", "CAST(2 AS TINYINT)"),
                new TypeCase("SMALLINT", "CAST(1 AS SMALLINT)", "CAST(2 AS SMALLINT)"),
                new TypeCase("INT", "1", "2"),
                new TypeCase("BIGINT", "9000000000", "9000000001"),
                new TypeCase("FLOAT", "CAST(1.5 AS FLOAT)", "CAST(2.5 AS FLOAT)"),
                new TypeCase("DOUBLE", "1.5D", "1.25E-20D"),
                new TypeCase("DECIMAL(10,2)", "1.25BD", "1.26BD"),
                new TypeCase("DECIMAL(38,18)", "1.5BD", "1.000000000000000001BD"),
                new TypeCase("STRING", "'a'", "'b'"),
                new TypeCase("BINARY", "X'0102'", "X'0103'"),
                new TypeCase("BOOLEAN", "TRUE", "FALSE"),
                new TypeCase("DATE", "DATE '2024-01-01'", "DATE '2024-01-02'"),
                new TypeCase("TIMESTAMP", "TIMESTAMP '2024-01-01 10:00:00.123456'",
                        "TIMESTAMP '2024-01-01 10:00:00.123457'"),
                new TypeCase("TIMESTAMP_NTZ", "TIMESTAMP_NTZ '2024-01-01 10:00:00.5'",
                        "TIMESTAMP_NTZ '2024-01-01 10:00:00.6'"),
                new TypeCase("ARRAY<INT>", "ARRAY(1, 2)", "ARRAY(2, 1)"),
                new TypeCase("MAP<STRING, INT>", "MAP('a', 1)", "MAP('a', 2)"),
                new TypeCase("STRUCT<x: INT, y: STRING>", "NAMED_STRUCT('x', 1, 'y', 'a')",
                        "NAMED_STRUCT('x', 1, 'y', 'b')"),
                new TypeCase("VARIANT", "PARSE_JSON('{\"a\": 1}')", "PARSE_JSON('{\"a\": 2}')"));
    }

    @Override
    protected List<TypeCase> refusedTypes() {
        return List.of(new TypeCase("INTERVAL DAY TO SECOND", "INTERVAL '1 10:00:00' DAY TO SECOND", null));
    }
}
