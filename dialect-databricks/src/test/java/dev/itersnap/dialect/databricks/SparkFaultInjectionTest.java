package dev.itersnap.dialect.databricks;

import dev.itersnap.conformance.FaultInjectionTests;
import dev.itersnap.conformance.TestDatabase;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Predicate;

/**
 * Retry safety by fault injection on local Spark + Delta. Every statement is a Spark job there (a replaying run is
 * about 60 statements and 30 s), so the default selection runs only the one-database form (a replay over an aged-out
 * batch, failed and rerun in turn, no fresh scenario per fault point) and fails it, in every build, at the statement
 * of the replay where a failure leaves the most to recover: the roll back's first write to the history (the ledger
 * has forgotten the batches, the history still holds them: recovery must roll them back and the aged-out batch must
 * come from the pending table).
 * {@code -Ditersnap.spark.faults=phases} adds three more: the ledger's forget (the aged-out batch saved in the pending
 * table, nothing forgotten yet), the middle MERGE into the history (part of the replay written and recorded) and the
 * last ledger entry (every write of the last batch done, none recorded).
 * Every statement of the replay scenarios fails in turn on H2 run without transactions (the same engine path) in
 * every build. {@code -Ditersnap.spark.faults=writes} fails every write of the replay here (a failure at a read leaves
 * the state of a failure at the next write); {@code -Ditersnap.spark.all=true} runs the other fault-injection
 * scenarios too (a fresh scenario per statement: hours).
 */
@SparkSelection({"replayOnOneDatabaseSurvivesAFailureAtEveryStatementInTurn"})
class SparkFaultInjectionTest extends FaultInjectionTests {
    @Override
    protected TestDatabase database() {
        return new SparkTestDatabase();
    }

    /**
     * The setup's check against the same files applied in order (a first run in a fresh database, a minute here)
     * runs on H2, twice, and PostgreSQL in every build; with {@code -Ditersnap.spark.all=true} here too.
     */
    @Override
    protected boolean checksTheReplayScenarioInOrder() {
        return Boolean.getBoolean("itersnap.spark.all");
    }

    @Override
    protected boolean injectAt(int k, List<String> script) {
        String mode = System.getProperty("itersnap.spark.faults", "ci");
        if (mode.equals("all")) {
            return true;
        }
        if (mode.equals("writes")) {
            return isWrite(script.get(k - 1));
        }
        List<Integer> points = new ArrayList<>();
        points.add(first(script, sql -> sql.startsWith("delete") && sql.contains("itersnap_ledger")));
        points.add(first(script, sql -> (sql.startsWith("delete") || sql.startsWith("update"))
                && target(sql).contains("snap_customers")));
        List<Integer> merges = all(script, sql -> sql.startsWith("merge") && target(sql).contains("snap_customers"));
        points.add(merges.isEmpty() ? -1 : merges.get(merges.size() / 2));
        List<Integer> ledger = all(script, sql -> sql.startsWith("insert") && target(sql).contains("itersnap_ledger"));
        points.add(ledger.isEmpty() ? -1 : ledger.get(ledger.size() - 1));
        if (mode.equals("ci")) {
            points = List.of(points.get(1));
        }
        if (points.contains(-1)) {
            throw new IllegalStateException("a phase of the replay was not found in its statements " + points + ": "
                    + script);
        }
        return points.contains(k);
    }

    /** The statement's text up to its first USING / SET / WHERE / SELECT / VALUES: where the target is named. */
    private static String target(String sql) {
        int end = sql.length();
        for (String word : new String[] {" using ", " set ", " where ", " select ", " values ", "("}) {
            int i = sql.indexOf(word);
            if (i > 0 && i < end) {
                end = i;
            }
        }
        return sql.substring(0, end);
    }

    private static int first(List<String> script, Predicate<String> p) {
        List<Integer> found = all(script, p);
        return found.isEmpty() ? -1 : found.get(0);
    }

    private static List<Integer> all(List<String> script, Predicate<String> p) {
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < script.size(); i++) {
            if (p.test(script.get(i).strip().toLowerCase(Locale.ROOT))) {
                out.add(i + 1);
            }
        }
        return out;
    }
}
