package dev.itersnap.internal;

import dev.itersnap.core.ItersnapException;
import dev.itersnap.spi.Statement;
import org.h2.api.Trigger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A statement that loses a Delta write conflict is run again when it was its own commit (auto-commit), and not inside
 * a transaction. On a real H2 database whose trigger refuses the first inserts with Delta's error class, as the
 * Databricks driver reports a lost conflict ({@code [DELTA_CONCURRENT_APPEND...]} in the message).
 */
class JdbcConflictRetryTest {
    /** How many more inserts the trigger refuses. */
    static final AtomicInteger CONFLICTS = new AtomicInteger();

    /** Refuses an insert while {@link #CONFLICTS} is positive, as a lost Delta commit. */
    public static final class Conflicting implements Trigger {
        @Override
        public void fire(Connection conn, Object[] oldRow, Object[] newRow) throws SQLException {
            if (CONFLICTS.getAndDecrement() > 0) {
                throw new SQLException("[DELTA_CONCURRENT_APPEND.WITHOUT_HINT] Transaction conflict detected. A "
                        + "concurrent UPDATE added data to the table. Please retry the operation.", "40000");
            }
        }
    }

    private Connection c;

    @BeforeEach
    void table() throws SQLException {
        c = DriverManager.getConnection("jdbc:h2:mem:conflict" + System.nanoTime());
        c.createStatement().execute("CREATE TABLE t (v INT)");
        c.createStatement().execute("CREATE TRIGGER t_conflict BEFORE INSERT ON t FOR EACH ROW CALL \""
                + Conflicting.class.getName() + "\"");
    }

    private int rows() throws SQLException {
        try (ResultSet rs = c.createStatement().executeQuery("SELECT COUNT(*) FROM t")) {
            rs.next();
            return rs.getInt(1);
        }
    }

    private static Statement insert() {
        return Statement.builder("log run").sql("INSERT INTO t VALUES (").bind(1).sql(")").build();
    }

    @Test
    void aLostConflictInAutoCommitIsRunAgain() throws SQLException {
        CONFLICTS.set(2);
        assertThat(new Jdbc(c, "m").update(insert())).isEqualTo(1);
        assertThat(rows()).isEqualTo(1);
        assertThat(CONFLICTS.get()).as("two refusals, then the third attempt").isEqualTo(-1);
    }

    @Test
    void aStatementThatKeepsLosingFailsAfterFiveAttempts() throws SQLException {
        CONFLICTS.set(5);
        assertThatThrownBy(() -> new Jdbc(c, "m").update(insert())).isInstanceOf(ItersnapException.class)
                .hasMessageContaining("step 'log run' failed: [DELTA_CONCURRENT_APPEND");
        assertThat(CONFLICTS.get()).isZero();
        assertThat(rows()).isZero();
    }

    @Test
    void insideATransactionAConflictIsNotRetried() throws SQLException {
        CONFLICTS.set(1);
        c.setAutoCommit(false);
        assertThatThrownBy(() -> new Jdbc(c, "m").update(insert())).isInstanceOf(ItersnapException.class);
        assertThat(CONFLICTS.get()).isZero();
    }
}
