package dev.itersnap.spi;

import java.sql.SQLException;
import java.util.ConcurrentModificationException;
import java.util.function.Predicate;

/** The shared recognition of write conflicts, {@link Dialect#isWriteConflict}'s default. */
public final class WriteConflicts {
    private WriteConflicts() {
    }

    /**
     * True for Delta Lake's optimistic-concurrency conflicts (a {@link ConcurrentModificationException} in the cause
     * chain on a SparkSession; the {@code DELTA_CONCURRENT_...} error class or the conflict's exception name in the
     * message over JDBC) and for a serialization failure (SQLState 40001).
     */
    public static boolean standard(Throwable failure) {
        return anyInChain(failure, t -> {
            if (t instanceof ConcurrentModificationException) {
                return true;
            }
            String msg = t.getMessage();
            if (msg != null && (msg.contains("DELTA_CONCURRENT") || msg.contains("ConcurrentAppend")
                    || msg.contains("ConcurrentDelete") || msg.contains("ConcurrentTransaction")
                    || msg.contains("MetadataChangedException"))) {
                return true;
            }
            return t instanceof SQLException se && "40001".equals(se.getSQLState());
        });
    }

    /** True when {@code test} holds for the failure or one of its causes. */
    public static boolean anyInChain(Throwable failure, Predicate<Throwable> test) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (test.test(t)) {
                return true;
            }
        }
        return false;
    }
}
