package dev.itersnap.dialect.h2;

import dev.itersnap.conformance.ChangingSourceTests;
import dev.itersnap.conformance.TestDatabase;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

import static org.assertj.core.api.Assertions.assertThat;

/** A source that changes while a run reads it, on H2. */
class H2ChangingSourceTest extends ChangingSourceTests {
    @Override
    protected TestDatabase database() {
        return new H2TestDatabase();
    }

    /**
     * What two reads of one transaction see when a loader replaces a file between them (docs/semantics.md, "Reading
     * the source"): at READ COMMITTED each statement reads the rows committed when it starts (the second read sees
     * the file gone); at REPEATABLE READ both read the snapshot the transaction took at its first read.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(ints = {Connection.TRANSACTION_READ_COMMITTED, Connection.TRANSACTION_REPEATABLE_READ})
    void twoReadsOfOneTransactionWhileALoaderReplacesAFile(int isolation) throws SQLException {
        DataSource ds = new H2TestDatabase().newDatabase("rr");
        try (Connection run = ds.getConnection(); Connection loader = ds.getConnection();
             Statement r = run.createStatement(); Statement l = loader.createStatement()) {
            l.execute("CREATE TABLE raw_rows (id INT, file_date DATE)");
            l.execute("INSERT INTO raw_rows VALUES (1, DATE '2024-01-03'), (2, DATE '2024-01-03')");
            run.setAutoCommit(false);
            run.setTransactionIsolation(isolation);
            long first = count(r);
            l.execute("DELETE FROM raw_rows WHERE file_date = DATE '2024-01-03'"); // commits: autocommit
            long second = count(r);
            l.execute("INSERT INTO raw_rows VALUES (1, DATE '2024-01-03'), (2, DATE '2024-01-03'), "
                    + "(3, DATE '2024-01-03')");
            long third = count(r);
            run.commit();
            long after = count(r);
            assertThat(first).isEqualTo(2);
            if (isolation == Connection.TRANSACTION_READ_COMMITTED) {
                assertThat(new long[] {second, third}).containsExactly(0, 3);
            } else {
                assertThat(new long[] {second, third}).containsExactly(2, 2);
            }
            assertThat(after).isEqualTo(3);
            run.rollback();
        } finally {
            database().discard(ds);
        }
    }

    private static long count(Statement s) throws SQLException {
        try (ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM raw_rows")) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
