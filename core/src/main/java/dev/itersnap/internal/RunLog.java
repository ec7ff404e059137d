package dev.itersnap.internal;

import dev.itersnap.spi.ResolvedModel;

import java.lang.management.ManagementFactory;
import java.time.LocalDateTime;
import java.util.List;

/** The run log of one model: one row per run, written with autocommit outside the batch transactions. */
final class RunLog {
    private final Jdbc jdbc;
    private final ResolvedModel m;
    private final SqlNames n;

    RunLog(Jdbc jdbc, ResolvedModel m, SqlNames names) {
        this.jdbc = jdbc;
        this.m = m;
        this.n = names;
    }

    static String holder() {
        String jvm = ManagementFactory.getRuntimeMXBean().getName();
        return jvm + " thread " + Thread.currentThread().getName();
    }

    /** Status of the model's most recent run before this one, or null. */
    String previousStatus(String runId) {
        List<String> s = jdbc.queryFirst("read run log", "SELECT " + n.c("status") + " FROM " + n.t("itersnap_runs")
                + " WHERE " + n.c("model") + " = ? AND " + n.c("run_id") + " <> ? ORDER BY " + n.c("started_at")
                + " DESC", rs -> rs.getString(1), m.name(), runId);
        return s.isEmpty() ? null : s.get(0);
    }

    /** The logic of the last successful run that recorded one: run id, start, logic text; or null. */
    String[] lastSuccessfulLogic(String runId) {
        List<String[]> s = jdbc.queryFirst("read run log", "SELECT " + n.c("run_id") + ", " + n.c("started_at") + ", "
                + n.c("logic") + " FROM " + n.t("itersnap_runs") + " WHERE " + n.c("model") + " = ? AND "
                + n.c("run_id") + " <> ? AND " + n.c("status") + " = 'success' AND " + n.c("logic")
                + " IS NOT NULL ORDER BY " + n.c("started_at") + " DESC", rs -> new String[] {rs.getString(1),
                String.valueOf(rs.getObject(2)), rs.getString(3)}, m.name(), runId);
        return s.isEmpty() ? null : s.get(0);
    }

    /** Describes the run holding the lock, from the log (best effort: used in a lock-timeout message). */
    String describeRunning() {
        try {
            List<String> s = jdbc.query("read run log", "SELECT " + n.c("run_id") + ", " + n.c("holder") + ", "
                    + n.c("started_at") + " FROM " + n.t("itersnap_runs") + " WHERE " + n.c("model") + " = ? AND "
                    + n.c("status") + " = 'running' ORDER BY " + n.c("started_at") + " DESC",
                    rs -> "run " + rs.getString(1) + " by " + rs.getString(2) + " since " + rs.getObject(3),
                    m.name());
            return s.isEmpty() ? "holder unknown" : s.get(0);
        } catch (RuntimeException e) {
            return "holder unknown";
        }
    }

    void started(String runId, String operation) {
        jdbc.update("log run", "INSERT INTO " + n.t("itersnap_runs") + " (" + n.c("run_id") + ", " + n.c("model")
                + ", " + n.c("operation") + ", " + n.c("holder") + ", " + n.c("started_at") + ", " + n.c("status")
                + ", " + n.c("logic") + ") VALUES (?, ?, ?, ?, ?, 'running', ?)", runId, m.name(), operation, holder(),
                LocalDateTime.now(), m.settings().logic());
        jdbc.commit("log run");
    }

    void finished(String runId, String status, int batches, boolean late, String replayPoint, String error) {
        jdbc.update("log run", "UPDATE " + n.t("itersnap_runs") + " SET " + n.c("finished_at") + " = ?, "
                + n.c("status") + " = ?, " + n.c("batches_applied") + " = ?, " + n.c("late_batch") + " = ?, "
                + n.c("replay_point") + " = ?, " + n.c("error_message") + " = ? WHERE " + n.c("run_id") + " = ?",
                LocalDateTime.now(), status, batches, late, replayPoint,
                error == null ? null : error.substring(0, Math.min(3900, error.length())), runId);
        jdbc.commit("log run");
    }
}
