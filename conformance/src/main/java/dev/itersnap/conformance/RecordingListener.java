package dev.itersnap.conformance;

import dev.itersnap.core.SnapshotEvent;
import dev.itersnap.core.SnapshotListener;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/** Records every event (thread-safe), optionally reacting to each one first (e.g. sleeping to hold the lock). */
public final class RecordingListener implements SnapshotListener {
    /** An event and the thread it was delivered on. */
    public record Recorded(SnapshotEvent event, String thread, long nanos) {
    }

    private final List<Recorded> events = new ArrayList<>();
    private final Consumer<SnapshotEvent> reaction;

    public RecordingListener() {
        this(e -> { });
    }

    public RecordingListener(Consumer<SnapshotEvent> reaction) {
        this.reaction = reaction;
    }

    @Override
    public void onEvent(SnapshotEvent event) {
        synchronized (events) {
            events.add(new Recorded(event, Thread.currentThread().getName(), System.nanoTime()));
        }
        reaction.accept(event);
    }

    /** Every event so far, in delivery order. */
    public List<SnapshotEvent> all() {
        synchronized (events) {
            return events.stream().map(Recorded::event).toList();
        }
    }

    /** Every event with its thread and time. */
    public List<Recorded> recorded() {
        synchronized (events) {
            return List.copyOf(events);
        }
    }

    /** The events of one type, in order. */
    public <T extends SnapshotEvent> List<T> of(Class<T> type) {
        return all().stream().filter(type::isInstance).map(type::cast).toList();
    }

    public void clear() {
        synchronized (events) {
            events.clear();
        }
    }
}
