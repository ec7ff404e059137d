package dev.itersnap.dialect.duckdb;

import dev.itersnap.conformance.ChildJvm;
import dev.itersnap.core.DriverDataSource;
import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.spi.LockState;
import dev.itersnap.spi.ModelLock;
import dev.itersnap.internal.ResolvedModel;
import dev.itersnap.spi.SourceColumn;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.sql.DataSource;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Types;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The model lock on DuckDB ({@link DuckDbModelLock}): held by one run at a time, observed without taking it, and
 * released by a process that dies holding it.
 */
class DuckDbModelLockTest {
    private final DuckDbDialect dialect = new DuckDbDialect();

    @TempDir
    Path dir;

    static ResolvedModel model(String name) {
        ModelSettings s = ModelSettings.builder(name).target("snap_" + name).source("SELECT * FROM raw")
                .uniqueKey("id").updatedAt("updated_at").sequenceBy("file_date").build();
        SourceColumn id = new SourceColumn("id", Types.INTEGER, "INTEGER", 10, 0);
        SourceColumn upd = new SourceColumn("updated_at", Types.TIMESTAMP, "TIMESTAMP", 29, 0);
        SourceColumn seq = new SourceColumn("file_date", Types.DATE, "DATE", 13, 0);
        return ResolvedModel.builder(s, x -> x.toLowerCase(Locale.ROOT)).sourceColumns(List.of(id, upd, seq))
                .keys(List.of("id")).updatedAt("updated_at").sequenceBy("file_date").tracked(List.of()).build();
    }

    private LockState observe(DataSource ds, String model) throws Exception {
        try (Connection c = ds.getConnection()) {
            return dialect.lockState(c, model(model).metadata(), model);
        }
    }

    @Test
    @SuppressWarnings("try") // the resources are held, not used
    void oneRunAtATimeAndOtherModelsDoNotWait() throws Exception {
        DataSource ds = DriverDataSource.of("jdbc:duckdb:" + dir.resolve("w.duckdb"));
        assertThat(observe(ds, "customers").held()).as("no lock table yet").isEqualTo(LockState.Held.FREE);
        try (ModelLock held = dialect.lock(ds, model("customers"), Duration.ofSeconds(5), () -> "the first run")) {
            assertThat(observe(ds, "customers").held()).isEqualTo(LockState.Held.HELD);
            assertThatThrownBy(() -> dialect.lock(ds, model("customers"), Duration.ofMillis(300), () -> "run r1"))
                    .isInstanceOfSatisfying(ItersnapException.class, e -> {
                        assertThat(e.code()).isEqualTo(ErrorCode.LOCK_TIMEOUT);
                        assertThat(e.getMessage()).contains("model 'customers'", "run r1", "300ms");
                    });
            try (ModelLock other = dialect.lock(ds, model("orders"), Duration.ofMillis(300), () -> "none")) {
                assertThat(observe(ds, "orders").held()).isEqualTo(LockState.Held.HELD);
            }
            assertThat(observe(ds, "orders").held()).isEqualTo(LockState.Held.FREE);
        }
        assertThat(observe(ds, "customers").held()).isEqualTo(LockState.Held.FREE);
        try (ModelLock again = dialect.lock(ds, model("customers"), Duration.ofMillis(300), () -> "none")) {
            assertThat(observe(ds, "customers").held()).isEqualTo(LockState.Held.HELD);
        }
    }

    /**
     * {@code jdbc:duckdb:} gives every connection a database of its own: a run over files would write its history
     * where nothing reads it again, so it is refused before anything is written.
     */
    @Test
    void anUnnamedInMemoryDatabaseIsRefused() throws Exception {
        ModelSettings overFiles = ModelSettings.builder("customers").target("snap_customers")
                .source("SELECT 1 AS id, TIMESTAMP '2024-01-01 09:00' AS updated_at, DATE '2024-01-01' AS file_date")
                .uniqueKey("id").updatedAt("updated_at").sequenceBy("file_date").build();
        for (String url : List.of("jdbc:duckdb:", "jdbc:duckdb::memory:")) {
            assertThatThrownBy(() -> dev.itersnap.IterativeSnapshot.builder().dataSource(DriverDataSource.of(url))
                    .build().run(overFiles)).as(url).isInstanceOfSatisfying(ItersnapException.class, e -> {
                        assertThat(e.code()).isEqualTo(ErrorCode.INVALID_SETTING);
                        assertThat(e.getMessage()).contains(url + " gives every connection", "jdbc:duckdb:memory:NAME");
                    });
            try (Connection c = DriverDataSource.of(url).getConnection()) {
                assertThat(dialect.environmentChecks(c)).singleElement().satisfies(check -> {
                    assertThat(check.passed()).isFalse();
                    assertThat(check.detail()).contains("jdbc:duckdb:memory:NAME");
                });
            }
        }
        try (Connection c = DriverDataSource.of("jdbc:duckdb:memory:named").getConnection()) {
            assertThat(dialect.environmentChecks(c)).singleElement().satisfies(check -> assertThat(check.passed())
                    .isTrue());
        }
    }

    /** A process killed while it holds the lock (SIGKILL: nothing closed) leaves the model free for the next one. */
    @Test
    @SuppressWarnings("try") // the resources are held, not used
    void aProcessKilledHoldingTheLockLeavesItFree() throws Exception {
        Path file = dir.resolve("killed.duckdb");
        try (ChildJvm child = ChildJvm.start(HoldingProcess.class, "256m", List.of(), file.toString())) {
            String line;
            do {
                line = child.nextLine(60_000);
            } while (line != null && !line.equals(ChildJvm.END) && !line.equals(ChildJvm.killPoint("locked")));
            assertThat(line).as(child.output()).isEqualTo(ChildJvm.killPoint("locked"));
            child.kill();
        }
        DataSource ds = DriverDataSource.of("jdbc:duckdb:" + file);
        assertThat(observe(ds, "customers").held()).isEqualTo(LockState.Held.FREE);
        try (ModelLock lock = dialect.lock(ds, model("customers"), Duration.ofMillis(300), () -> "none")) {
            assertThat(observe(ds, "customers").held()).isEqualTo(LockState.Held.HELD);
        }
    }

    /** Takes the lock on the file given and waits to be killed. */
    public static final class HoldingProcess {
        public static void main(String[] args) throws Exception {
            DataSource ds = DriverDataSource.of("jdbc:duckdb:" + args[0]);
            ModelLock lock = new DuckDbDialect().lock(ds, model("customers"), Duration.ofSeconds(10), () -> "none");
            System.out.println(ChildJvm.killPoint("locked"));
            System.out.flush();
            Thread.sleep(120_000);
            lock.close();
        }
    }
}
