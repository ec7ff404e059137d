package dev.itersnap.dialect.databricks;

import dev.itersnap.spi.ResolvedModel;

import java.util.List;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;

/**
 * The statements of {@link DeltaLease}, as pure text plus binds, so the same objects run through JDBC and, in tests,
 * through {@code SparkSession.sql}. Table {@code <metadata schema>.itersnap_lease (model, owner, expires_at, fence)},
 * one row per model. Times are bound as epoch milliseconds and converted in SQL ({@link Flavor#toTimestamp}), so
 * neither the JVM's nor the session's time zone plays a part.
 *
 * @param quote  the dialect's identifier quoting
 * @param flavor the database's spelling of the lease table and of time conversions
 */
record LeaseSql(UnaryOperator<String> quote, ResolvedModel m, Flavor flavor) {

    /**
     * What differs between databases.
     *
     * @param textType    type of the model and owner columns and of their casts
     * @param primaryKey  true where the database enforces a primary key (model): two first acquisitions racing to
     *                    insert the row then fail with a unique violation instead of adding two rows; Delta has
     *                    no constraints, but refuses the second commit with a concurrent-append conflict
     * @param tableOptions appended to CREATE TABLE
     * @param toTimestamp an expression turning epoch milliseconds into a TIMESTAMP
     * @param toMillis    an expression turning a TIMESTAMP into epoch milliseconds
     */
    record Flavor(String textType, boolean primaryKey, String tableOptions, UnaryOperator<String> toTimestamp,
                  UnaryOperator<String> toMillis) {
    }

    /** Delta Lake on Databricks or OSS Spark: no constraints, {@code USING DELTA}, Spark's epoch functions. */
    static final Flavor DELTA = new Flavor("STRING", false, " USING DELTA", e -> "timestamp_millis(" + e + ")",
            e -> "unix_millis(" + e + ")");

    /** One statement and its binds (String, Long). */
    record Statement(String sql, List<Object> binds) {
        Statement(String sql, Object... binds) {
            this(sql, List.of(binds));
        }
    }

    private String id(String name) {
        return quote.apply(m.id(name));
    }

    /** The lease table, qualified and quoted. */
    String table() {
        return m.metaTable("itersnap_lease").parts().stream().map(quote).collect(Collectors.joining("."));
    }

    Statement createSchema() {
        return new Statement("CREATE SCHEMA IF NOT EXISTS " + quote.apply(m.metadataSchema()));
    }

    Statement createTable() {
        return new Statement("CREATE TABLE IF NOT EXISTS " + table() + " (" + id("model") + " " + flavor.textType()
                + " NOT NULL, " + id("owner") + " " + flavor.textType() + ", " + id("expires_at") + " TIMESTAMP, "
                + id("fence") + " BIGINT" + (flavor.primaryKey() ? ", PRIMARY KEY (" + id("model") + ")" : "") + ")"
                + flavor.tableOptions());
    }

    /**
     * Takes the lease when the model has no row, the row is free or expired, or {@code owner} already holds it (a
     * retry after an answer that got lost); every taking raises the fence. Update count 1: held; 0: someone else
     * holds it. Binds: model, owner, now (ms), expires_at (ms).
     */
    Statement acquire(String owner, long nowMillis, long expiresMillis) {
        String text = flavor.textType();
        String l = "l.";
        String r = "r.";
        return new Statement("MERGE INTO " + table() + " l USING (SELECT CAST(? AS " + text + ") AS " + id("model")
                + ", CAST(? AS " + text + ") AS " + id("owner") + ", " + flavor.toTimestamp().apply("?") + " AS "
                + id("now") + ", " + flavor.toTimestamp().apply("?") + " AS " + id("expires_at") + ") r ON "
                + l + id("model") + " = " + r + id("model")
                + " WHEN MATCHED AND (" + l + id("owner") + " IS NULL OR " + l + id("expires_at") + " IS NULL OR "
                + l + id("expires_at") + " < " + r + id("now") + " OR " + l + id("owner") + " = " + r + id("owner")
                + ") THEN UPDATE SET " + id("owner") + " = " + r + id("owner") + ", " + id("expires_at") + " = "
                + r + id("expires_at") + ", " + id("fence") + " = COALESCE(" + l + id("fence") + ", 0) + 1"
                + " WHEN NOT MATCHED THEN INSERT (" + id("model") + ", " + id("owner") + ", " + id("expires_at") + ", "
                + id("fence") + ") VALUES (" + r + id("model") + ", " + r + id("owner") + ", " + r + id("expires_at")
                + ", 1)", m.name(), owner, nowMillis, expiresMillis);
    }

    /** Extends the lease if it is still ours. Update count 1: still held; 0: lost. Binds: expires_at, model, owner, fence. */
    Statement renew(String owner, long fence, long expiresMillis) {
        return new Statement("UPDATE " + table() + " SET " + id("expires_at") + " = "
                + flavor.toTimestamp().apply("?") + " WHERE " + id("model") + " = ? AND " + id("owner") + " = ? AND "
                + id("fence") + " = ?", expiresMillis, m.name(), owner, fence);
    }

    /** Frees the lease if it is still ours; the fence stays. Binds: model, owner, fence. */
    Statement release(String owner, long fence) {
        return new Statement("UPDATE " + table() + " SET " + id("owner") + " = NULL, " + id("expires_at")
                + " = NULL WHERE " + id("model") + " = ? AND " + id("owner") + " = ? AND " + id("fence") + " = ?",
                m.name(), owner, fence);
    }

    /** The model's lease row: owner, expires_at (epoch ms or NULL), fence. Binds: model. */
    Statement read() {
        return new Statement("SELECT " + id("owner") + ", " + flavor.toMillis().apply(id("expires_at")) + ", "
                + id("fence") + " FROM " + table() + " WHERE " + id("model") + " = ?", m.name());
    }
}
