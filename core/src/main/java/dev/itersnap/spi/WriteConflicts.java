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
     * chain on a SparkSession; the {@code DELTA_CONCURRENT_...}, {@code DELTA_METADATA_CHANGED} or
     * {@code DELTA_PROTOCOL_CHANGED} error condition or the conflict's exception name in the message over JDBC;
     * SQLState 2D521, Delta's) and for a serialization failure (SQLState 40001, also how {@code SparkDataSource}
     * reports a Delta conflict, through Spark Connect too, where only the error condition survives).
     */
    public static boolean standard(Throwable failure) {
        return anyInChain(failure, t -> {
            if (t instanceof ConcurrentModificationException) {
                return true;
            }
            String msg = t.getMessage();
            if (msg != null && (msg.contains("DELTA_CONCURRENT") || msg.contains("DELTA_METADATA_CHANGED")
                    || msg.contains("DELTA_PROTOCOL_CHANGED") || msg.contains("ConcurrentAppend")
                    || msg.contains("ConcurrentDelete") || msg.contains("ConcurrentTransaction")
                    || msg.contains("MetadataChangedException"))) {
                return true;
            }
            return t instanceof SQLException se && ("40001".equals(se.getSQLState())
                    || "2D521".equals(se.getSQLState()));
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
