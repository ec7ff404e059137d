package dev.itersnap.spi;

import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.ItersnapException;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.DatabaseMetaData;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Dialect discovery keeps no list of products: an unclaimed database gets an error naming what is there. */
class DialectsTest {
    /** A data source whose connections describe themselves as {@code product} at {@code url}, and do nothing else. */
    private static DataSource describedAs(String url, String product) {
        DatabaseMetaData md = (DatabaseMetaData) Proxy.newProxyInstance(DialectsTest.class.getClassLoader(),
                new Class<?>[] {DatabaseMetaData.class}, (p, m, a) -> switch (m.getName()) {
                    case "getURL" -> url;
                    case "getDatabaseProductName" -> product;
                    default -> throw new UnsupportedOperationException(m.getName());
                });
        Connection c = (Connection) Proxy.newProxyInstance(DialectsTest.class.getClassLoader(),
                new Class<?>[] {Connection.class}, (p, m, a) -> switch (m.getName()) {
                    case "getMetaData" -> md;
                    case "close" -> null;
                    default -> throw new UnsupportedOperationException(m.getName());
                });
        return (DataSource) Proxy.newProxyInstance(DialectsTest.class.getClassLoader(),
                new Class<?>[] {DataSource.class}, (p, m, a) -> switch (m.getName()) {
                    case "getConnection" -> c;
                    default -> throw new UnsupportedOperationException(m.getName());
                });
    }

    @Test
    void aDatabaseNoDialectClaimsIsRefusedNamingTheDialectsOnTheClassPath() {
        assertThat(Dialects.available()).isEmpty(); // core alone: no dialect module on its test class path
        assertThatThrownBy(() -> Dialects.detect(describedAs("jdbc:snowflake://acme", "Snowflake")))
                .isInstanceOfSatisfying(ItersnapException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.NO_DIALECT))
                .hasMessageContaining("no itersnap dialect on the class path handles Snowflake (jdbc:snowflake://acme)")
                .hasMessageContaining("no dialect is on the class path")
                .hasMessageContaining("META-INF/services/dev.itersnap.spi.Dialect")
                .hasMessageNotContaining("itersnap-dialect-h2");
        assertThatThrownBy(() -> Dialects.named("snowflake")).isInstanceOf(ItersnapException.class)
                .hasMessageContaining("no dialect named 'snowflake' on the class path");
    }
}
