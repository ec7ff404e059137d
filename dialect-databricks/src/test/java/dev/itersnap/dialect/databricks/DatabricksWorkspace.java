package dev.itersnap.dialect.databricks;

import dev.itersnap.conformance.TestDatabase;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;

/**
 * A real Databricks workspace through the Databricks JDBC driver, for the tests that run only when
 * {@code ITERSNAP_DATABRICKS_URL} and {@code ITERSNAP_DATABRICKS_CATALOG} are set (docs/dev/databricks-workspace.md).
 *
 * <ul>
 *   <li>{@code ITERSNAP_DATABRICKS_URL}: {@code jdbc:databricks://HOST:443/default;transportMode=http;ssl=1;
 *   httpPath=/sql/1.0/warehouses/ID}, with {@code ;AuthMech=3;UID=token;PWD=TOKEN} or without them when the token
 *   is in {@code ITERSNAP_DATABRICKS_TOKEN}</li>
 *   <li>{@code ITERSNAP_DATABRICKS_CATALOG}: a scratch catalog the tests may create and drop schemas in</li>
 * </ul>
 *
 * <p>As a {@link TestDatabase}, each scenario gets a fresh schema of that catalog as the connections' default
 * ({@code ConnCatalog}, {@code ConnSchema}); the schemas the scenario creates besides it (the metadata schema
 * {@code itersnap_metadata}, {@code history}, {@code etl_meta}) are dropped with it, CASCADE, when it ends.
 */
final class DatabricksWorkspace implements TestDatabase {
    static final String URL = "ITERSNAP_DATABRICKS_URL";
    static final String TOKEN = "ITERSNAP_DATABRICKS_TOKEN";
    static final String CATALOG = "ITERSNAP_DATABRICKS_CATALOG";

    private final String url = System.getenv(URL);
    private final String catalog = System.getenv(CATALOG);
    private final Map<DataSource, Set<String>> schemasBefore = new IdentityHashMap<>();

    /** The catalog the tests work in. */
    String catalog() {
        return catalog;
    }

    /** A data source whose connections default to {@code catalog.schema}. */
    DataSource dataSource(String schema) {
        Properties p = new Properties();
        String token = System.getenv(TOKEN);
        if (token != null && !token.isBlank() && !url.toUpperCase(Locale.ROOT).contains(";PWD=")) {
            p.setProperty("AuthMech", "3");
            p.setProperty("UID", "token");
            p.setProperty("PWD", token);
        }
        p.setProperty("ConnCatalog", catalog);
        if (schema != null) {
            p.setProperty("ConnSchema", schema);
        }
        p.setProperty("TIMEZONE", "UTC"); // session time zone of TIMESTAMP values (the SQL warehouse default)
        return dev.itersnap.core.DriverDataSource.of(url, p);
    }

    /** Quoted {@code catalog.name}. */
    String qualified(String schema) {
        return LeaseFixture.BACKTICKS.apply(catalog) + "." + LeaseFixture.BACKTICKS.apply(schema);
    }

    @Override
    public DataSource newDatabase(String scenario) {
        String schema = ("itersnap_t_" + scenario + "_" + UUID.randomUUID().toString().substring(0, 8))
                .toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9_]", "_");
        try (Connection c = dataSource(null).getConnection(); Statement st = c.createStatement()) {
            Set<String> before = schemas(st);
            if (before.contains("itersnap_metadata")) {
                throw new IllegalStateException("catalog " + catalog + " already has a schema itersnap_metadata (left "
                        + "by an aborted run?); the scenarios need a catalog without it: DROP SCHEMA "
                        + qualified("itersnap_metadata") + " CASCADE");
            }
            st.execute("CREATE SCHEMA " + qualified(schema));
            DataSource ds = dataSource(schema);
            synchronized (schemasBefore) {
                schemasBefore.put(ds, before);
            }
            return ds;
        } catch (SQLException e) {
            throw new IllegalStateException("cannot create schema " + schema + " in " + catalog + ": " + e, e);
        }
    }

    @Override
    public void discard(DataSource database) {
        Set<String> before;
        synchronized (schemasBefore) {
            before = schemasBefore.remove(database);
        }
        if (before == null) {
            return;
        }
        try (Connection c = dataSource(null).getConnection(); Statement st = c.createStatement()) {
            for (String schema : schemas(st)) {
                if (!before.contains(schema)) {
                    st.execute("DROP SCHEMA IF EXISTS " + qualified(schema) + " CASCADE");
                }
            }
        } catch (SQLException e) {
            throw new IllegalStateException("cannot drop the scenario's schemas in " + catalog + ": " + e, e);
        }
    }

    private Set<String> schemas(Statement st) throws SQLException {
        Set<String> names = new HashSet<>();
        try (ResultSet rs = st.executeQuery("SHOW SCHEMAS IN " + LeaseFixture.BACKTICKS.apply(catalog))) {
            while (rs.next()) {
                names.add(rs.getString(1).toLowerCase(Locale.ROOT));
            }
        }
        return names;
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

    @Override
    public String type(String ansiType) {
        return switch (ansiType.toUpperCase(Locale.ROOT)) {
            case "DOUBLE PRECISION" -> "DOUBLE";
            default -> ansiType;
        };
    }
}
