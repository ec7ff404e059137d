package dev.itersnap.micrometer;

import dev.itersnap.IterativeSnapshot;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.RunResult;
import dev.itersnap.core.SnapshotEvent;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The metrics of real runs on in-memory H2, read back from a {@link SimpleMeterRegistry}. */
class MicrometerListenerTest {
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private JdbcDataSource dataSource;
    private IterativeSnapshot snapshots;

    private final ModelSettings customers = ModelSettings.builder("customers").target("customers_history")
            .source("SELECT * FROM raw_customers").uniqueKey("id").updatedAt("updated_at").sequenceBy("file_date")
            .build();

    @BeforeEach
    void database() throws SQLException {
        dataSource = new JdbcDataSource();
        dataSource.setURL("jdbc:h2:mem:metrics" + System.nanoTime() + ";DB_CLOSE_DELAY=-1");
        execute("CREATE TABLE raw_customers (id INT, status VARCHAR(20), updated_at TIMESTAMP, file_date DATE)");
        snapshots = IterativeSnapshot.builder().dataSource(dataSource).listener(new MicrometerListener(registry))
                .build();
    }

    @Test
    void runsBatchesLateBatchesReplayDepthAndRowsSetAside() throws SQLException {
        load(1, "Active", "2024-01-01T09:00", "2024-01-01");
        load(null, "Ghost", "2024-01-01T09:00", "2024-01-01");
        load(2, "A", "2024-01-01T09:00", "2024-01-01");
        load(2, "B", "2024-01-01T09:00", "2024-01-01");
        load(1, "Gold", "2024-01-03T09:00", "2024-01-03");
        load(1, "Platinum", "2024-01-04T09:00", "2024-01-04");
        snapshots.run(customers);

        assertThat(counter("itersnap.batches.applied")).isEqualTo(3);
        assertThat(registry.get("itersnap.rows.set.aside").tag("model", "customers").tag("reason", "null_key")
                .counter().count()).isEqualTo(1);
        assertThat(registry.get("itersnap.rows.set.aside").tag("reason", "duplicate_key").counter().count())
                .isEqualTo(2);
        assertThat(registry.find("itersnap.batches.late").counters()).isEmpty();
        assertThat(registry.find("itersnap.replay.depth").summaries()).isEmpty();

        load(1, "Premium", "2024-01-02T09:00", "2024-01-02"); // a day late: 01-03 and 01-04 are applied again
        RunResult late = snapshots.run(customers);

        assertThat(late.lateBatchFound()).isTrue();
        assertThat(late.batchesApplied()).isEqualTo(3);
        assertThat(counter("itersnap.batches.applied")).isEqualTo(6);
        assertThat(counter("itersnap.batches.late")).isEqualTo(1);
        DistributionSummary depth = registry.get("itersnap.replay.depth").tag("model", "customers").summary();
        assertThat(depth.count()).isEqualTo(1);
        assertThat(depth.totalAmount()).as("01-03 and 01-04 replayed; 01-02 is the late batch").isEqualTo(2);
        Timer runs = registry.get("itersnap.run").tags("model", "customers", "operation", "run", "outcome", "success",
                "error", "none").timer();
        assertThat(runs.count()).isEqualTo(2);
        assertThat(runs.totalTime(TimeUnit.NANOSECONDS)).isGreaterThanOrEqualTo(late.duration().toNanos());

        snapshots.replayFrom(customers, "2024-01-03");
        assertThat(registry.get("itersnap.run").tag("operation", "replay").timer().count()).isEqualTo(1);
        assertThat(depth.count()).isEqualTo(2);
        assertThat(depth.totalAmount()).as("a replay from 01-03 applies 01-03 and 01-04 again").isEqualTo(4);
    }

    @Test
    void aFailedRunIsTimedWithItsErrorCode() {
        ModelSettings broken = ModelSettings.builder("broken").target("broken_history")
                .source("SELECT * FROM no_such_table").uniqueKey("id").updatedAt("updated_at")
                .sequenceBy("file_date").build();

        assertThatThrownBy(() -> snapshots.run(broken)).isInstanceOf(ItersnapException.class);

        Timer failed = registry.get("itersnap.run").tags("model", "broken", "outcome", "failed").timer();
        assertThat(failed.count()).isEqualTo(1);
        assertThat(failed.getId().getTag("error")).isEqualTo("invalid_source");
        assertThat(failed.getId().getTag("operation")).as("failed before it took the lock").isEqualTo("unknown");
    }

    @Test
    void aRunThatWaitsForTheLockRecordsTheWait() throws Exception {
        load(1, "Active", "2024-01-01T09:00", "2024-01-01");
        CountDownLatch holding = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        IterativeSnapshot holder = IterativeSnapshot.builder().dataSource(dataSource).listener(e -> {
            if (e instanceof SnapshotEvent.RunStarted) {
                holding.countDown();
                await(release);
            }
        }).build();
        CompletableFuture<RunResult> first = CompletableFuture.supplyAsync(() -> holder.run(customers));
        assertThat(holding.await(60, TimeUnit.SECONDS)).isTrue();
        CompletableFuture<RunResult> second = CompletableFuture.supplyAsync(() -> snapshots.run(customers));
        Thread.sleep(2_600); // the waiting run reports its wait after about two seconds
        release.countDown();
        first.get(60, TimeUnit.SECONDS);
        second.get(60, TimeUnit.SECONDS);

        Timer wait = registry.get("itersnap.lock.wait").tag("model", "customers").timer();
        assertThat(wait.count()).isEqualTo(1);
        assertThat(Duration.ofNanos((long) wait.totalTime(TimeUnit.NANOSECONDS))).isBetween(Duration.ofSeconds(2),
                Duration.ofSeconds(60));
    }

    @Test
    void sequencesCompareAsTheEngineOrdersThem() {
        assertThat(MicrometerListener.compare(10L, 9L)).isPositive();
        assertThat(MicrometerListener.compare(new java.math.BigDecimal("10.0"), new java.math.BigDecimal("9.50")))
                .isPositive();
        assertThat(MicrometerListener.compare(List.of(LocalDate.of(2024, 1, 2), 1L), List.of(LocalDate.of(2024, 1, 2),
                3L))).isNegative();
        assertThat(MicrometerListener.compare(LocalDate.of(2024, 1, 10), LocalDate.of(2024, 1, 9))).isPositive();
    }

    private double counter(String name) {
        return registry.get(name).tag("model", "customers").counter().count();
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void load(Integer id, String status, String updatedAt, String fileDate) throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("INSERT INTO raw_customers VALUES (?, ?, ?, ?)")) {
            ps.setObject(1, id);
            ps.setString(2, status);
            ps.setObject(3, LocalDateTime.parse(updatedAt));
            ps.setObject(4, LocalDate.parse(fileDate));
            ps.executeUpdate();
        }
    }

    private void execute(String sql) throws SQLException {
        try (Connection c = dataSource.getConnection(); var st = c.createStatement()) {
            st.execute(sql);
        }
    }
}
