package dev.itersnap.dialect.databricks;

import dev.itersnap.conformance.TestDatabase;

import javax.sql.DataSource;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A "fresh database" per scenario on the one local Spark catalog: its own current schema {@code dN}, and every other
 * schema the suite names ({@code itersnap_metadata}, {@code history}, {@code etl_meta}) renamed to {@code dN_<name>}
 * in the SQL its connections run (and in {@code getTables}). Without that, scenarios would share the metadata
 * schema, since a Spark application has a single session catalog. Only schema qualifiers are renamed, and the
 * {@code ?} markers of the suite's own prepared statements become named markers ({@link QuestionMarks}); every
 * statement runs otherwise unchanged on {@link SparkDataSource}.
 */
final class SparkTestDatabase implements TestDatabase {
    private static final AtomicInteger DATABASES = new AtomicInteger();
    /** {@code -Ditersnap.trace=true} prints every statement with its time to stderr. */
    private static final boolean TRACE = Boolean.getBoolean("itersnap.trace");
    private static final List<String> SCHEMAS = List.of("itersnap_metadata", "history", "etl_meta");
    private static final Pattern QUALIFIER = Pattern.compile("(?<![\\w`])(`?)(" + String.join("|", SCHEMAS)
            + ")(`?)(?=\\.)", Pattern.CASE_INSENSITIVE);
    /** CREATE/DROP SCHEMA of a suite schema, catalog-qualified or not (the lease names its catalog). */
    private static final Pattern SCHEMA_DDL = Pattern.compile("(SCHEMA\\s+(?:IF\\s+(?:NOT\\s+)?EXISTS\\s+)?(?:`?\\w+`?\\.)?)(`?)("
            + String.join("|", SCHEMAS) + ")\\b", Pattern.CASE_INSENSITIVE);

    private static final Pattern RAW_TABLE = Pattern.compile("^\\s*CREATE TABLE (?!IF )[A-Za-z_]");

    private final java.util.function.Supplier<org.apache.spark.sql.SparkSession> session;

    /** Databases on the test session ({@link SparkTestSession#get}). */
    SparkTestDatabase() {
        this(SparkTestSession::get);
    }

    /** Databases on the session {@code session} supplies (of the one SparkContext). */
    SparkTestDatabase(java.util.function.Supplier<org.apache.spark.sql.SparkSession> session) {
        this.session = session;
    }

