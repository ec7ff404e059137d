package dev.itersnap.internal;

import dev.itersnap.core.ItersnapException;
import dev.itersnap.dialect.duckdb.DuckDbDialect;
import dev.itersnap.spi.Statement;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The run's statements recognise DuckDB's write conflicts through the dialect ({@code Dialect.isWriteConflict}): a
 * statement in auto-commit that loses one is run again once the other writer's transaction ended.
 */
class DuckDbConflictRetryTest {
    private static Statement update() {
        return Statement.builder("log run").sql("UPDATE t SET v = ").bind(2).sql(" WHERE id = 1").build();
    }

    @Test
    void aLostConflictInAutoCommitIsRunAgainOnceTheOtherWriterEnded() throws Exception {
        try (Connection run = DriverManager.getConnection("jdbc:duckdb:memory:retry");
             Connection other = DriverManager.getConnection("jdbc:duckdb:memory:retry")) {
            run.createStatement().execute("CREATE TABLE t (id INT, v INT)");
            run.createStatement().execute("INSERT INTO t VALUES (1, 0)");
            other.setAutoCommit(false);
            other.createStatement().executeUpdate("UPDATE t SET v = 1 WHERE id = 1"); // holds the row, uncommitted
            Thread ends = new Thread(() -> {
                try {
                    Thread.sleep(150);
                    other.rollback();
                } catch (InterruptedException | SQLException e) {
                    throw new IllegalStateException(e);
                }
            });
            ends.start();

            assertThat(new Jdbc(run, "m", new DuckDbDialect()).update(update())).isEqualTo(1);
            ends.join();
            try (ResultSet rs = run.createStatement().executeQuery("SELECT v FROM t")) {
                rs.next();
                assertThat(rs.getInt(1)).isEqualTo(2);
            }
        }
    }

    @Test
    void withoutTheDialectTheConflictIsNotRecognisedAndFailsAtOnce() throws Exception {
        try (Connection run = DriverManager.getConnection("jdbc:duckdb:memory:noretry");
             Connection other = DriverManager.getConnection("jdbc:duckdb:memory:noretry")) {
            run.createStatement().execute("CREATE TABLE t (id INT, v INT)");
            run.createStatement().execute("INSERT INTO t VALUES (1, 0)");
            other.setAutoCommit(false);
            other.createStatement().executeUpdate("UPDATE t SET v = 1 WHERE id = 1");
            assertThatThrownBy(() -> new Jdbc(run, "m").update(update())).isInstanceOf(ItersnapException.class)
                    .hasMessageContaining("Conflict on update");
            other.rollback();
        }
    }
}
