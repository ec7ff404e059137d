package dev.itersnap.dialect.duckdb;

import dev.itersnap.spi.SourceColumn;
import dev.itersnap.spi.Statement;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** What the DuckDB dialect changes from the shared base, against the real driver where it is about the driver. */
class DuckDbDialectSqlTest {
    private final DuckDbDialect dialect = new DuckDbDialect();

    @Test
    void bindsTheValuesTheDriverRefusesThroughTheSharedSetters() throws SQLException {
        Statement s = Statement.builder("probe").sql("SELECT ").bind(LocalDate.of(2024, 2, 29)).sql(", ")
                .bind(new BigDecimal("1E+3")).sql(", ").bind(LocalDateTime.of(2024, 3, 1, 6, 0, 0, 123_456_000))
                .sql(", ").bind(null).sql(", ").bind(true).build();
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:")) {
            assertThatThrownBy(() -> s.prepare(c).close()).as("the shared binding, refused by the driver")
                    .hasMessageContaining("Unknown target type 91");
            try (PreparedStatement ps = s.prepare(c, dialect.valueBinder()); ResultSet rs = ps.executeQuery()) {
                rs.next();
                assertThat(rs.getObject(1, LocalDate.class)).isEqualTo(LocalDate.of(2024, 2, 29));
                assertThat(rs.getBigDecimal(2)).isEqualByComparingTo("1000");
                assertThat(rs.getObject(3, LocalDateTime.class)).isEqualTo(LocalDateTime.of(2024, 3, 1, 6, 0, 0,
                        123_456_000));
                assertThat(rs.getObject(4)).isNull();
                assertThat(rs.getBoolean(5)).isTrue();
            }
        }
    }

    @Test
    void recognisesItsWriteConflictsWhichCarryNoSqlState() throws SQLException {
        try (Connection a = DriverManager.getConnection("jdbc:duckdb:memory:conflict");
             Connection b = DriverManager.getConnection("jdbc:duckdb:memory:conflict")) {
            a.createStatement().execute("CREATE TABLE t (id INT, v INT)");
            a.createStatement().execute("INSERT INTO t VALUES (1, 0)");
            a.setAutoCommit(false);
            b.setAutoCommit(false);
            a.createStatement().executeUpdate("UPDATE t SET v = 1 WHERE id = 1");
            SQLException lost = org.assertj.core.api.Assertions.catchThrowableOfType(SQLException.class,
                    () -> b.createStatement().executeUpdate("UPDATE t SET v = 2 WHERE id = 1"));
            assertThat(lost.getSQLState()).isNull();
            assertThat(dialect.isWriteConflict(lost)).as(lost.getMessage()).isTrue();
            assertThat(dialect.isWriteConflict(new SQLException("Catalog Error: Table with name x does not exist!")))
                    .isFalse();
            a.rollback();
            b.rollback();
        }
    }

    @Test
    void anErrorQuotesTheFileAndReasonOfACsvError() {
        SQLException e = new SQLException("Conversion Error: CSV Error on Line: 3\nOriginal Line: two,b\nError when "
                + "converting column \"id\". Could not convert string \"two\" to 'INTEGER'\n\n  file = /x/c_1.csv\n"
                + "  delimiter = , (Auto-Detected)\n");
        assertThat(dialect.errorSummary(e)).isEqualTo("Conversion Error: CSV Error on Line: 3 of file /x/c_1.csv: "
                + "Error when converting column \"id\". Could not convert string \"two\" to 'INTEGER'");
        assertThat(dialect.errorSummary(new SQLException("Catalog Error: x\nLINE 1: ..."))).isEqualTo(
                "Catalog Error: x");
    }

    @Test
    void typesAsTheDriverNamesThemAndEnumsRefused() {
        assertThat(dialect.columnType(new SourceColumn("a", Types.VARCHAR, "VARCHAR", Integer.MAX_VALUE, 0)))
                .isEqualTo("VARCHAR");
        assertThat(dialect.columnType(new SourceColumn("a", Types.ARRAY, "VARCHAR[3]", 0, 0))).isEqualTo("VARCHAR[3]");
        assertThat(dialect.columnType(new SourceColumn("a", Types.DECIMAL, "DECIMAL(12,3)", 12, 3)))
                .isEqualTo("DECIMAL(12,3)");
        assertThatThrownBy(() -> dialect.columnType(new SourceColumn("a", Types.OTHER, "ENUM", 0, 0)))
                .hasMessageContaining("ENUM");
        SourceColumn integer = new SourceColumn("a", Types.INTEGER, "INTEGER", 10, 0);
        SourceColumn bigint = new SourceColumn("a", Types.BIGINT, "BIGINT", 19, 0);
        SourceColumn seconds = new SourceColumn("a", Types.TIMESTAMP, "TIMESTAMP_S", 29, 0);
        SourceColumn micros = new SourceColumn("a", Types.TIMESTAMP, "TIMESTAMP", 29, 0);
        assertThat(List.of(dialect.widens(integer, bigint), dialect.widens(bigint, integer),
                dialect.widens(seconds, micros), dialect.widens(micros, seconds))).containsExactly(true, false, true,
                false);
        assertThat(dialect.widenColumn(new dev.itersnap.core.TableName(List.of("t")), "a", bigint).sql())
                .isEqualTo("ALTER TABLE \"t\" ALTER COLUMN \"a\" SET DATA TYPE BIGINT");
    }
}
