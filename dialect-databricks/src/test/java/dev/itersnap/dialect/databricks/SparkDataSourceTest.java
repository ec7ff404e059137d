package dev.itersnap.dialect.databricks;

import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.SQLTransactionRollbackException;
import java.sql.Statement;
import java.sql.Types;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The JDBC facade over a real local SparkSession with Delta: binding by named markers, values, metadata, counts,
 * errors. Statements here are written with {@code ?} and turned into named markers ({@link QuestionMarks}), as the
 * suite's own statements are.
 */
class SparkDataSourceTest {
    private static SparkDataSource ds;

    @BeforeAll
    static void schema() throws SQLException {
        ds = SparkDataSource.of(SparkTestSession.get());
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE SCHEMA IF NOT EXISTS facade_test");
            c.setSchema("facade_test");
        }
    }

    private static List<Object> row(String sql, Object... binds) throws SQLException {
        try (Connection c = ds.getConnection();
             PreparedStatement ps = c.prepareStatement(QuestionMarks.toNamedMarkers(sql))) {
            for (int i = 0; i < binds.length; i++) {
                ps.setObject(i + 1, binds[i]);
            }
            try (ResultSet rs = ps.executeQuery()) {
                assertThat(rs.next()).isTrue();
                List<Object> out = new ArrayList<>();
                for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) {
                    out.add(rs.getObject(i));
                }
                assertThat(rs.next()).isFalse();
                return out;
            }
        }
    }

    private static int update(String sql, Object... binds) throws SQLException {
        try (Connection c = ds.getConnection();
             PreparedStatement ps = c.prepareStatement(QuestionMarks.toNamedMarkers(sql))) {
            for (int i = 0; i < binds.length; i++) {
                ps.setObject(i + 1, binds[i]);
            }
            return ps.executeUpdate();
        }
    }

    @Test
    void eightValuesBindInTheirOrder() throws SQLException {
        // Spark 4.2.0 misorders five or more positional values (SPARK-58341); named markers do not
        assertThat(row("SELECT ?, ?, ?, ?, ?, ?, ?, ?", 1, 2, 3, 4, 5, 6, 7, 8))
                .containsExactly(1, 2, 3, 4, 5, 6, 7, 8);
    }

    @Test
    void questionMarksInLiteralsQuotedNamesAndCommentsAreNotMarkers() throws SQLException {
        assertThat(row("SELECT '?' AS `a?`, 'it\\'s ?', ? /* ? */ -- ?\n", "v")).containsExactly("?", "it's ?", "v");
        assertThat(QuestionMarks.toNamedMarkers("SELECT ?, '?', `?`, \"?\", ? -- ?\n/* ? */ ?"))
                .isEqualTo("SELECT :_p1, '?', `?`, \"?\", :_p2 -- ?\n/* ? */ :_p3");
    }

    @Test
    void itersnapStatementsAreRenderedWithNamedMarkersOnThisConnection() throws SQLException {
        dev.itersnap.spi.Statement s = dev.itersnap.spi.Statement.builder("test").sql("SELECT '?', ").bind(7)
                .sql(", ").bind("x").build();
        try (Connection c = ds.getConnection(); PreparedStatement ps = s.prepare(c); ResultSet rs = ps.executeQuery()) {
            assertThat(c.isWrapperFor(dev.itersnap.spi.NamedMarkers.class)).isTrue();
            rs.next();
            assertThat(List.of(rs.getObject(1), rs.getObject(2), rs.getObject(3))).containsExactly("?", 7, "x");
        }
    }

    @Test
    void valuesOfEveryEngineTypeRoundTripAndNullBindsAsNull() throws SQLException {
        LocalDate day = LocalDate.parse("2024-02-29");
        LocalDateTime time = LocalDateTime.parse("2024-02-29T23:59:58.123456");
        List<Object> r = row("SELECT CAST(? AS DATE), CAST(? AS TIMESTAMP), ?, ?, ?, ?, CAST(? AS STRING), ? IS NULL",
                day, time, new BigDecimal("12.50"), 10_000_000_000L, true, "O'Brien \\ ?", null, null);
        assertThat(r).containsExactly(java.sql.Date.valueOf(day), java.sql.Timestamp.valueOf(time),
                new BigDecimal("12.50"), 10_000_000_000L, true, "O'Brien \\ ?", null, true);
        try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement(QuestionMarks.toNamedMarkers(
                "SELECT CAST(? AS DATE) AS d, CAST(? AS TIMESTAMP) AS t, CAST(NULL AS BIGINT) AS n"))) {
            ps.setObject(1, java.sql.Date.valueOf(day));
            ps.setTimestamp(2, java.sql.Timestamp.valueOf(time));
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                assertThat(rs.getObject("d", LocalDate.class)).isEqualTo(day);
                assertThat(rs.getObject(2, LocalDateTime.class)).isEqualTo(time);
                assertThat(rs.getLong("n")).isZero();
                assertThat(rs.wasNull()).isTrue();
            }
        }
    }

    @Test
    void queryMetadataMapsSparkTypesToJdbcTypes() throws SQLException {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(
                "SELECT * FROM (SELECT 1 AS i, 2L AS b, CAST(1.5 AS DECIMAL(10,2)) AS d, 'x' AS s, "
                        + "CAST('x' AS VARCHAR(20)) AS v, DATE'2024-01-01' AS dt, TIMESTAMP'2024-01-01 00:00:00' AS ts, "
                        + "TIMESTAMP_NTZ'2024-01-01 00:00:00' AS ntz, 1.5D AS f, TRUE AS z) q WHERE 1 = 0")) {
            ResultSetMetaData md = rs.getMetaData();
            List<String> described = new ArrayList<>();
            for (int i = 1; i <= md.getColumnCount(); i++) {
                described.add(md.getColumnLabel(i) + " " + md.getColumnType(i) + " " + md.getColumnTypeName(i) + " "
                        + md.getPrecision(i) + "," + md.getScale(i));
            }
            assertThat(described).containsExactly("i " + Types.INTEGER + " INT 10,0", "b " + Types.BIGINT + " BIGINT 19,0",
                    "d " + Types.DECIMAL + " DECIMAL(10,2) 10,2", "s " + Types.VARCHAR + " STRING 0,0",
                    "v " + Types.VARCHAR + " STRING 0,0", "dt " + Types.DATE + " DATE 10,0",
                    "ts " + Types.TIMESTAMP + " TIMESTAMP 26,6", "ntz " + Types.TIMESTAMP + " TIMESTAMP_NTZ 26,6",
                    "f " + Types.DOUBLE + " DOUBLE 15,0", "z " + Types.BOOLEAN + " BOOLEAN 0,0");
            assertThat(rs.next()).isFalse();
        }
    }

    @Test
    void dmlReportsAffectedRowsAndInsertReportsNone() throws SQLException {
        update("CREATE OR REPLACE TABLE counts (k INT, v STRING) USING DELTA");
        assertThat(update("INSERT INTO counts VALUES (?, ?), (?, ?), (?, ?)", 1, "a", 2, "b", 3, null))
                .as("Spark returns no count for INSERT").isZero();
        assertThat(update("UPDATE counts SET v = ? WHERE k >= ?", "z", 2)).isEqualTo(2);
        assertThat(update("MERGE INTO counts t USING (SELECT CAST(? AS INT) AS k) s ON t.k = s.k "
                + "WHEN MATCHED THEN DELETE WHEN NOT MATCHED THEN INSERT (k, v) VALUES (s.k, NULL)", 4)).isEqualTo(1);
        assertThat(update("MERGE INTO counts t USING (SELECT k FROM counts WHERE k < ?) s ON FALSE "
                + "WHEN NOT MATCHED THEN INSERT (k, v) VALUES (s.k + 10, 'copy')", 3)).isEqualTo(2);
        assertThat(update("DELETE FROM counts WHERE v = ?", "copy")).isEqualTo(2);
        assertThat(row("SELECT COUNT(*), COUNT(v) FROM counts")).containsExactly(4L, 3L);
    }

    @Test
    void metadataFoldsToLowerCaseAndFindsTables() throws SQLException {
        update("CREATE TABLE IF NOT EXISTS meta_probe (k INT) USING DELTA");
        try (Connection c = ds.getConnection()) {
            var md = c.getMetaData();
            assertThat(md.storesLowerCaseIdentifiers()).isTrue();
            assertThat(md.getDatabaseProductName()).isEqualTo("Spark SQL");
            assertThat(new DatabricksDialect().handlesProduct(md.getDatabaseProductName())).isTrue();
            assertThat(c.getSchema()).isEqualTo("facade_test");
            try (ResultSet rs = md.getTables(null, null, "meta_probe", null)) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getString("TABLE_SCHEM")).isEqualTo("facade_test");
            }
            try (ResultSet rs = md.getTables(null, "no_such_schema", "meta_probe", null)) {
                assertThat(rs.next()).isFalse();
            }
        }
    }

    @Test
    void failuresCarryTheErrorConditionAndSqlState() {
        assertThatThrownBy(() -> row("SELECT * FROM no_such_table WHERE k = ?", 1))
                .isInstanceOf(SQLException.class).hasMessageContaining("[TABLE_OR_VIEW_NOT_FOUND]")
                .extracting(e -> ((SQLException) e).getSQLState()).isEqualTo("42P01");
        assertThatThrownBy(() -> row("SELECT ?, ?", 1)).isInstanceOf(SQLException.class)
                .hasMessageContaining("UNBOUND_SQL_PARAMETER").hasMessageContaining("_p2");
    }

    @Test
    void aDeltaWriteConflictIsARetryableException() {
        SQLException conflict = SparkSql.translate(new RuntimeException("outer",
                new java.util.ConcurrentModificationException("[DELTA_CONCURRENT_APPEND] conflict")));
        assertThat((Throwable) conflict).isInstanceOf(SQLTransactionRollbackException.class);
    }

    @Test
    void theCallersSessionKeepsItsSettings() {
        SparkSession caller = SparkTestSession.get();
        assertThat(caller.conf().getOption("spark.sql.legacy.parameterSubstitution.constantsOnly").getOrElse(() -> "unset"))
                .isNotEqualTo("true");
        assertThat(caller.catalog().currentDatabase()).isEqualTo("default");
    }
}
