package dev.itersnap.cli;

import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class DemoCommandTest {

    @Test
    void detectsTheLateFileAndEndsWithAliceGold() throws Exception {
        Execution demo = Execution.of("demo");

        assertThat(demo.exitCode()).as(demo.err()).isZero();
        assertThat(demo.out())
                .contains("late batch detected: 2024-01-02 < 2024-01-03, replaying from 2024-01-02")
                .contains("Tuesday's file arrived after Wednesday's: itersnap detected it, rolled the history back to"
                        + " 2024-01-02 and replayed.")
                .contains("Alice's history reads in business order: Active -> Premium -> Gold (current: Gold).");

        List<String> alice = new ArrayList<>();
        try (Connection c = DriverManager.getConnection(DemoCommand.JDBC_URL); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT status, dbt_valid_from, dbt_valid_to, dbt_change_type"
                     + " FROM customers_history WHERE customer_id = 1 ORDER BY dbt_valid_from")) {
            while (rs.next()) {
                alice.add(rs.getString(1) + " " + rs.getString(2) + " " + rs.getString(3) + " " + rs.getString(4));
            }
        }
        assertThat(alice).containsExactly(
                "Active 2024-01-01 09:00:00 2024-01-02 14:00:00 update",
                "Premium 2024-01-02 14:00:00 2024-01-03 08:15:00 update",
                "Gold 2024-01-03 08:15:00 null insert");
    }

    @Test
    void canRunTwiceInOneProcess() {
        assertThat(Execution.of("demo").exitCode()).isZero();
        assertThat(Execution.of("demo").exitCode()).isZero();
    }
}
