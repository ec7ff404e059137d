package dev.itersnap.dialect.databricks;

import dev.itersnap.spi.Dialect;
import dev.itersnap.spi.Dialects;
import org.junit.jupiter.api.Test;

import java.sql.Driver;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

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

    /** A {@code jdbc:databricks:} URL picks the databricks dialect, and only it. */
    @Test
    void theDatabricksDialectIsTheOneForTheDriversUrls() {
        List<String> handling = Dialects.available().stream().filter(d -> d.handlesUrl(URL)).map(Dialect::name)
                .toList();
        assertThat(handling).containsExactly("databricks");
        assertThat(Dialects.named("databricks").handlesUrl(URL)).isTrue();
    }
}
