package dev.itersnap.spi;

/**
 * A column as JDBC metadata describes it (of the source query or of an existing table).
 *
 * @param name      the name the database reports
 * @param jdbcType  {@link java.sql.Types} code
 * @param typeName  the database's type name
 * @param precision precision or length (0 when not applicable)
 * @param scale     scale (0 when not applicable)
 */
public record SourceColumn(String name, int jdbcType, String typeName, int precision, int scale) {
    /** The Java side of the column's values. */
    public ValueType valueType() {
        return ValueType.of(jdbcType, typeName);
    }
}
