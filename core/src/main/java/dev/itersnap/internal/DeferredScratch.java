package dev.itersnap.internal;

import dev.itersnap.spi.AbstractSqlDialect;
import dev.itersnap.spi.Statement;
import dev.itersnap.spi.TableSpec;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The run's scratch tables, each created by the first statement that names it, where the database creates a table
 * from a query in one statement ({@link AbstractSqlDialect#createTableAs}; Delta Lake): the run's first
 * {@code INSERT INTO} a scratch table becomes the statement that creates it with those rows, one statement and one commit
 * instead of two. Any other statement that names a table not yet created this run (a read, an UPDATE, an INSERT that
 * reads the table it fills) has the table created empty first, as a run without this would have created it at its
 * start; so no statement of the run ever sees a table an earlier run left behind. A table the run never names is not
 * created at all. Every statement of the run passes through {@link #route} ({@link Jdbc}); the tables are recognised by
 * their quoted names, which the engine writes in every statement that names them.
 */
final class DeferredScratch {
    /**
     * The runtimes (dialect and database version) found not to replace a table from a query: open-source Spark 3.5.8
     * with Delta 3.3.2 fails every {@code CREATE OR REPLACE TABLE ... AS SELECT} with "does not support truncate in
     * batch mode" ({@code _LEGACY_ERROR_TEMP_1113}), new table or not. Their scratch tables are created empty and
     * filled, as where the dialect has no such statement; found once per runtime and JVM.
     */
    private static final java.util.Set<String> UNSUPPORTED = java.util.concurrent.ConcurrentHashMap.newKeySet();

    private final AbstractSqlDialect dialect;
    private final String runtime;
    /** The tables not created yet this run, by their quoted table name (the last part of the name). */
    private final Map<String, TableSpec> pending = new LinkedHashMap<>();
    /** The statements {@link #route} made to create a table with rows, and the table each creates. */
    private final Map<Statement, TableSpec> creating = new java.util.IdentityHashMap<>();

    private DeferredScratch(AbstractSqlDialect dialect, String runtime, List<TableSpec> tables) {
        this.dialect = dialect;
        this.runtime = runtime;
        for (TableSpec t : tables) {
            pending.put(dialect.quote(t.name().table()), t);
        }
    }

    /**
     * The deferral of {@code tables}, or null where the dialect cannot create a table from a query (or the runtime
     * {@code runtime}, the dialect and the database's version, was found not to).
     */
    static DeferredScratch of(AbstractSqlDialect dialect, String runtime, List<TableSpec> tables) {
        if (UNSUPPORTED.contains(runtime)) {
            return null;
        }
        for (TableSpec t : tables) {
            if (dialect.createTableAs(t, List.of(), Statement.of("probe", "SELECT 1")) == null) {
                return null;
            }
        }
        return new DeferredScratch(dialect, runtime, tables);
    }

    /**
     * Whether {@code failure} of {@code routed}, a statement {@link #route} made to create a table with rows, says the
     * database cannot replace a table from a query: then the runtime is remembered, and the table is created empty
     * through {@code create} so that the original {@code INSERT} can run.
     */
    boolean fellBack(Statement routed, RuntimeException failure, java.util.function.Consumer<Statement> create) {
        TableSpec table = creating.remove(routed);
        if (table == null || !cannotReplaceFromQuery(failure)) {
            return false;
        }
        UNSUPPORTED.add(runtime);
        dialect.createTable(table).forEach(c -> create.accept(c.inStep("create scratch tables")));
        return true;
    }

    /** The failure of {@code CREATE OR REPLACE TABLE ... AS SELECT} on open-source Spark 3.5 with Delta 3.3. */
    static boolean cannotReplaceFromQuery(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            String message = t.getMessage();
            if (message != null && (message.contains("does not support truncate in batch mode")
                    || message.contains("_LEGACY_ERROR_TEMP_1113"))) {
                return true;
            }
        }
        return false;
    }

    /**
     * The statement to run for {@code s}, once every pending table it names is created: where {@code s} (run as an
     * update: {@code write}) is an {@code INSERT INTO} a pending table that does not read that table, the statement
     * that creates the table with the rows {@code s} inserts; every other pending table it names is created empty first,
     * through {@code create}, and {@code s} is run as it is.
     */
    Statement route(Statement s, boolean write, Consumer<Statement> create) {
        if (pending.isEmpty()) {
            return s;
        }
        String sql = s.sql();
        Statement out = s;
        for (Map.Entry<String, TableSpec> e : new ArrayList<>(pending.entrySet())) {
            if (!sql.contains(e.getKey())) {
                continue;
            }
            Statement filled = write && out == s ? filling(s, e.getValue()) : null;
            pending.remove(e.getKey());
            if (filled != null) {
                out = filled;
                creating.put(filled, e.getValue());
            } else {
                dialect.createTable(e.getValue()).forEach(c -> create.accept(c.inStep("create scratch tables")));
            }
        }
        return out;
    }

    /**
     * {@code s} as the statement creating {@code table} with its rows, when {@code s} is {@code INSERT INTO table
     * (columns) query} naming columns of the table and its query does not read the table; else null.
     */
    private Statement filling(Statement s, TableSpec table) {
        String head = "INSERT INTO " + dialect.table(table.name()) + " (";
        String sql = s.sql();
        if (!sql.startsWith(head)) {
            return null;
        }
        List<String> columns = new ArrayList<>();
        int at = head.length();
        while (true) {
            String found = null;
            for (TableSpec.Column c : table.columns()) {
                String q = dialect.quote(c.name());
                if (sql.startsWith(q, at) && (found == null || q.length() > dialect.quote(found).length())) {
                    found = c.name();
                }
            }
            if (found == null || columns.contains(found)) {
                return null;
            }
            columns.add(found);
            at += dialect.quote(found).length();
            if (sql.startsWith(", ", at)) {
                at += 2;
            } else if (sql.startsWith(") ", at)) {
                at += 2;
                break;
            } else {
                return null;
            }
        }
        Statement query = s.afterPrefix(sql.substring(0, at));
        if (query == null || query.sql().contains(dialect.quote(table.name().table()))) {
            return null;
        }
        return dialect.createTableAs(table, columns, query);
    }
}
