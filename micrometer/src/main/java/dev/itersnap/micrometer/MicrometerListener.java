package dev.itersnap.micrometer;

import dev.itersnap.core.BatchResult;
import dev.itersnap.core.RunResult;
import dev.itersnap.core.SnapshotEvent;
import dev.itersnap.core.SnapshotListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Records the runs of every model as Micrometer metrics, tagged by model:
 *
 * <table>
 * <caption>Metrics</caption>
 * <tr><th>name</th><th>type</th><th>tags</th><th>what</th></tr>
 * <tr><td>{@code itersnap.run}</td><td>timer</td><td>model, operation, outcome, error</td><td>each run's wall time,
 * lock wait included; {@code outcome} success or failed, {@code error} the failure's error code in lower case (none
 * when it succeeded), {@code operation} run, full_check, full_refresh, replay, adopt (unknown for a run that failed
 * before it took the lock)</td></tr>
 * <tr><td>{@code itersnap.batches.applied}</td><td>counter</td><td>model</td><td>batches applied and recorded in the
 * ledger, replayed ones included</td></tr>
 * <tr><td>{@code itersnap.batches.late}</td><td>counter</td><td>model</td><td>batches that arrived after a later
 * batch was applied (each run counts the late batches it found)</td></tr>
 * <tr><td>{@code itersnap.replay.depth}</td><td>distribution summary (batches)</td><td>model</td><td>per run that
 * rolled the history back: the batches it applied again from the replay point on, not counting the late batches
 * themselves nor new batches after the greatest one applied before</td></tr>
 * <tr><td>{@code itersnap.rows.set.aside}</td><td>counter</td><td>model, reason</td><td>rows set aside in the error
 * log, by reason ({@code null_sequence}, {@code null_key}, {@code duplicate_key}, {@code null_updated_at},
 * {@code updated_at_regression}); a replayed batch's rows count again</td></tr>
 * <tr><td>{@code itersnap.lock.wait}</td><td>timer</td><td>model</td><td>how long a run that reported waiting for
 * the model lock (after about two seconds) waited until it took it or gave up</td></tr>
 * </table>
 *
 * <pre>{@code
 * IterativeSnapshot snapshots = IterativeSnapshot.builder()
 *         .dataSource(dataSource)
 *         .listener(SnapshotListener.logging().andThen(new MicrometerListener(registry)))
 *         .build();
 * }</pre>
 *
 * <p>Thread-safe: one listener serves every model and thread of an engine. It keeps a little state per running run
 * (its operation, its late batches), dropped when the run ends.
 */
public final class MicrometerListener implements SnapshotListener {
    private final MeterRegistry registry;
    private final Map<String, RunState> runs = new ConcurrentHashMap<>();

    /** What a run has reported so far, until it ends. */
    private static final class RunState {
        volatile String operation = "unknown";
        volatile List<Object> late = List.of();
        volatile Object greatestApplied;
        volatile long waitingSince;
    }

    /** A listener recording into {@code registry}. */
    public MicrometerListener(MeterRegistry registry) {
        this.registry = Objects.requireNonNull(registry, "registry");
    }

    @Override
    public void onEvent(SnapshotEvent event) {
        if (event instanceof SnapshotEvent.WaitingForLock w) {
            state(w.runId()).waitingSince = System.nanoTime() - w.waited().toNanos();
        } else if (event instanceof SnapshotEvent.RunStarted s) {
            RunState state = state(s.runId());
            state.operation = s.operation();
            lockTaken(s.model(), state);
        } else if (event instanceof SnapshotEvent.BatchApplied b) {
            Counter.builder("itersnap.batches.applied").description("batches applied and recorded in the ledger")
                    .baseUnit("batches").tag("model", b.model()).register(registry).increment();
        } else if (event instanceof SnapshotEvent.OutOfOrder o) {
            RunState state = state(o.runId());
            state.late = o.incoming();
            state.greatestApplied = o.greatestApplied();
            Counter.builder("itersnap.batches.late").description("batches that arrived after a later batch was "
                    + "applied").baseUnit("batches").tag("model", o.model()).register(registry)
                    .increment(o.incoming().size());
        } else if (event instanceof SnapshotEvent.RowsRejected r) {
            r.reasons().forEach((reason, rows) -> Counter.builder("itersnap.rows.set.aside")
                    .description("rows set aside in the error log").baseUnit("rows").tag("model", r.model())
                    .tag("reason", reason).register(registry).increment(rows));
        } else if (event instanceof SnapshotEvent.RunFinished f) {
            RunState state = ended(f.runId());
            RunResult result = f.result();
            run(f.model(), state, "success", "none", result.duration());
            if (result.replayPoint() != null) {
                DistributionSummary.builder("itersnap.replay.depth").description("batches a run applied again "
                        + "from its replay point").baseUnit("batches").tag("model", f.model()).register(registry)
                        .record(replayed(result, state));
            }
        } else if (event instanceof SnapshotEvent.RunFailed f) {
            RunState state = ended(f.runId());
            lockTaken(f.model(), state); // a lock timeout ends the wait too
            run(f.model(), state, "failed", f.error().code().name().toLowerCase(Locale.ROOT), f.after());
        }
    }

    private RunState state(String runId) {
        return runs.computeIfAbsent(runId, id -> new RunState());
    }

    private RunState ended(String runId) {
        RunState state = runs.remove(runId);
        return state != null ? state : new RunState();
    }

    private void lockTaken(String model, RunState state) {
        long since = state.waitingSince;
        if (since != 0) {
            state.waitingSince = 0;
            Timer.builder("itersnap.lock.wait").description("how long a run waited for the model lock")
                    .tag("model", model).register(registry).record(Duration.ofNanos(System.nanoTime() - since));
        }
    }

    private void run(String model, RunState state, String outcome, String error, Duration duration) {
        Timer.builder("itersnap.run").description("a run's wall time, lock wait included").tag("model", model)
                .tag("operation", state.operation).tag("outcome", outcome).tag("error", error).register(registry)
                .record(duration);
    }

    /**
     * The batches of {@code result} applied again: at or after the replay point, neither one of the late batches nor
     * after the greatest batch applied before the run (when the run found late batches and so knows it).
     */
    static long replayed(RunResult result, RunState state) {
        Set<Object> late = new HashSet<>(state.late);
        long n = 0;
        for (BatchResult b : result.batches()) {
            Object s = b.sequence();
            if (late.contains(s) || compare(s, result.replayPoint()) < 0
                    || state.greatestApplied != null && compare(s, state.greatestApplied) > 0) {
                continue;
            }
            n++;
        }
        return n;
    }

    /**
     * Orders two sequences of one model as the engine does: values of one comparable type (dates, times, numbers,
     * strings), or lists of them for a {@code sequence_by} list, element by element.
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    static int compare(Object a, Object b) {
        if (a instanceof List<?> x && b instanceof List<?> y) {
            for (int i = 0; i < Math.min(x.size(), y.size()); i++) {
                int c = compare(x.get(i), y.get(i));
                if (c != 0) {
                    return c;
                }
            }
            return Integer.compare(x.size(), y.size());
        }
        if (a instanceof java.math.BigDecimal x && b instanceof java.math.BigDecimal y) {
            return x.compareTo(y);
        }
        if (a instanceof Comparable x && b != null && a.getClass() == b.getClass()) {
            return x.compareTo(b);
        }
        return String.valueOf(a).compareTo(String.valueOf(b));
    }
}
