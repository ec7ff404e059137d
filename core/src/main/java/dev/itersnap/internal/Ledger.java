package dev.itersnap.internal;

import dev.itersnap.core.BatchResult;
import dev.itersnap.spi.ResolvedModel;
import dev.itersnap.spi.ValueType;

import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** The ledger of applied batches and the column registry of one model (metadata tables, bound values only). */
final class Ledger {
    /** One applied batch. */
    record Entry(Seq sequence, String runId, String deletionTime, boolean reproduced) {
    }

    /** One known source column and the batch that introduced it (null: there from the first batch). */
    record Column(String name, String introducedText, boolean inSource) {
    }

    private final Jdbc jdbc;
    private final ResolvedModel m;
    private final SqlNames n;

    Ledger(Jdbc jdbc, ResolvedModel m, SqlNames names) {
        this.jdbc = jdbc;
        this.m = m;
        this.n = names;
    }

    /** Applied batches in business order. */
    TreeMap<Seq, Entry> read(ValueType sequenceType) {
        TreeMap<Seq, Entry> out = new TreeMap<>();
        jdbc.query("read ledger", "SELECT " + n.c("sequence_value") + ", " + n.c("run_id") + ", "
                + n.c("deletion_time") + ", " + n.c("reproduced") + " FROM " + n.t("itersnap_ledger") + " WHERE "
                + n.c("model") + " = ?", rs -> {
                    Seq s = Seq.parse(sequenceType, rs.getString(1));
                    out.put(s, new Entry(s, rs.getString(2), rs.getString(3), rs.getBoolean(4)));
                    return null;
                }, m.name());
        return out;
    }

    void record(BatchResult b, Seq seq, String runId, String deletionTime) {
        jdbc.update("record batch", "INSERT INTO " + n.t("itersnap_ledger") + " (" + n.c("model") + ", "
                + n.c("sequence_value") + ", " + n.c("run_id") + ", " + n.c("applied_at") + ", " + n.c("source_rows")
                + ", " + n.c("duplicate_rows") + ", " + n.c("inserted_rows") + ", " + n.c("updated_rows") + ", " + n.c("deleted_rows") + ", "
                + n.c("rejected_rows") + ", " + n.c("deletion_time") + ", " + n.c("reproduced")
                + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", m.name(), seq.text(), runId, LocalDateTime.now(),
                b.sourceRows(), b.duplicateCopies(), b.inserted(), b.updated(), b.deleted(), b.rejected(), deletionTime, b.reproduced());
    }

    /**
     * Removes the ledger entries and error-log rows of rolled-back batches; replaying them logs their set-aside
     * rows again (from the source, or from the archive for batches that aged out).
     */
    void forget(List<Seq> batches) {
        deleteIn("itersnap_ledger", batches);
        deleteIn("itersnap_errors", batches);
    }

    /** The sequences (as text) that have set-aside rows in the error log (rows with a NULL sequence excluded). */
    List<String> loggedSequences() {
        return jdbc.query("read error log", "SELECT DISTINCT " + n.c("sequence_value") + " FROM "
                + n.t("itersnap_errors") + " WHERE " + n.c("model") + " = ? AND " + n.c("sequence_value")
                + " IS NOT NULL", rs -> rs.getString(1), m.name());
    }

    private void deleteIn(String table, List<Seq> seqs) {
        for (int from = 0; from < seqs.size(); from += 500) {
            List<Seq> chunk = seqs.subList(from, Math.min(seqs.size(), from + 500));
            List<Object> binds = new ArrayList<>();
            binds.add(m.name());
            chunk.forEach(s -> binds.add(s.text()));
            jdbc.update("rollback " + table, "DELETE FROM " + n.t(table) + " WHERE " + n.c("model") + " = ? AND "
                    + n.c("sequence_value") + " IN (" + "?, ".repeat(chunk.size() - 1) + "?)", binds.toArray());
        }
    }

    /** The column registry, keyed by column name. */
    Map<String, Column> columns() {
        Map<String, Column> out = new LinkedHashMap<>();
        jdbc.query("read column registry", "SELECT " + n.c("column_name") + ", " + n.c("introduced_seq") + ", "
                + n.c("in_source") + " FROM " + n.t("itersnap_columns") + " WHERE " + n.c("model") + " = ?", rs -> {
                    out.put(rs.getString(1), new Column(rs.getString(1), rs.getString(2), rs.getBoolean(3)));
                    return null;
                }, m.name());
        return out;
    }

    void registerColumn(String column, String introducedText) {
        jdbc.update("register column", "INSERT INTO " + n.t("itersnap_columns") + " (" + n.c("model") + ", "
                + n.c("column_name") + ", " + n.c("introduced_seq") + ", " + n.c("in_source")
                + ") VALUES (?, ?, ?, TRUE)", m.name(), column, introducedText);
    }

    void markInSource(String column, boolean inSource) {
        jdbc.update("register column", "UPDATE " + n.t("itersnap_columns") + " SET " + n.c("in_source") + " = ? WHERE "
                + n.c("model") + " = ? AND " + n.c("column_name") + " = ?", inSource, m.name(), column);
    }
}
