package dev.itersnap.dialect.postgres;

import dev.itersnap.core.IterativeSnapshot;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.RunResult;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.Statement;

import static org.assertj.core.api.Assertions.assertThat;

class PostgresSmokeTest {
    @Test
    void aliceStory() throws Exception {
        DataSource ds = PostgresServer.get().newDatabase();
        try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
            st.execute("CREATE TABLE raw_customers (id INT, status VARCHAR(20), updated_at TIMESTAMP, file_date DATE)");
        }
        ModelSettings m = ModelSettings.builder("customers").target("snap_customers")
                .source("SELECT * FROM raw_customers").uniqueKey("id").updatedAt("updated_at")
                .sequenceBy("file_date").build();
        IterativeSnapshot snap = IterativeSnapshot.builder().dataSource(ds).build();
        exec(ds, "INSERT INTO raw_customers VALUES (1, 'Active', TIMESTAMP '2024-01-01 09:00:00', DATE '2024-01-01')");
        print(snap.run(m));
        exec(ds, "INSERT INTO raw_customers VALUES (1, 'Gold', TIMESTAMP '2024-01-03 09:00:00', DATE '2024-01-03')");
        print(snap.run(m));
        exec(ds, "INSERT INTO raw_customers VALUES (1, 'Premium', TIMESTAMP '2024-01-02 09:00:00', DATE '2024-01-02')");
        RunResult r = snap.run(m);
        print(r);
        assertThat(r.lateBatchFound()).isTrue();
        dump(ds, "SELECT * FROM snap_customers ORDER BY id, dbt_valid_from");
        dump(ds, "SELECT * FROM itersnap_metadata.itersnap_ledger");
        print(snap.run(m));
    }

    private static void print(RunResult r) {
        System.out.println(r);
    }

    static void exec(DataSource ds, String sql) throws Exception {
        try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }

    static void dump(DataSource ds, String sql) throws Exception {
        try (Connection c = ds.getConnection(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            ResultSetMetaData md = rs.getMetaData();
            while (rs.next()) {
                StringBuilder b = new StringBuilder();
                for (int i = 1; i <= md.getColumnCount(); i++) {
                    b.append(md.getColumnLabel(i)).append('=').append(rs.getString(i)).append("  ");
                }
                System.out.println(b);
            }
        }
    }
}
