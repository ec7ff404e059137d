package dev.itersnap.dialect.databricks;

import dev.itersnap.core.HardDeletes;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.internal.sql.ApplyStatements;
import dev.itersnap.internal.sql.BatchRun;
import dev.itersnap.spi.lease.LeaseLock;
import dev.itersnap.internal.sql.ModelTables;
import dev.itersnap.internal.ResolvedModel;
import dev.itersnap.internal.sql.Rollback;
import dev.itersnap.spi.SourceColumn;
import dev.itersnap.spi.SqlValues;
import dev.itersnap.spi.StageScope;
import dev.itersnap.spi.Statement;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Types;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.TimeZone;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Binding through the pinned Databricks JDBC driver's own client-side code, offline ({@link DriverCapture}): every
 * value type the engine binds reaches the driver's network client with its SQL type, nothing goes through the
 * driver's type inference (which refuses Boolean and BigDecimal), local times are sent as they are whatever the
 * JVM's time zone, and no statement of a run exceeds the driver's parameter limit.
 */
class DatabricksDriverBindingTest {
    private static DriverCapture driver;

    @BeforeAll
    static void connect() throws SQLException {
        driver = new DriverCapture();
    }

    @AfterAll
    static void close() {
        driver.close();
    }

    /** What the engine bound before: setObject(i, v) lets the driver infer the type, and it refuses these. */
    @Test
    void theDriversTypeInferenceRefusesBooleansDecimalsAndUntypedNulls() throws SQLException {
        try (PreparedStatement ps = driver.connection().prepareStatement("SELECT ?")) {
            assertThatThrownBy(() -> ps.setObject(1, true)).hasMessageContaining("Not supported object type");
            assertThatThrownBy(() -> ps.setObject(1, new BigDecimal("1.50")))
                    .hasMessageContaining("Not supported object type");
            assertThatThrownBy(() -> ps.setObject(1, OffsetDateTime.parse("2024-03-01T00:00Z")))
                    .hasMessageContaining("Not supported object type");
            assertThatThrownBy(() -> ps.setNull(1, Types.NULL)).hasMessageContaining("Not supported SQL type");
        }
    }

    @Test
    void everyValueTypeTheEngineBindsReachesTheDriversClientWithItsSqlType() throws SQLException {
        Statement s = Statement.builder("values").sql("INSERT INTO t VALUES (").bind(true).sql(", ").bind(false)
                .sql(", ").bind(42L).sql(", ").bind(7).sql(", ").bind(new BigDecimal("12.50")).sql(", ")
                .bind("it's").sql(", ").bind(LocalDate.of(2024, 3, 1)).sql(", ")
                .bind(LocalDateTime.of(2024, 3, 1, 6, 0, 0, 123_456_000)).sql(", ")
                .bind(OffsetDateTime.parse("2024-03-01T06:00+02:00")).sql(", ").bind(null).sql(")").build();
        DriverCapture.Execution e = execute(s);
        assertThat(e.sql()).isEqualTo(s.sql());
        assertThat(e.parameters().values().stream().map(DriverCapture.Sent::type).toList()).containsExactly(
                "BOOLEAN", "BOOLEAN", "LONG", "INT", "DECIMAL", "STRING", "DATE", "TIMESTAMP", "TIMESTAMP", "STRING");
        assertThat(e.parameters().values().stream().map(DriverCapture.Sent::text).toList()).containsExactly(
                "true", "false", "42", "7", "12.50", "it's", "2024-03-01", "2024-03-01T06:00:00.123456",
                "2024-03-01T06:00+02:00", null);
    }

    /**
     * A local time in New York's daylight-saving gap (2024-03-10 02:30) is sent unchanged from JVMs in any zone;
     * through java.sql.Timestamp (what setTimestamp needs) it became 03:30 in a JVM in New York.
     */
    @Test
    void localTimesAreSentAsTheyAreWhateverTheJvmTimeZone() throws SQLException {
        LocalDateTime gap = LocalDateTime.of(2024, 3, 10, 2, 30);
        TimeZone jvm = TimeZone.getDefault();
        List<String> sent = new ArrayList<>();
        try {
            for (String zone : List.of("UTC", "America/New_York", "Asia/Kolkata", "Pacific/Chatham")) {
                TimeZone.setDefault(TimeZone.getTimeZone(zone));
                Statement s = Statement.builder("t").sql("SELECT CAST(").bind(gap).sql(" AS TIMESTAMP), CAST(")
                        .bind(LocalDate.of(2024, 3, 10)).sql(" AS DATE)").build();
                DriverCapture.Execution e = execute(s);
                sent.add(e.parameters().get(1).text() + " " + e.parameters().get(2).text());
            }
            TimeZone.setDefault(TimeZone.getTimeZone("America/New_York"));
            assertThat(java.sql.Timestamp.valueOf(gap).toString()).startsWith("2024-03-10 03:30"); // the trap
        } finally {
            TimeZone.setDefault(jvm);
        }
        assertThat(sent).containsOnly("2024-03-10T02:30 2024-03-10");
    }

