package dev.itersnap.dialect.duckdb;

import dev.itersnap.conformance.SourceTypesTests;
import dev.itersnap.conformance.TestDatabase;

import java.util.List;

/** Every DuckDB type through a late batch's replay; ENUM refused (the driver does not report its values). */
class DuckDbSourceTypesTest extends SourceTypesTests {
    @Override
    protected TestDatabase database() {
        return new DuckDbTestDatabase();
    }

    @Override
    protected List<TypeCase> roundTripTypes() {
        return List.of(
                new TypeCase("VARCHAR", "'a'", "'b'"),
                new TypeCase("VARCHAR(20)", "'a'", "'é'"),
                new TypeCase("BLOB", "'\\x01\\x02'::BLOB", "'\\x01\\x03'::BLOB"),
                new TypeCase("BOOLEAN", "TRUE", "FALSE"),
                new TypeCase("TINYINT", "1", "2"),
                new TypeCase("SMALLINT", "1", "2"),
                new TypeCase("INTEGER", "1", "2"),
                new TypeCase("BIGINT", "9000000000", "9000000001"),
                new TypeCase("HUGEINT", "170141183460469231731687303715884105727", "1"),
                new TypeCase("UTINYINT", "1", "255"),
                new TypeCase("USMALLINT", "1", "65535"),
                new TypeCase("UINTEGER", "1", "4294967295"),
                new TypeCase("UBIGINT", "1", "18446744073709551615"),
                new TypeCase("UHUGEINT", "1", "340282366920938463463374607431768211455"),
                new TypeCase("DECIMAL(10,2)", "1.25", "1.26"),
                new TypeCase("DECIMAL(38,10)", "1.5", "1.0000000001"),
                new TypeCase("REAL", "1.5", "2.5"),
                new TypeCase("DOUBLE", "1.5", "1.25E-20"),
                new TypeCase("DATE", "DATE '2024-01-01'", "DATE '2024-01-02'"),
                new TypeCase("TIME", "TIME '10:00:00.123456'", "TIME '10:00:00.123457'"),
                new TypeCase("TIMETZ", "TIMETZ '10:00:00+01'", "TIMETZ '10:00:00+02'"),
                new TypeCase("TIMESTAMP", "TIMESTAMP '2024-01-01 10:00:00.123456'",
                        "TIMESTAMP '2024-01-01 10:00:00.123457'"),
                new TypeCase("TIMESTAMP_S", "TIMESTAMP_S '2024-01-01 10:00:00'", "TIMESTAMP_S '2024-01-01 10:00:01'"),
                new TypeCase("TIMESTAMP_MS", "TIMESTAMP_MS '2024-01-01 10:00:00.123'",
                        "TIMESTAMP_MS '2024-01-01 10:00:00.124'"),
                new TypeCase("TIMESTAMP_NS", "TIMESTAMP_NS '2024-01-01 10:00:00.123456789'",
                        "TIMESTAMP_NS '2024-01-01 10:00:00.123456788'"),
                new TypeCase("TIMESTAMPTZ", "TIMESTAMPTZ '2024-01-01 10:00:00+01'",
                        "TIMESTAMPTZ '2024-01-01 10:00:00+02'"),
                new TypeCase("INTERVAL", "INTERVAL '1 month'", "INTERVAL '30 days'"),
                new TypeCase("UUID", "UUID '123e4567-e89b-12d3-a456-426614174000'",
                        "UUID '123e4567-e89b-12d3-a456-426614174001'"),
                new TypeCase("JSON", "'{\"a\": 1}'::JSON", "'{\"a\":1}'::JSON"),
                new TypeCase("INTEGER[]", "[1, 2]", "[2, 1]"),
                new TypeCase("VARCHAR[3]", "['a', 'b', 'c']", "['a', 'b', 'd']"),
                new TypeCase("STRUCT(x INTEGER, y VARCHAR)", "{'x': 1, 'y': 'a'}", "{'x': 1, 'y': 'b'}"),
                new TypeCase("MAP(VARCHAR, INTEGER)", "MAP {'a': 1}", "MAP {'a': 2}"),
                new TypeCase("UNION(num INTEGER, str VARCHAR)", "union_value(num := 1)", "union_value(str := '1')"),
                new TypeCase("BIT", "'0101'::BIT", "'0110'::BIT"),
                new TypeCase("VARINT", "123456789012345678901234567890", "1"));
    }

    @Override
    protected List<TypeCase> refusedTypes() {
        return List.of(new TypeCase("ENUM('small', 'large')", "CAST('small' AS ENUM('small', 'large'))", null));
    }
}
