package dev.itersnap.cli;

import dev.itersnap.dialect.postgres.PostgresServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.sql.DataSource;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.TimeZone;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code itersnap doctor} on file-based H2 and on PostgreSQL: a line per check, exit 0 or 2, only a probe table. */
class DoctorCommandTest {
    @TempDir
    Path dir;

    @Test
    void everyCheckPassesOnH2AndOnlyTheProbeTableCameAndWent() throws Exception {
        H2Model db = new H2Model(dir, "metadata_schema: ops\n");
        Files.writeString(db.config, Files.readString(db.config).replace("target: customers_history",
                "target: hist.customers_history"));
        TimeZone jvm = TimeZone.getDefault();
        Execution e;
        try {
            TimeZone.setDefault(TimeZone.getTimeZone("America/New_York")); // the probe's 02:30 does not exist there
            e = db.cli("doctor");
        } finally {
            TimeZone.setDefault(jvm);
        }
        assertThat(e.exitCode()).as(e.out() + e.err()).isZero();
        assertThat(e.out()).startsWith("doctor: model customers -> hist.customers_history")
                .containsPattern("(?m)^ok    connection: H2 .* through H2 JDBC Driver .*; dialect h2$")
                .contains("ok    source: 5 columns; sequence_by FILE_DATE (DATE), updated_at UPDATED_AT (TIMESTAMP)")
                .contains("ok    collation: string columns compare binary: STATUS CHARACTER VARYING")
                .contains("ok    create in metadata schema: created OPS.ITERSNAP_PROBE_CUSTOMERS")
                .contains("ok    create in target schema: created HIST.ITERSNAP_PROBE_CUSTOMERS")
                .contains("ok    binding: text, boolean, bigint, int, decimal, date, timestamp and NULL")
                .contains("ok    write delay: WRITE_DELAY ")
                .endsWith("all 7 checks passed" + System.lineSeparator());
        assertThat(db.rows("SELECT table_schema || '.' || table_name FROM information_schema.tables WHERE "
                + "table_schema NOT IN ('INFORMATION_SCHEMA') ORDER BY 1")).containsExactly("PUBLIC.RAW_CUSTOMERS|");
    }

    @Test
    void aFailingCheckIsALineAndExitCodeTwo() throws Exception {
        H2Model db = new H2Model(dir);
        Files.writeString(db.config, Files.readString(db.config).replace("sequence_by: file_date",
                "sequence_by: file_day"));
        Execution e = db.cli("doctor");
        assertThat(e.exitCode()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(e.out()).containsPattern("(?m)^ok    connection: ")
                .contains("FAIL  source: model 'customers': setting 'sequence_by' names column 'file_day'")
                .endsWith("1 of 3 checks failed" + System.lineSeparator());
    }

    @Test
    void noDatabaseIsAFailedConnectionCheck() {
        Execution e = Execution.of("doctor", "--jdbc-url", "jdbc:postgresql://127.0.0.1:9/none", "--config",
                writeConfig().toString());
        assertThat(e.exitCode()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(e.out()).contains("FAIL  connection: ").endsWith("1 of 1 checks failed" + System.lineSeparator());
    }

    private Path writeConfig() {
        try {
            return Files.writeString(dir.resolve("m.yml"), """
                    name: customers
                    target: customers_history
                    source: SELECT 1 AS k, CURRENT_DATE AS d, CURRENT_TIMESTAMP AS u
                    unique_key: k
                    updated_at: u
                    sequence_by: d
                    """);
        } catch (java.io.IOException ex) {
            throw new java.io.UncheckedIOException(ex);
        }
    }

    @Test
    void everyCheckPassesOnPostgres() throws Exception {
        DataSource database = PostgresServer.get().newDatabase();
        try {
            try (Connection c = database.getConnection(); Statement s = c.createStatement()) {
                s.execute("CREATE TABLE raw_customers (customer_id INT, status VARCHAR(20), updated_at TIMESTAMP,"
                        + " file_date DATE)");
            }
            Path config = Files.writeString(dir.resolve("pg.yml"), """
                    name: customers
                    target: hist.customers_history
                    source: SELECT * FROM raw_customers
                    unique_key: customer_id
                    updated_at: updated_at
                    sequence_by: file_date
                    metadata_schema: ops
                    """);
            List<String> args = new ArrayList<>(List.of("doctor"));
            args.addAll(PostgresCommandsTest.connectionOptions(database));
            args.addAll(List.of("--config", config.toString()));
            Execution e = Execution.of(args.toArray(String[]::new));
            assertThat(e.exitCode()).as(e.out() + e.err()).isZero();
            assertThat(e.out()).containsPattern("(?m)^ok    connection: PostgreSQL 1\\d.* through PostgreSQL JDBC Driver")
                    .contains("ok    create in metadata schema: created ops.itersnap_probe_customers")
                    .contains("ok    binding: ").endsWith("all 6 checks passed" + System.lineSeparator());
            try (Connection c = database.getConnection(); Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery("SELECT count(*) FROM information_schema.tables WHERE table_name "
                         + "LIKE 'itersnap%'")) {
                rs.next();
                assertThat(rs.getInt(1)).as("probe tables dropped").isZero();
            }
        } finally {
            PostgresServer.get().drop(database);
        }
    }
}
