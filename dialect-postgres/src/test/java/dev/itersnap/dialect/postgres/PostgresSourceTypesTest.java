package dev.itersnap.dialect.postgres;

import dev.itersnap.conformance.SourceTypesTests;
import dev.itersnap.conformance.TestDatabase;

import java.util.List;

/**
 * Every PostgreSQL type through a late batch's replay: numbers, text, binary, times and intervals, json, jsonb and
 * xml, geometric types (boxes and circles of equal area but another position are a change), network addresses, bit
 * strings, text search, ranges, arrays, an enum.
 */
class PostgresSourceTypesTest extends SourceTypesTests {
    @Override
    protected boolean stringsHoldNul() {
        return false;
    }

    @Override
    protected TestDatabase database() {
        return new PostgresTestDatabase();
    }

    @Override
    protected List<TypeCase> roundTripTypes() {
        fixture.execute("CREATE TYPE mood AS ENUM ('sad', 'happy')");
        return List.of(
                new TypeCase("smallint", "1", "2"),
                new TypeCase("integer", "1", "2"),
                new TypeCase("bigint", "9000000000", "9000000001"),
                new TypeCase("numeric(12,3)", "1.5", "1.501"),
                new TypeCase("numeric", "1.5", "1.23E-20"),
                new TypeCase("real", "1.5", "2.5"),
                new TypeCase("double precision", "1.5", "1.25E-20"),
                new TypeCase("money", "'1.50'", "'1.51'"),
                new TypeCase("varchar(20)", "'a'", "'b'"),
                new TypeCase("char(5)", "'ab'", "'abc'"),
                new TypeCase("text", "'a'", "'b'"),
                new TypeCase("\"char\"", "'a'", "'b'"),
                new TypeCase("bytea", "'\\x0102'::bytea", "'\\x0103'::bytea"),
                new TypeCase("timestamp(3)", "'2024-01-01 10:00:00.123'", "'2024-01-01 10:00:00.124'"),
                new TypeCase("timestamptz", "'2024-01-01 10:00:00+01'", "'2024-01-01 10:00:00+02'"),
                new TypeCase("date", "'2024-01-01'", "'2024-01-02'"),
                new TypeCase("time(3)", "'10:00:00.123'", "'10:00:00.124'"),
                new TypeCase("timetz", "'10:00:00+01'", "'10:00:00+02'"),
                new TypeCase("interval", "'1 day'", "'24 hours'"),
                new TypeCase("boolean", "true", "false"),
                new TypeCase("uuid", "'123e4567-e89b-12d3-a456-426614174000'", "'123e4567-e89b-12d3-a456-426614174001'"),
                new TypeCase("json", "'{\"a\": 1}'", "'{\"a\": 2}'"),
                new TypeCase("jsonb", "'{\"a\": 1}'", "'{\"a\": 2}'"),
                new TypeCase("xml", "'<a>1</a>'", "'<a>2</a>'"),
                new TypeCase("point", "'(1,2)'", "'(1,3)'"),
                new TypeCase("line", "'{1,2,3}'", "'{1,2,4}'"),
                new TypeCase("lseg", "'[(0,0),(1,1)]'", "'[(0,0),(1,2)]'"),
                new TypeCase("box", "'(1,1),(0,0)'", "'(2,2),(1,1)'"),
                new TypeCase("path", "'[(0,0),(1,1)]'", "'[(0,0),(1,2)]'"),
                new TypeCase("polygon", "'((0,0),(1,1),(1,0))'", "'((0,0),(2,2),(2,0))'"),
                new TypeCase("circle", "'<(0,0),1>'", "'<(5,5),1>'"),
                new TypeCase("inet", "'10.0.0.1'", "'10.0.0.2'"),
                new TypeCase("cidr", "'10.0.0.0/8'", "'10.0.0.0/16'"),
                new TypeCase("macaddr", "'08:00:2b:01:02:03'", "'08:00:2b:01:02:04'"),
                new TypeCase("macaddr8", "'08:00:2b:01:02:03:04:05'", "'08:00:2b:01:02:03:04:06'"),
                new TypeCase("bit(4)", "B'1010'", "B'1011'"),
                new TypeCase("varbit(8)", "B'10'", "B'101'"),
                new TypeCase("tsvector", "'a b'", "'a c'"),
                new TypeCase("tsquery", "'a & b'", "'a & c'"),
                new TypeCase("int4range", "'[1,5)'", "'[1,6)'"),
                new TypeCase("tstzrange", "'[2024-01-01,2024-02-01)'", "'[2024-01-01,2024-03-01)'"),
                new TypeCase("integer[]", "'{1,2}'", "'{2,1}'"),
                new TypeCase("text[]", "'{a,b}'", "'{a,c}'"),
                new TypeCase("json[]", "ARRAY['{\"a\": 1}'::json]", "ARRAY['{\"a\": 2}'::json]"),
                new TypeCase("pg_lsn", "'0/16B3748'", "'0/16B3749'"),
                new TypeCase("mood", "'sad'", "'happy'"));
    }
}
