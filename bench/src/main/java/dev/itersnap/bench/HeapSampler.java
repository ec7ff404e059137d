package dev.itersnap.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;

/** Samples used heap every few milliseconds on a daemon thread and keeps the peak since the last reset. */
final class HeapSampler implements AutoCloseable {
    private final MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
    private final Thread thread;
    private volatile long peak;
    private volatile boolean running = true;

    HeapSampler() {
        thread = new Thread(() -> {
            while (running) {
                long used = memory.getHeapMemoryUsage().getUsed();
                if (used > peak) {
                    peak = used;
                }
                try {
                    Thread.sleep(5);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "heap-sampler");
        thread.setDaemon(true);
        thread.start();
    }

    /** Collects garbage, then starts a new peak from the current use. */
    void reset() {
        System.gc();
        peak = memory.getHeapMemoryUsage().getUsed();
    }

    long peakMiB() {
        return peak / (1024 * 1024);
    }

    @Override
    public void close() {
        running = false;
        thread.interrupt();
    }
}
