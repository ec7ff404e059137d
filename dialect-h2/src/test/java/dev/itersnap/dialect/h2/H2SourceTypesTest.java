package dev.itersnap.dialect.h2;

import dev.itersnap.conformance.SourceTypesTests;
import dev.itersnap.conformance.TestDatabase;

import java.util.List;

/** Every H2 type through a late batch's replay; the types itersnap refuses. */
class H2SourceTypesTest extends SourceTypesTests {
    @Override
    protected TestDatabase database() {
        return new H2TestDatabase();
    }

    @Override
    protected List<TypeCase> roundTripTypes() {
        return List.of(
                new TypeCase("CHARACTER(5)", "'ab'", "'abc'"),
                new TypeCase("CHARACTER VARYING(20)", "'a'", "'b'"),
                new TypeCase("VARCHAR_IGNORECASE(10)", "'a'", "'b'"),
                new TypeCase("CHARACTER LARGE OBJECT", "'long a'", "'long b'"),
                new TypeCase("BINARY(4)", "X'01020304'", "X'01020305'"),
                new TypeCase("BINARY VARYING(8)", "X'0102'", "X'010203'"),
                new TypeCase("BINARY LARGE OBJECT", "X'0A0B'", "X'0A0C'"),
                new TypeCase("BOOLEAN", "TRUE", "FALSE"),
                new TypeCase("TINYINT", "1", "2"),
                new TypeCase("SMALLINT", "1", "2"),
                new TypeCase("INTEGER", "1", "2"),
                new TypeCase("BIGINT", "9000000000", "9000000001"),
                new TypeCase("NUMERIC(10,2)", "1.25", "1.26"),
                new TypeCase("NUMERIC(30,10)", "1.5", "1.0000000001"),
                new TypeCase("REAL", "1.5", "2.5"),
                new TypeCase("DOUBLE PRECISION", "1.5", "1.25E-20"),
                new TypeCase("DECFLOAT", "1.5", "1.23E-20"),
                new TypeCase("DECFLOAT(20)", "1.5", "2.5"),
                new TypeCase("DATE", "DATE '2024-01-01'", "DATE '2024-01-02'"),
                new TypeCase("TIME(3)", "TIME '10:00:00.123'", "TIME '10:00:00.124'"),
                new TypeCase("TIME", "TIME '10:00:00'", "TIME '10:00:01'"),
                new TypeCase("TIME(6) WITH TIME ZONE", "TIME WITH TIME ZONE '10:00:00.5+01:00'",
                        "TIME WITH TIME ZONE '10:00:00.5+02:00'"),
                new TypeCase("TIMESTAMP(9)", "TIMESTAMP '2024-01-01 10:00:00.123456789'",
                        "TIMESTAMP '2024-01-01 10:00:00.123456788'"),
                new TypeCase("TIMESTAMP WITH TIME ZONE", "TIMESTAMP WITH TIME ZONE '2024-01-01 10:00:00+01:00'",
                        "TIMESTAMP WITH TIME ZONE '2024-01-01 10:00:00+02:00'"),
                new TypeCase("INTERVAL DAY(5) TO SECOND(3)", "INTERVAL '12345 10:00:00.5' DAY TO SECOND",
                        "INTERVAL '12345 10:00:00.6' DAY TO SECOND"),
                new TypeCase("INTERVAL YEAR(4) TO MONTH", "INTERVAL '1000-1' YEAR TO MONTH",
                        "INTERVAL '1000-2' YEAR TO MONTH"),
                new TypeCase("INTERVAL SECOND(3, 2)", "INTERVAL '100.25' SECOND", "INTERVAL '100.26' SECOND"),
                new TypeCase("ENUM('small', 'large')", "'small'", "'large'"),
                new TypeCase("JSON", "JSON '{\"a\": 1}'", "JSON '{\"a\": 2}'"),
                new TypeCase("UUID", "UUID '123e4567-e89b-12d3-a456-426614174000'",
                        "UUID '123e4567-e89b-12d3-a456-426614174001'"),
                new TypeCase("INTEGER ARRAY", "ARRAY[1, 2]", "ARRAY[2, 1]"),
                new TypeCase("CHARACTER VARYING(10) ARRAY[3]", "ARRAY['a', 'b']", "ARRAY['a', 'c']"),
                new TypeCase("ROW(x INTEGER, y CHARACTER VARYING(5))", "ROW(1, 'a')", "ROW(1, 'b')"));
    }

    @Override
    protected List<TypeCase> refusedTypes() {
        return List.of(new TypeCase("JAVA_OBJECT", "CAST(X'ACED0005740001' || X'61' AS JAVA_OBJECT)", null));
    }

}
