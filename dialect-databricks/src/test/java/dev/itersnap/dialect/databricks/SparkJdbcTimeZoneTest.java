package dev.itersnap.dialect.databricks;

import dev.itersnap.IterativeSnapshot;
import dev.itersnap.core.Check;
import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.core.ModelSettings;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Locale;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * The session time zone over JDBC, where each connection is a server session (the Databricks driver): a run sets it
 * to UTC before it reads or writes anything, or stops naming the setting. The server session here is a real Spark
 * session in New York reached through a minimal JDBC connection that runs each statement on it as it is (no
 * SparkDataSource window), as a SQL warehouse runs what the driver sends; the refusing variant refuses every
 * {@code SET}, as serverless compute refuses settings it does not allow.
 */
class SparkJdbcTimeZoneTest {
    @Test
    void aRunSetsUtcOnItsSessionBeforeAnythingElse() throws SQLException {
        SparkSession server = newYorkSession();
        DatabricksDialect dialect = new DatabricksDialect();
        try (Connection c = serverSession(server, false)) {
            dialect.prepareRunConnection(c);
        }
        assertThat(server.conf().get("spark.sql.session.timeZone")).isEqualTo("UTC");

        SparkSession other = newYorkSession();
        try (Connection c = serverSession(other, false)) {
            List<Check> checks = dialect.environmentChecks(c);
            assertThat(checks).filteredOn(ch -> ch.name().equals("session time zone")).singleElement()
                    .satisfies(ch -> assertThat(ch.passed()).isTrue())
                    .satisfies(ch -> assertThat(ch.detail()).contains("America/New_York").contains("a run sets UTC"));
        }
    }

    @Test
    void aSessionThatRefusesUtcStopsTheRunBeforeItWritesNamingTheSetting() throws SQLException {
        SparkSession server = newYorkSession();
        DataSource jdbc = dataSource(server, true);
        ModelSettings model = ModelSettings.builder("tz_refused").target("tz_refused_hist.customers")
                .metadataSchema("tz_refused_meta").source("SELECT * FROM tz_refused_raw")
                .uniqueKey("customer_id").updatedAt("updated_at").sequenceBy("file_date").build();

        ItersnapException e = catchThrowableOfType(ItersnapException.class, () -> IterativeSnapshot.builder()
                .dataSource(jdbc).dialect("databricks").listener(event -> { }).build().run(model));

        assertThat(e).isNotNull();
        assertThat(e.code()).isEqualTo(ErrorCode.INVALID_SETTING);
        assertThat(e.getMessage()).contains("America/New_York").contains("TIMEZONE=UTC")
                .contains("SET TIME ZONE 'UTC' was refused");
        assertThat(server.catalog().databaseExists("tz_refused_meta")).as("nothing written").isFalse();
        assertThat(server.conf().get("spark.sql.session.timeZone")).isEqualTo("America/New_York");
        try (Connection c = jdbc.getConnection()) {
            assertThat(new DatabricksDialect().environmentChecks(c)).filteredOn(ch -> ch.name()
                    .equals("session time zone")).singleElement().satisfies(ch -> assertThat(ch.passed()).isFalse());
        }
    }

    private static SparkSession newYorkSession() {
        SparkSession s = SparkTestSession.get().newSession();
        s.conf().set("spark.sql.session.timeZone", "America/New_York");
        return s;
    }

    private static DataSource dataSource(SparkSession server, boolean refuseSet) {
        return (DataSource) Proxy.newProxyInstance(SparkJdbcTimeZoneTest.class.getClassLoader(),
                new Class<?>[] {DataSource.class}, (p, m, args) -> switch (m.getName()) {
                    case "getConnection" -> serverSession(server, refuseSet);
                    case "hashCode" -> System.identityHashCode(p);
                    case "equals" -> p == args[0];
                    case "toString" -> "jdbc(" + server + ")";
                    default -> throw new SQLException("not supported here: " + m.getName());
                });
    }

    /**
     * A JDBC connection whose statements run on {@code server} as they are. What a run needs before the time zone
     * check fails it: auto-commit, metadata's product name, plain statements.
     */
    private static Connection serverSession(SparkSession server, boolean refuseSet) {
        return (Connection) Proxy.newProxyInstance(SparkJdbcTimeZoneTest.class.getClassLoader(),
                new Class<?>[] {Connection.class}, (p, m, args) -> switch (m.getName()) {
                    case "createStatement" -> statement(server, refuseSet);
                    case "getClientInfo", "getCatalog", "getSchema", "getWarnings" -> null;
                    case "getAutoCommit", "isClosed" -> m.getName().equals("getAutoCommit");
                    case "setAutoCommit", "close", "clearWarnings", "commit", "rollback" -> null;
                    case "hashCode" -> System.identityHashCode(p);
                    case "equals" -> p == args[0];
                    case "toString" -> "session(" + server + ")";
                    default -> throw new SQLException("not supported here: " + m.getName());
                });
    }

    private static Statement statement(SparkSession server, boolean refuseSet) {
        return (Statement) Proxy.newProxyInstance(SparkJdbcTimeZoneTest.class.getClassLoader(),
                new Class<?>[] {Statement.class}, (p, m, args) -> {
                    switch (m.getName()) {
                        case "execute", "executeQuery" -> {
                            String sql = (String) args[0];
                            if (refuseSet && sql.strip().toUpperCase(Locale.ROOT).startsWith("SET")) {
                                throw new SQLException("[CONFIG_NOT_AVAILABLE] Configuration TIME ZONE is not "
                                        + "available.", "42K0I");
                            }
                            SparkResultSet.Table t = SparkSql.read(SparkSql.run(server, sql, List.of()), 0,
                                    ZoneOffset.UTC);
                            return m.getName().equals("execute") ? Boolean.TRUE
                                    : SparkResultSet.of(t, (Statement) p, ZoneOffset.UTC);
                        }
                        case "close" -> {
                            return null;
                        }
                        case "hashCode" -> {
                            return System.identityHashCode(p);
                        }
                        case "equals" -> {
                            return p == args[0];
                        }
                        default -> throw new SQLException("not supported here: " + m.getName());
                    }
                });
    }
}
