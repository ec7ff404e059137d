package dev.itersnap.dialect.databricks;

import dev.itersnap.IterativeSnapshot;
import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.RunResult;
import dev.itersnap.core.TableName;
import dev.itersnap.spi.SourceColumn;
import dev.itersnap.spi.Statement;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import scala.Option;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Types;
import java.util.List;
import java.util.Map;
import java.util.TimeZone;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * How itersnap behaves in the Spark runtime it is given (issue 17): in the caller's own session (its temporary views
 * are sources) with the session's settings put back; validity times and ledger texts independent of the session's
 * and the JVM's time zone; Unity Catalog style three-part names folded to lower case; the Delta table properties
 * (row-level concurrency on the shared tables, none on the lease, type widening only when a column widens);
 * non-binary collations refused. Runs on Spark 4.x and 3.5 (the collation test needs 4.x).
 */
class SparkRuntimeTest {
    private static final String CALLER_ZONE = "America/New_York";

    private static String conf(SparkSession s, String key) {
        Option<String> v = s.conf().getOption(key);
        return v.isDefined() ? v.get() : "<unset>";
    }

    /**
     * One run of a model whose source is a temporary view of the caller's session, with the caller's session in New
     * York and the JVM in Kolkata while it runs: the batch's TIMESTAMP sequence (an instant) is recorded as its UTC
     * time, validity times are the UTC wall-clock of the instants, and afterwards the caller's session has its own
     * time zone, parameter setting and current schema again. The names are three-part and mixed case.
     */
    @Test
    void runsInTheCallersSessionInUtcAndPutsItsSettingsBack() throws SQLException {
        SparkSession caller = SparkTestSession.get();
        String zoneBefore = conf(caller, SparkScope.TIME_ZONE);
        String constantsBefore = conf(caller, SparkScope.CONSTANTS_ONLY);
        String schemaBefore = caller.catalog().currentDatabase();
        TimeZone jvm = TimeZone.getDefault();
        caller.sql("DROP SCHEMA IF EXISTS rt_hist CASCADE");
        caller.sql("DROP SCHEMA IF EXISTS rt_meta CASCADE");
        caller.conf().set(SparkScope.TIME_ZONE, CALLER_ZONE);
        try {
            caller.sql("CREATE OR REPLACE TEMPORARY VIEW rt_exports AS SELECT * FROM VALUES "
                    + "(1, 'gold', TIMESTAMP'2024-03-01 06:00:00Z', TIMESTAMP'2024-03-01 00:00:00Z'), "
                    + "(2, 'silver', TIMESTAMP'2024-03-01 23:30:00Z', TIMESTAMP'2024-03-01 00:00:00Z') "
                    + "AS t(customer_id, tier, updated_at, file_time)");
            TimeZone.setDefault(TimeZone.getTimeZone("Asia/Kolkata"));
            ModelSettings model = ModelSettings.builder("RtCustomers").target("Spark_Catalog.RT_Hist.Customers")
                    .metadataSchema("spark_catalog.RT_Meta").source("SELECT * FROM rt_exports")
                    .uniqueKey("customer_id").updatedAt("updated_at").sequenceBy("file_time").build();
            IterativeSnapshot snapshots = IterativeSnapshot.builder().dataSource(SparkDataSource.of(caller))
                    .dialect("databricks").listener(event -> { }).build();
            RunResult r = snapshots.run(model);
            assertThat(r.batchesApplied()).isEqualTo(1);
            // a second run finds the history it owns by the owner's comment, which names the catalog-qualified
            // metadata schema (it was read only up to the first period)
            assertThat(snapshots.run(model).batchesApplied()).isZero();
            // doctor's table files line: DESCRIBE DETAIL of the model's tables that exist
            dev.itersnap.core.Check files = snapshots.check(model).checks().stream()
                    .filter(c -> c.name().equals("table files")).findFirst().orElseThrow();
            assertThat(files.passed()).isTrue();
            assertThat(files.detail()).matches("\\d+ data files: customers \\d+ \\(.*itersnap_ledger \\d+ .*");
        } finally {
            TimeZone.setDefault(jvm);
        }
        try {
            assertThat(conf(caller, SparkScope.TIME_ZONE)).isEqualTo(CALLER_ZONE);
            assertThat(conf(caller, SparkScope.CONSTANTS_ONLY)).isEqualTo(constantsBefore);
            assertThat(caller.catalog().currentDatabase()).isEqualTo(schemaBefore);
            // lower-case names in the catalog, in the target's catalog
            assertThat(caller.catalog().tableExists("spark_catalog.rt_hist.customers")).isTrue();
            assertThat(caller.catalog().tableExists("spark_catalog.rt_meta.itersnap_ledger")).isTrue();
            caller.conf().set(SparkScope.TIME_ZONE, "UTC");
            List<Row> ledger = caller.sql("SELECT sequence_value FROM rt_meta.itersnap_ledger").collectAsList();
            assertThat(ledger).extracting(row -> row.getString(0)).containsExactly("2024-03-01T00:00");
            Map<Integer, String> validFrom = new TreeMap<>();
            caller.sql("SELECT customer_id, CAST(dbt_valid_from AS STRING) FROM rt_hist.customers").collectAsList()
                    .forEach(row -> validFrom.put(row.getInt(0), row.getString(1)));
            assertThat(validFrom).containsExactly(Map.entry(1, "2024-03-01 06:00:00"),
                    Map.entry(2, "2024-03-01 23:30:00"));
            // row-level concurrency (deletion vectors) on the shared tables and the history, none on the lease, row
            // tracking left to the workspace, no type widening yet
            assertThat(properties(caller, "rt_hist.customers")).containsEntry("delta.enableDeletionVectors", "true")
                    .doesNotContainKey("delta.enableRowTracking").doesNotContainKey("delta.enableTypeWidening");
            assertThat(properties(caller, "rt_meta.itersnap_runs"))
                    .containsEntry("delta.enableDeletionVectors", "true");
            assertThat(properties(caller, "rt_meta.itersnap_lease"))
                    .containsEntry("delta.enableDeletionVectors", "false")
                    .containsEntry("delta.enableRowTracking", "false");
        } finally {
            if (zoneBefore.equals("<unset>")) {
                caller.conf().unset(SparkScope.TIME_ZONE);
            } else {
                caller.conf().set(SparkScope.TIME_ZONE, zoneBefore);
            }
        }
        // widening a column enables type widening first, on that table only
        DatabricksDialect dialect = new DatabricksDialect();
        TableName history = new TableName(List.of("spark_catalog", "rt_hist", "customers"));
        SparkDataSource ds = SparkDataSource.of(caller);
        try (Connection c = ds.getConnection()) {
            for (Statement st : dialect.prepareWidening(history)) {
                c.createStatement().execute(st.sql());
            }
            assertThat(properties(caller, "rt_hist.customers")).containsEntry("delta.enableTypeWidening", "true");
            assertThat(properties(caller, "rt_meta.itersnap_ledger")).doesNotContainKey("delta.enableTypeWidening");
            // INT to BIGINT needs Delta 4 (Delta 3.3's preview widens only BYTE/SHORT/INT among themselves)
            if (!caller.version().startsWith("3.")) {
                c.createStatement().execute(dialect.widenColumn(history, "customer_id",
                        new SourceColumn("customer_id", Types.BIGINT, "BIGINT", 19, 0)).sql());
                assertThat(caller.table("rt_hist.customers").schema().apply("customer_id").dataType().sql())
                        .isEqualTo("BIGINT");
            }
        }
    }