    @Override
    public DataSource newDatabase(String scenario) {
        String db = "d" + DATABASES.incrementAndGet();
        try (Connection c = SparkDataSource.of(session.get()).getConnection();
             Statement s = c.createStatement()) {
            s.execute("CREATE SCHEMA " + db);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
        return on(session.get(), db);
    }

    /**
     * The "database" {@code db} (made by {@link #newDatabase}) seen from {@code session}: a data source over that
     * session whose current schema is {@code db}. Two sessions of the one SparkContext are like two jobs on one
     * workspace: the same tables, but settings, temporary views and functions of their own.
     */
    static DataSource on(org.apache.spark.sql.SparkSession session, String db) {
        SparkDataSource spark = SparkDataSource.of(session);
        try (Connection c = spark.getConnection()) {
            c.setSchema(db);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
        return isolated(spark, db + "_");
    }

    @Override
    public String sqlType(ColumnType type) {
        return switch (type) {
            case INTEGER -> "INT";
            case BIGINT -> "BIGINT";
            case DECIMAL -> "DECIMAL(12, 3)";
            case VARCHAR -> "STRING";
            case DATE -> "DATE";
            case TIMESTAMP -> "TIMESTAMP";
        };
    }

    /** Delta tables have no indexes. */
    @Override
    public boolean indexes() {
        return false;
    }

    /** Delta's form of a type change (the raw tables enable type widening, see {@link #rename}). */
    @Override
    public String widenColumn(String table, String column, ColumnType type) {
        return "ALTER TABLE " + table + " ALTER COLUMN " + column + " TYPE " + sqlType(type);
    }

    @Override
    public String type(String ansiType) {
        String t = ansiType.toUpperCase(Locale.ROOT);
        if (t.startsWith("VARCHAR")) {
            return "STRING";
        }
        return t.equals("DOUBLE PRECISION") ? "DOUBLE" : ansiType;
    }

    /**
     * The SQL with the suite's schema names prefixed. The suite's own raw tables (created with unquoted names; the
     * engine quotes every name) get Delta column mapping, without which Delta refuses the suite's DROP COLUMN, and
     * type widening, without which it refuses INT to BIGINT.
     */
    static String rename(String sql, String prefix) {
        if (RAW_TABLE.matcher(sql).find()) {
            sql = sql + " TBLPROPERTIES ('delta.columnMapping.mode' = 'name', 'delta.enableTypeWidening' = 'true')";
        }
        Matcher m = QUALIFIER.matcher(sql);
        String out = m.replaceAll(r -> Matcher.quoteReplacement(r.group(1) + prefix + r.group(2).toLowerCase(Locale.ROOT)
                + r.group(3)));
        m = SCHEMA_DDL.matcher(out);
        return m.replaceAll(r -> Matcher.quoteReplacement(r.group(1) + r.group(2) + prefix
                + r.group(3).toLowerCase(Locale.ROOT)));
    }

    private static DataSource isolated(DataSource target, String prefix) {
        return proxy(DataSource.class, target, (method, args) -> {
            Object result = invoke(target, method, args);
            return result instanceof Connection c ? connection(c, prefix) : result;
        });
    }

    private static Connection connection(Connection c, String prefix) {
        return proxy(Connection.class, c, (method, args) -> {
            String name = method.getName();
            if (name.equals("prepareStatement") && args[0] instanceof String sql) {
                // the suite's own statements bind with ?; the engine's come with named markers already
                args[0] = QuestionMarks.toNamedMarkers(rename(sql, prefix));
            } else if (name.equals("nativeSQL") && args[0] instanceof String sql) {
                args[0] = rename(sql, prefix);
            }
            Object result = invoke(c, method, args);
            if (result instanceof DatabaseMetaData md) {
                return metaData(md, prefix);
            }
            if (result instanceof Statement s) {
                return statement(s, prefix, name.equals("prepareStatement") ? (String) args[0] : null);
            }
            return result;
        });
    }

    private static Statement statement(Statement s, String prefix, String preparedSql) {
        Class<? extends Statement> type = preparedSql != null ? java.sql.PreparedStatement.class : Statement.class;
        return proxy(type, s, (method, args) -> {
            if (!method.getName().startsWith("execute")) {
                return invoke(s, method, args);
            }
            String sql = preparedSql;
            if (args != null && args[0] instanceof String text) {
                sql = rename(text, prefix);
                args[0] = sql;
            }
            long start = System.nanoTime();
            try {
                return invoke(s, method, args);
            } finally {
                if (TRACE) {
                    System.err.printf("[spark %5d ms] %s%n", (System.nanoTime() - start) / 1_000_000,
                            String.valueOf(sql).replaceAll("\\s+", " ").substring(0, Math.min(140,
                                    String.valueOf(sql).length())));
                }
            }
        });
    }

    private static DatabaseMetaData metaData(DatabaseMetaData md, String prefix) {
        return proxy(DatabaseMetaData.class, md, (method, args) -> {
            if (method.getName().equals("getTables") && args[1] instanceof String schema
                    && SCHEMAS.contains(schema.toLowerCase(Locale.ROOT))) {
                args[1] = prefix + schema.toLowerCase(Locale.ROOT);
            }
            return invoke(md, method, args);
        });
    }

    private interface Handler {
        Object handle(Method method, Object[] args) throws Throwable;
    }

    @SuppressWarnings("unchecked")
    private static <T> T proxy(Class<T> type, Object target, Handler handler) {
        return (T) Proxy.newProxyInstance(SparkTestDatabase.class.getClassLoader(), new Class<?>[] {type},
                (p, method, args) -> switch (method.getName()) {
                    case "hashCode" -> System.identityHashCode(p);
                    case "equals" -> p == args[0];
                    case "toString" -> type.getSimpleName() + "[" + target + "]";
                    default -> handler.handle(method, args);
                });
    }

    private static Object invoke(Object target, Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
