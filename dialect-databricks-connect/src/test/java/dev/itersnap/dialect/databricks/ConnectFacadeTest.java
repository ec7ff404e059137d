package dev.itersnap.dialect.databricks;

import dev.itersnap.spi.lease.LeaseLock;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransactionRollbackException;
import java.sql.Statement;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CyclicBarrier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * What the JDBC facade makes of Spark Connect's answers. Through Connect the client knows no Delta class: a write
 * conflict arrives as a plain SparkException that carries only Delta's error condition, and a result's schema is a
 * call to the server that can fail after the statement was accepted.
 */
class ConnectFacadeTest {
    /**
     * Two jobs (two Connect sessions) UPDATE different rows of one table without deletion vectors at the same time:
     * the loser's conflict is an SQLTransactionRollbackException with SQLSTATE 40001 naming the Delta condition, which
     * the engine's retry and the lease recognize as a lost race.
     */
    @Test
    void aDeltaWriteConflictThroughConnectIsARetryableConflict() throws Exception {
        SparkSession one = ConnectTestSession.newSession();
        SparkSession two = ConnectTestSession.newSession();
        try (Connection c = SparkDataSource.of(one).getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE SCHEMA IF NOT EXISTS connect_facade");
            s.execute("CREATE OR REPLACE TABLE connect_facade.conflicts (id INT, v INT) USING DELTA "
                    + "TBLPROPERTIES ('delta.enableDeletionVectors' = 'false')");
            s.execute("INSERT INTO connect_facade.conflicts VALUES (1, 0), (2, 0)");
        }
        List<Throwable> failures = new CopyOnWriteArrayList<>();
        CyclicBarrier start = new CyclicBarrier(2);
        List<Thread> jobs = new ArrayList<>();
        for (int job = 1; job <= 2; job++) {
            SparkSession session = job == 1 ? one : two;
            int id = job;
            Thread t = new Thread(() -> {
                try (Connection c = SparkDataSource.of(session).getConnection(); Statement s = c.createStatement()) {
                    for (int i = 0; i < 10 && failures.isEmpty(); i++) {
                        if (i == 0) {
                            start.await();
                        }
                        s.executeUpdate("UPDATE connect_facade.conflicts SET v = v + 1 WHERE id = " + id);
                    }
                } catch (Throwable e) {
                    failures.add(e);
                }
            });
            jobs.add(t);
            t.start();
        }
        for (Thread t : jobs) {
            t.join();
        }
        assertThat(failures).as("ten pairs of UPDATEs rewriting one file: at least one conflict").isNotEmpty();
        for (Throwable e : failures) {
            assertThat(e).isInstanceOf(SQLTransactionRollbackException.class);
            assertThat(((SQLException) e).getSQLState()).isEqualTo("40001");
            assertThat(e.getMessage()).startsWith("[DELTA_CONCURRENT");
            assertThat(LeaseLock.isConflict(e)).isTrue();
            assertThat(e.getCause()).as("no Delta class on the client").isNotInstanceOf(
                    java.util.ConcurrentModificationException.class);
        }
    }

    /**
     * A query whose table is dropped between the statement and the reading of its result: on Connect the schema is
     * asked of the server then, and the analysis error comes back as an SQLException naming the condition (it used to
     * escape the facade as an UndeclaredThrowableException: AnalysisException is checked).
     */
    @Test
    void anAnalysisErrorWhenTheSchemaIsReadIsAnSqlException() throws Exception {
        SparkSession session = ConnectTestSession.newSession();
        session.sql("CREATE SCHEMA IF NOT EXISTS connect_facade");
        session.sql("CREATE OR REPLACE TABLE connect_facade.late (id INT) USING DELTA");
        Dataset<Row> query = SparkSql.run(session, "SELECT * FROM connect_facade.late", List.of());
        Dataset<Row> count = SparkSql.run(session, "SELECT * FROM connect_facade.late", List.of());
        session.sql("DROP TABLE connect_facade.late");

        Throwable read = catchThrowable(() -> SparkSql.read(query, 0, ZoneOffset.UTC));
        Throwable counted = catchThrowable(() -> SparkSql.updateCount(count));

        for (Throwable e : List.of(read, counted)) {
            assertThat(e).isInstanceOf(SQLException.class).hasMessageStartingWith("[TABLE_OR_VIEW_NOT_FOUND]");
        }
    }
}