    private static Map<String, String> properties(SparkSession s, String table) {
        Map<String, String> out = new TreeMap<>();
        s.sql("SHOW TBLPROPERTIES " + table).collectAsList().forEach(r -> out.put(r.getString(0), r.getString(1)));
        return out;
    }

    /** A key compared case-insensitively would merge keys A and a: refused before anything is written. */
    @Test
    void aKeyWithACaseInsensitiveCollationIsRefusedNamingTheColumnAndTheCollation() {
        SparkSession spark = SparkTestSession.get();
        assumeTrue(!spark.version().startsWith("3."), "collations need Spark 4.0 or Databricks Runtime 16.1");
        spark.sql("CREATE SCHEMA IF NOT EXISTS rt_coll");
        // open-source Delta stores no collated columns; the source query gives the key its collation
        spark.sql("CREATE OR REPLACE TABLE rt_coll.raw (code STRING, note STRING, updated_at TIMESTAMP, "
                + "file_date DATE) USING DELTA");
        ModelSettings model = ModelSettings.builder("codes").target("rt_coll.codes_history")
                .metadataSchema("rt_coll_meta").source("SELECT code COLLATE UTF8_LCASE AS code, note, updated_at, "
                        + "file_date FROM rt_coll.raw").uniqueKey("code")
                .updatedAt("updated_at").sequenceBy("file_date").build();
        IterativeSnapshot snapshots = IterativeSnapshot.builder().dataSource(SparkDataSource.of(spark))
                .dialect("databricks").listener(event -> { }).build();
        assertThatThrownBy(() -> snapshots.run(model)).isInstanceOf(ItersnapException.class)
                .satisfies(e -> assertThat(((ItersnapException) e).code()).isEqualTo(ErrorCode.INVALID_SOURCE))
                .hasMessageContaining("source column 'code' (unique_key) has collation UTF8_LCASE")
                .hasMessageContaining("COLLATE UTF8_BINARY");
        assertThat(spark.catalog().tableExists("rt_coll_meta.itersnap_ledger")).as("nothing written").isFalse();
    }

    /** IterativeSnapshot.check (itersnap doctor) on local Spark: every check passes, the probe tables are gone. */
    @Test
    void theDoctorChecksEverythingARunNeedsOnSpark() {
        SparkSession spark = SparkTestSession.get();
        spark.sql("CREATE SCHEMA IF NOT EXISTS rt_doc");
        spark.sql("CREATE OR REPLACE TABLE rt_doc.raw (id BIGINT, status STRING, updated_at TIMESTAMP, "
                + "file_date DATE) USING DELTA");
        ModelSettings model = ModelSettings.builder("doc").target("rt_doc_hist.doc_history")
                .metadataSchema("rt_doc_meta").source("SELECT * FROM rt_doc.raw").uniqueKey("id")
                .updatedAt("updated_at").sequenceBy("file_date").build();
        dev.itersnap.core.CheckReport report = IterativeSnapshot.builder().dataSource(SparkDataSource.of(spark))
                .dialect("databricks").build().check(model);
        report.checks().forEach(System.out::println); // the transcript in docs/dev/databricks-workspace.md
        assertThat(report.failures()).as(report.checks().toString()).isEmpty();
        assertThat(report.checks()).extracting(dev.itersnap.core.Check::name).containsExactly("connection",
                "runtime", "session time zone", "source", "collation", "create in metadata schema", "binding",
                "create in target schema", "table files");
        assertThat(report.checks().get(8).detail()).isEqualTo("no tables of this model yet");
        assertThat(report.checks().get(2).detail()).isEqualTo("UTC");
        assertThat(spark.catalog().tableExists("rt_doc_meta.itersnap_probe_doc")).isFalse();
        assertThat(spark.catalog().tableExists("rt_doc_hist.itersnap_probe_doc")).isFalse();
    }
}