    /** Every statement of a run (a key-scoped replay's too), a roll back and the lease, for a DECIMAL sequence, goes through the driver. */
    @Test
    void theStatementsOfARunBindThroughTheDriver() throws SQLException {
        DatabricksDialect dialect = new DatabricksDialect();
        ModelSettings settings = ModelSettings.builder("orders").target("snap.orders").source("SELECT * FROM raw")
                .uniqueKey("id").updatedAt("updated_at").sequenceBy("batch_no").hardDeletes(HardDeletes.NEW_RECORD)
                .build();
        ResolvedModel m = ResolvedModel.builder(settings, x -> x.toLowerCase(Locale.ROOT))
                .sourceColumns(List.of(new SourceColumn("id", Types.BIGINT, "BIGINT", 19, 0),
                        new SourceColumn("amount", Types.DECIMAL, "DECIMAL(12,2)", 12, 2),
                        new SourceColumn("updated_at", Types.TIMESTAMP, "TIMESTAMP", 26, 6),
                        new SourceColumn("batch_no", Types.DECIMAL, "DECIMAL(10,0)", 10, 0)))
                .keys(List.of("id")).updatedAt("updated_at").sequenceBy("batch_no").tracked(List.of("amount"))
                .build();
        BigDecimal seq = new BigDecimal("20240301");
        // a late batch and a replayed one after it: both derivations of a key-scoped replay
        ApplyStatements b = dev.itersnap.internal.sql.SqlSteps.of(dialect).applyBatches(m, new BatchRun(List.of(new BatchRun.BatchInfo(seq, "20240301",
                LocalDateTime.of(2024, 3, 1, 23, 0), false), new BatchRun.BatchInfo(seq.add(BigDecimal.ONE),
                "20240302", null, true, true)), "run-1", LocalDateTime.of(2024, 3, 2, 6, 0), List.of(), List.of()));
        List<Statement> run = new ArrayList<>();
        for (StageScope scope : StageScope.values()) {
            run.add(dev.itersnap.internal.sql.SqlSteps.of(dialect).stageSource(m, seq, true, scope));
        }
        run.add(dev.itersnap.internal.sql.SqlSteps.of(dialect).logNullSequences(m, "run-1", LocalDateTime.of(2024, 3, 2, 6, 0)));
        run.add(dev.itersnap.internal.sql.SqlSteps.of(dialect).stageReproduced(m, seq, List.of(), true));
        run.addAll(dev.itersnap.internal.sql.SqlSteps.of(dialect).rollback(m, Rollback.from(seq, List.of())));
        run.addAll(dev.itersnap.internal.sql.SqlSteps.of(dialect).rollback(m, Rollback.keys(seq, true)));
        run.addAll(b.listBatches());
        run.addAll(b.prepare());
        for (ApplyStatements.Derivation d : List.of(b.before(), b.derivation())) {
            run.addAll(List.of(d.derive(), d.counts()));
            run.addAll(d.setAsideRegressions());
        }
        run.add(b.resetRegressions());
        run.add(b.closeCurrent());
        run.add(b.insertVersions());
        run.add(b.writeVersions());
        run.add(b.logRejected());
        run.add(b.archive());
        run.add(dev.itersnap.internal.sql.SqlSteps.of(dialect).timelineCheck(m, seq));
        ModelTables tables = new ModelTables(dialect, m);
        run.add(tables.savePending(seq, null));
        LeaseLock.Statements lease = new LeaseLock.Statements(dialect, m, DatabricksDialect.CLOCK);
        run.add(lease.acquire("host/1/owner", 1_700_000_000_000L, 1_700_000_300_000L));
        run.add(lease.renew("host/1/owner", 3, 1_700_000_400_000L));
        run.add(lease.release("host/1/owner", 3));
        int decimals = 0;
        for (Statement s : run) {
            assertThat(s.values()).as(s.step()).hasSizeLessThan(SqlValues.MAX_PARAMETERS);
            DriverCapture.Execution e = execute(s);
            assertThat(e.parameters()).as(s.step()).hasSize(s.values().size());
            for (DriverCapture.Sent p : e.parameters().values()) {
                decimals += p.type().equals("DECIMAL") ? 1 : 0;
                assertThat(p.type()).as(s.step()).isIn("DECIMAL", "STRING", "TIMESTAMP", "LONG", "INT", "BOOLEAN");
            }
        }
        assertThat(decimals).as("sequence values bound as DECIMAL").isGreaterThan(10);
    }

    private static DriverCapture.Execution execute(Statement s) throws SQLException {
        try (PreparedStatement ps = s.prepare(driver.connection())) {
            return driver.execute(ps);
        }
    }
}
