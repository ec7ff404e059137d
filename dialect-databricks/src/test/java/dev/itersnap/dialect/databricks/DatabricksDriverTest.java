package dev.itersnap.dialect.databricks;

import dev.itersnap.spi.Dialect;
import dev.itersnap.spi.Dialects;
import org.junit.jupiter.api.Test;

import java.sql.Driver;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The Databricks JDBC driver and the dialect lookup for its URLs, offline (no connection is opened). */
class DatabricksDriverTest {
    static final String URL = "jdbc:databricks://dbc-0000.cloud.databricks.com:443/default;transportMode=http;ssl=1;"
            + "httpPath=/sql/1.0/warehouses/abc123;AuthMech=3;UID=token;PWD=not-a-token";

    @Test
    void theDriverRegistersItselfForDatabricksUrls() throws SQLException {
        Driver driver = DriverManager.getDriver(URL);
        assertThat(driver.getClass().getName()).isEqualTo("com.databricks.client.jdbc.Driver");
        assertThat(driver.acceptsURL("jdbc:databricks://host:443/default")).isTrue();
        assertThat(driver.acceptsURL("jdbc:spark://host:443/default")).isFalse();
        assertThat(driver.getMajorVersion()).isEqualTo(3);
    }

    /**
     * MERGE NOTE: skipped on branch {@code lease}, where DatabricksDialect does not exist yet; once it is merged the
     * assumption holds and the assertion runs (then the assumption can go).
     */
    @Test
    void theDatabricksDialectIsTheOneForTheDriversUrls() {
        assumeTrue(classExists("dev.itersnap.dialect.databricks.DatabricksDialect"),
                "DatabricksDialect is not on this branch yet (written on branch dbx)");
        List<String> handling = Dialects.available().stream().filter(d -> d.handlesUrl(URL)).map(Dialect::name)
                .toList();
        assertThat(handling).containsExactly("databricks");
        assertThat(Dialects.named("databricks").handlesUrl(URL)).isTrue();
    }

    private static boolean classExists(String name) {
        try {
            Class.forName(name, false, DatabricksDriverTest.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }
}
