package dev.itersnap.dialect.h2;

import dev.itersnap.IterativeSnapshot;
import dev.itersnap.conformance.CrashTests;
import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.ItersnapException;
import org.h2.engine.Database;
import org.h2.engine.SessionLocal;
import org.h2.jdbc.JdbcConnection;
import org.h2.jdbcx.JdbcDataSource;
import org.h2.mvstore.db.MVPrimaryIndex;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.sql.DataSource;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A run on a damaged H2 file stops with an error that names the file and H2's recovery tool (decision 0007), not with
 * the lock timeout H2 reports for it. The files are damaged on purpose: rows taken out of the history's primary index
 * only, as a killed H2 2.5 left them ("Row not found in primary index", retried by H2 and reported as "Timeout trying
 * to lock table"), and every page of the file overwritten.
 */
class H2DamagedFileTest {
    private static final int KEYS = 300;

    @TempDir
    Path dir;

    @Test
    void rowsMissingFromThePrimaryIndexAreReportedAsADamagedFileWithTheRecoveryTool() throws Exception {
        DataSource db = historyWithALateDay();
        List<Long> removed = new ArrayList<>();
        try (Connection c = db.getConnection()) {
            try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT _ROWID_ FROM "
                    + "customers_history WHERE dbt_opened_seq = DATE '2024-01-04' ORDER BY _ROWID_ LIMIT 10")) {
                while (rs.next()) {
                    removed.add(rs.getLong(1));
                }
            }
            // the rows leave the table's primary index, not its other indexes: what the killed H2 left
            SessionLocal session = (SessionLocal) c.unwrap(JdbcConnection.class).getSession();
            Database database = session.getDatabase();
            MVPrimaryIndex primary = (MVPrimaryIndex) database.getSchema("PUBLIC")
                    .findTableOrView(session, "CUSTOMERS_HISTORY").getScanIndex(session);
            removed.forEach(primary.getMVMap()::remove);
            database.getStore().getMvStore().commit();
            execute(c, "SHUTDOWN");
        }
        assertThat(removed).hasSize(10);

        long start = System.nanoTime();
        assertThatThrownBy(() -> run(db))
                .isInstanceOfSatisfying(ItersnapException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.DATABASE_ERROR);
                    assertThat(e.getMessage())
                            .contains("the H2 database file " + dir.resolve("warehouse") + ".mv.db is damaged")
                            .contains("not found in primary index")
                            .contains("org.h2.tools.Recover -dir " + dir + " -db warehouse")
                            .contains("running again does not repair it")
                            .doesNotContain("Timeout trying to lock");
                });
        // H2 retries the missing row for the session's LOCK_TIMEOUT (2 s) before it gives up
        assertThat(System.nanoTime() - start).as("nanoseconds to fail").isLessThan(30_000_000_000L);
    }

    @Test
    void aFileWithEveryPageOverwrittenIsReportedAsDamagedWithTheRecoveryTool() throws Exception {
        DataSource db = historyWithALateDay();
        try (Connection c = db.getConnection()) {
            execute(c, "SHUTDOWN");
        }
        // zeros over the middle of every block after the file header: each chunk's header (at most 1 KB at its start)
        // and footer (its last 128 bytes) stay, every page in between is gone
        try (FileChannel f = FileChannel.open(dir.resolve("warehouse.mv.db"), StandardOpenOption.WRITE)) {
            for (long block = 2; block < f.size() / 4096; block++) {
                f.write(ByteBuffer.allocate(4096 - 1024 - 128), block * 4096 + 1024);
            }
        }

        assertThatThrownBy(() -> IterativeSnapshot.builder().dataSource(db).dialect(new H2Dialect()).build()
                .run(CrashTests.model()))
                .isInstanceOfSatisfying(ItersnapException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.DATABASE_ERROR);
                    // which structure the zeros break first depends on the file's layout: H2 names the file in
                    // some of its messages (a corrupt page), not in others (a chunk's description unreadable)
                    String named = "the H2 database file " + dir.resolve("warehouse") + ".mv.db is damaged";
                    String recover = "org.h2.tools.Recover -dir " + dir + " -db warehouse";
                    String unnamed = "the H2 database file is damaged";
                    String unnamedRecover = "org.h2.tools.Recover -dir <its folder> -db <its name>";
                    assertThat(e.getMessage()).startsWith("model 'customers': cannot connect: the H2 database file")
                            .satisfiesAnyOf(
                                    m -> assertThat(m).contains(named).contains(recover),
                                    m -> assertThat(m).contains(unnamed).contains(unnamedRecover));
                });
    }

    /** The signs read from a failure's causes: H2's codes, and the MVStore's in a general error's message. */
    @Test
    void theSignsOfDamageAreH2sCodesAnywhereInTheCauses() {
        SQLException corruptPage = new SQLException("General error: \"org.h2.mvstore.MVStoreException: File corrupted "
                + "in chunk 32, expected page length 4..1024, got 0 [2.5.252/6]\"", "HY000", 50000);
        SQLException missingRow = new SQLException("Timeout trying to lock table {0}", "HYT00", 50200,
                new IllegalStateException("Row \"22656\" not found in primary index \"PUBLIC.T_DATA\" [90143-252]"));
        SQLException lockTimeout = new SQLException("Timeout trying to lock table \"T\" [50200-252]", "HYT00", 50200);
        SQLException duplicate = new SQLException("Unique index or primary key violation [23505-252]", "23505", 23505);
        SQLException closedStore = new SQLException("General error: \"This store is closed [2.5.252/4]\"", "HY000",
                50000);

        SQLException chunkField = new SQLException("Hexadecimal string contains non-hex character [90004-252]",
                "90004", 90004);
        chunkField.setStackTrace(new StackTraceElement[] {
                new StackTraceElement("org.h2.mvstore.DataUtils", "parseHexBytes", "DataUtils.java", 1142),
                new StackTraceElement("org.h2.mvstore.Chunk", "<init>", "Chunk.java", 192),
                new StackTraceElement("org.h2.mvstore.RandomAccessStore", "readStoreHeader", "x.java", 270)});
        SQLException hexOfAStatement = new SQLException("Hexadecimal string contains non-hex character [90004-252]",
                "90004", 90004);
        hexOfAStatement.setStackTrace(new StackTraceElement[] {
                new StackTraceElement("org.h2.util.StringUtils", "convertHexToBytes", "StringUtils.java", 1152),
                new StackTraceElement("org.h2.command.Parser", "parse", "Parser.java", 1)});

        assertThat(H2Damage.sign(corruptPage)).isSameAs(corruptPage);
        assertThat(H2Damage.sign(chunkField)).isSameAs(chunkField);
        assertThat(H2Damage.sign(hexOfAStatement)).isNull();
        assertThat(H2Damage.sign(missingRow)).isSameAs(missingRow.getCause());
        assertThat(H2Damage.sign(lockTimeout)).isNull();
        assertThat(H2Damage.sign(duplicate)).isNull();
        assertThat(H2Damage.sign(closedStore)).isNull();
        assertThat(H2Damage.describe(lockTimeout, null)).isNull();
        assertThat(H2Damage.describe(corruptPage, null)).startsWith("the H2 database file is damaged (H2: General "
                + "error: ").contains("org.h2.tools.Recover -dir <its folder> -db <its name>");
    }

    /** Days 1, 2 and 4 applied (the history), day 3 delivered late: the next run rolls back from day 3. */
    private DataSource historyWithALateDay() throws SQLException {
        JdbcDataSource ds = new JdbcDataSource();
        ds.setURL("jdbc:h2:" + dir.resolve("warehouse"));
        try (Connection c = ds.getConnection()) {
            execute(c, "CREATE TABLE raw_customers (customer_id INT, tier VARCHAR(20), updated_at TIMESTAMP, "
                    + "file_date DATE)");
            for (int d : new int[] {1, 2, 4}) {
                execute(c, day(d));
            }
            run(ds);
            execute(c, day(3));
        }
        return ds;
    }

    private static String day(int d) {
        return "INSERT INTO raw_customers SELECT X, 'tier" + d + "', TIMESTAMP '2024-01-0" + d + " 08:00:00', DATE "
                + "'2024-01-0" + d + "' FROM SYSTEM_RANGE(1, " + KEYS + ") WHERE MOD(X, 11) <> " + d;
    }

    private static void run(DataSource db) {
        IterativeSnapshot.builder().dataSource(db).build().run(CrashTests.model());
    }

    private static void execute(Connection c, String sql) throws SQLException {
        try (Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }
}
