package dev.itersnap.dialect.h2;

import dev.itersnap.conformance.FaultInjectingDataSource;
import dev.itersnap.conformance.LeaseModels;
import dev.itersnap.conformance.RawTable;
import dev.itersnap.conformance.RecordingListener;
import dev.itersnap.conformance.SnapshotFixture;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.RunResult;
import dev.itersnap.core.SnapshotEvent;
import dev.itersnap.spi.ModelLock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import javax.sql.DataSource;
import java.time.Duration;
import java.time.LocalDate;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;

import static dev.itersnap.conformance.SnapshotFixture.ts;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The "waiting for the lock" notice of a lease (the Databricks lock, here on H2): a run says it waits only when
 * another run holds the lease, not when its own acquisition is slow (a Delta MERGE can take more than the notice's
 * two seconds on a busy machine; the run then read the run log to name a holder nobody was).
 */
class H2LeaseWaitNoticeTest {
    private static final Duration TTL = Duration.ofSeconds(30);

    private final H2TestDatabase h2 = new H2TestDatabase();
    private final DataSource ds = h2.newDatabase("lease_notice");
    private final H2Dialect dialect = new H2Dialect(false, TTL);
    private final SnapshotFixture f = new SnapshotFixture(ds, h2::type).dialect(dialect);

    @AfterEach
    void shutDown() {
        h2.discard(ds);
    }

    private RawTable raw;

    private ModelSettings model() {
        raw = f.rawTable("raw_customers", "id INT", "status VARCHAR(20)", "updated_at TIMESTAMP", "file_date DATE");
        raw.insert(1, "Active", ts("2024-01-01 09:00"), LocalDate.parse("2024-01-01"));
        return ModelSettings.builder("customers").target("snap_customers").source(raw.selectAll()).uniqueKey("id")
                .updatedAt("updated_at").sequenceBy("file_date").lockTimeout(Duration.ofSeconds(30)).build();
    }

    @Test
    @Timeout(60)
    void aSlowAcquisitionOfAFreeLeaseIsNoWaitAndReadsNoRunLog() {
        ModelSettings m = model();
        f.run(m); // the lease table exists: the next acquisition is one MERGE
        newFile(); // a run with nothing new takes no lease
        FaultInjectingDataSource slow = new FaultInjectingDataSource(ds);
        AtomicBoolean once = new AtomicBoolean();
        slow.hook((sql, after) -> {
            if (!after && sql.stripLeading().toUpperCase(Locale.ROOT).startsWith("MERGE")
                    && sql.toLowerCase(Locale.ROOT).contains("itersnap_lease") && once.compareAndSet(false, true)) {
                sleep(2_600); // the acquisition's MERGE answers after more than the notice's two seconds
            }
        });
        RecordingListener events = new RecordingListener();
        RunResult r = f.engine(slow.dataSource(), events).run(m);

        assertThat(once).as("the MERGE was slow").isTrue();
        assertThat(r.duration()).isGreaterThan(Duration.ofMillis(2_600));
        assertThat(events.of(SnapshotEvent.WaitingForLock.class)).as("no other run holds the lease").isEmpty();
        // the holder's read (MetadataStore.describeRunning): the running rows, newest first; the run log's head read
        // also names running rows, without that order
        assertThat(slow.statements()).as("no read of the run log for a holder")
                .noneMatch(sql -> sql.toLowerCase(Locale.ROOT).contains("'running' order by"));
    }

    @Test
    @Timeout(60)
    void aLeaseHeldByAnotherRunIsAWaitSaidOnceAndTheRunGoesOnWhenItIsFreed() throws Exception {
        ModelSettings m = model();
        f.run(m);
        newFile(); // a run with nothing new takes no lease
        ModelLock other = dialect.lock(ds, LeaseModels.leaseModel("customers",
                ModelSettings.DEFAULT_METADATA_SCHEMA, x -> x.toUpperCase(Locale.ROOT)), Duration.ZERO, () -> "");
        Thread release = new Thread(() -> {
            sleep(3_000);
            other.close();
        });
        release.start();
        RecordingListener events = new RecordingListener();
        long t0 = System.nanoTime();
        RunResult r = f.engine(events).run(m);
        release.join();

        List<SnapshotEvent.WaitingForLock> waits = events.of(SnapshotEvent.WaitingForLock.class);
        assertThat(waits).as("said once").hasSize(1);
        assertThat(waits.get(0).waited()).isBetween(Duration.ofMillis(1_900), Duration.ofMillis(3_000));
        assertThat(waits.get(0).holder()).isEqualTo("holder unknown"); // a lease without a run in the run log
        assertThat(events.all().get(0)).as("before the run started").isInstanceOf(SnapshotEvent.WaitingForLock.class);
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isGreaterThanOrEqualTo(Duration.ofSeconds(3));
        assertThat(r.batchesApplied()).isEqualTo(1);
    }

    private void newFile() {
        raw.insert(1, "Gold", ts("2024-01-02 09:00"), LocalDate.parse("2024-01-02"));
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
