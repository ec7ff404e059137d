package dev.itersnap.dialect.databricks;

import org.apache.spark.sql.SparkSession;
import scala.Option;

import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.WeakHashMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The caller's SparkSession as one {@link SparkDataSource} uses it: every statement runs in a window in which the
 * session has the data source's current catalog and schema, the time zone UTC and, only where the runtime needs it,
 * the parameter-substitution workaround; when the statement's result has been read, every setting the window changed
 * is put back (a setting that was unset is unset again). Statements of one session are serialized through the
 * window, so the caller's other threads see the changed settings only while one of itersnap's statements runs.
 *
 * <p>Why each setting:
 * <ul>
 *   <li>{@code spark.sql.session.timeZone=UTC}: TIMESTAMP values (instants) are read and bound as their UTC
 *   wall-clock time, so validity times and ledger texts do not depend on the session's (or the JVM's) time zone
 *   (docs/semantics.md, "Time zones"). The caller's source query is evaluated in UTC too.</li>
 *   <li>{@code spark.sql.legacy.parameterSubstitution.constantsOnly=true}: only when a probe ({@code SELECT :_p1})
 *   fails with {@code UNBOUND_SQL_PARAMETER}, as on open-source Spark 4.1+ with Delta 4.x, whose SQL parser drops
 *   parameter markers (delta-io/delta#7640). Databricks runtimes, serverless and Spark 3.5 bind without it, and
 *   serverless compute may refuse to set it ({@code CONFIG_NOT_AVAILABLE}). Where even that does not bind (a Spark
 *   Connect server of open-source Spark 4.1+ with Delta 4.x analyzes the statement on a path the setting does not
 *   reach), values are inlined as literals ({@link Binding#LITERALS}).</li>
 * </ul>
 * A setting the runtime refuses is not an error unless the statement needs it: a refused time zone fails the run
 * naming the setting (itersnap will not read TIMESTAMPs in another zone silently).
 */
final class SparkScope {
    static final String TIME_ZONE = "spark.sql.session.timeZone";
    static final String CONSTANTS_ONLY = "spark.sql.legacy.parameterSubstitution.constantsOnly";

    /**
     * One lock per session, shared by every data source over it. Not the session's own monitor: Spark initializes
     * lazy members of the session (its implicits) under that monitor from its own threads while a query runs.
     */
    private static final Map<SparkSession, ReentrantLock> LOCKS = new WeakHashMap<>();

    private final SparkSession session;
    private final ReentrantLock lock;
    private volatile String catalog;
    private volatile String schema;
    /** How values reach the session; found by a probe in the first window. Guarded by lock. */
    private Binding binding;

    /** How a statement's values reach the session. */
    enum Binding {
        /** Bound by name ({@code spark.sql(sql, args)}): Databricks runtimes, serverless, Spark 3.5. */
        NAMED,
        /** Bound by name with {@code spark.sql.legacy.parameterSubstitution.constantsOnly=true}: open-source Delta 4.x. */
        CONSTANTS_ONLY,
        /**
         * Inlined as literals ({@link SparkSql#inline}): a session that binds neither way, as a Spark Connect server
         * of open-source Spark 4.1+ with Delta 4.x, which analyzes the statement's relation on its own path where the
         * workaround does not reach.
         */
        LITERALS
    }

    SparkScope(SparkSession session) {
        this.session = Objects.requireNonNull(session, "spark");
        synchronized (LOCKS) {
            this.lock = LOCKS.computeIfAbsent(session, s -> new ReentrantLock());
        }
        this.catalog = session.catalog().currentCatalog();
        this.schema = session.catalog().currentDatabase();
    }

    SparkSession session() {
        return session;
    }

    String catalog() {
        return catalog;
    }

    String schema() {
        return schema;
    }

    void setCatalog(String catalog) {
        this.catalog = catalog;
    }

    void setSchema(String schema) {
        this.schema = schema;
    }

    /** Something done with the session inside the window. */
    interface Work<T> {
        T run(SparkSession spark) throws SQLException;
    }

    /** Runs {@code work} with the data source's settings in force, and puts the session's own back afterwards. */
    <T> T within(Work<T> work) throws SQLException {
        lock.lock();
        try {
            Map<String, Option<String>> saved = new LinkedHashMap<>();
            String callerCatalog = session.catalog().currentCatalog();
            String callerSchema = session.catalog().currentDatabase();
            try {
                set(saved, TIME_ZONE, "UTC", true);
                if (binding == null) {
                    binding = probeBinding(saved);
                } else if (binding == Binding.CONSTANTS_ONLY) {
                    set(saved, CONSTANTS_ONLY, "true", true);
                }
                if (!catalog.equals(callerCatalog)) {
                    session.catalog().setCurrentCatalog(catalog);
                }
                if (!schema.equals(session.catalog().currentDatabase())) {
                    session.catalog().setCurrentDatabase(schema);
                }
                return work.run(session);
            } finally {
                restore(saved, callerCatalog, callerSchema);
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * How values reach the session in windows: by name as it is; else (Delta's parser drops the markers) with the
     * workaround, which then stays set for this window; else as literals (the workaround is put back).
     */
    private Binding probeBinding(Map<String, Option<String>> saved) throws SQLException {
        if (bindsParameters()) {
            return Binding.NAMED;
        }
        set(saved, CONSTANTS_ONLY, "true", true);
        if (bindsParameters()) {
            return Binding.CONSTANTS_ONLY;
        }
        Option<String> before = saved.remove(CONSTANTS_ONLY);
        restore(Map.of(CONSTANTS_ONLY, before), session.catalog().currentCatalog(),
                session.catalog().currentDatabase());
        return Binding.LITERALS;
    }

    /** How this session's windows pass values (known once a window has run; asked inside one). */
    Binding binding() {
        return binding;
    }

    /** Whether the session binds named parameters (false: Delta's parser dropped them). */
    private boolean bindsParameters() {
        try {
            session.sql("SELECT :_p1 AS itersnap_probe", Map.<String, Object>of("_p1", 1)).collectAsList();
            return true;
        } catch (Exception e) { // AnalysisException is checked to Java
            if (String.valueOf(e.getMessage()).contains("UNBOUND_SQL_PARAMETER")) {
                return false;
            }
            return true; // another failure: not the parser bug; the statement itself will say what is wrong
        }
    }

    private void set(Map<String, Option<String>> saved, String key, String value, boolean required)
            throws SQLException {
        Option<String> before = session.conf().getOption(key);
        if (before.isDefined() && before.get().equals(value)) {
            return;
        }
        try {
            session.conf().set(key, value);
            saved.put(key, before);
        } catch (RuntimeException e) {
            if (required) {
                throw new SQLException("itersnap needs the Spark setting " + key + "=" + value + " while its "
                        + "statements run, and this compute refused it: " + e.getMessage(), "0A000", e);
            }
        }
    }

    private void restore(Map<String, Option<String>> saved, String callerCatalog, String callerSchema) {
        saved.forEach((key, before) -> {
            try {
                if (before.isDefined()) {
                    session.conf().set(key, before.get());
                } else {
                    session.conf().unset(key);
                }
            } catch (RuntimeException ignored) {
                // a setting we could change can be changed back; nothing more to do if not
            }
        });
        try {
            if (!session.catalog().currentCatalog().equals(callerCatalog)) {
                session.catalog().setCurrentCatalog(callerCatalog);
            }
            if (!session.catalog().currentDatabase().equals(callerSchema)) {
                session.catalog().setCurrentDatabase(callerSchema);
            }
        } catch (RuntimeException ignored) {
            // the caller's schema was dropped meanwhile
        }
    }
}
