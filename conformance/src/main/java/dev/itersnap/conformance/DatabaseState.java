package dev.itersnap.conformance;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Everything a model leaves in the database, read back as plain rows: the history table, the ledger, the error log,
 * the archive, the column registry, the pending table and the run log. Column names are lower-cased, values
 * normalised with {@link SnapshotFixture#normalize}; a table that does not exist reads as null. Identifiers are used
 * unquoted, so the database folds them the way the engine's are folded.
 *
 * @param historyColumns the history table's column names as the database reports them (null: no table)
 * @param archiveColumns the archive's column names, lower case (null: no archive)
 * @param pendingRows    rows in the pending table (null: no pending table)
 */
public record DatabaseState(List<String> historyColumns, List<Map<String, Object>> history,
                            List<Map<String, Object>> ledger, List<Map<String, Object>> errors,
                            List<String> archiveColumns, List<Map<String, Object>> archive,
                            List<Map<String, Object>> registry, Long pendingRows, List<Map<String, Object>> runs) {

    /** Reads the state of model {@code model} with history {@code target} and metadata in {@code metadataSchema}. */
    public static DatabaseState read(DataSource ds, String target, String metadataSchema, String model) {
        try (Connection c = ds.getConnection()) {
            List<String> historyColumns = new ArrayList<>();
            List<Map<String, Object>> history = query(c, "SELECT * FROM " + target, historyColumns);
            List<Map<String, Object>> ledger = query(c, "SELECT * FROM " + metadataSchema
                    + ".itersnap_ledger WHERE model = ?", null, model);
            List<Map<String, Object>> errors = query(c, "SELECT run_id, sequence_value, reason, record FROM "
                    + metadataSchema + ".itersnap_errors WHERE model = ?", null, model);
            List<String> archiveColumns = new ArrayList<>();
            List<Map<String, Object>> archive = query(c, "SELECT * FROM " + metadataSchema + ".itersnap_archive_"
                    + model, archiveColumns);
            List<Map<String, Object>> registry = query(c, "SELECT column_name, introduced_seq, in_source, dropped_after FROM "
                    + metadataSchema + ".itersnap_columns WHERE model = ?", null, model);
            List<Map<String, Object>> pending = query(c, "SELECT COUNT(*) AS n FROM " + metadataSchema
                    + ".itersnap_pending_" + model, null);
            List<Map<String, Object>> runs = query(c, "SELECT run_id, operation, status, batches_applied, "
                    + "late_batch, replay_point FROM " + metadataSchema + ".itersnap_runs WHERE model = ?", null, model);
            return new DatabaseState(history == null ? null : historyColumns, history, ledger, errors,
                    archive == null ? null : archiveColumns.stream().map(s -> s.toLowerCase(Locale.ROOT)).toList(),
                    archive, registry, pending == null ? null : ((Number) pending.get(0).get("n")).longValue(), runs);
        } catch (SQLException e) {
            throw new IllegalStateException("cannot read the database state: " + e.getMessage(), e);
        }
    }

    /** The rows of a query, or null when it fails (a table that does not exist). */
    private static List<Map<String, Object>> query(Connection c, String sql, List<String> labels, Object... binds) {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            SnapshotFixture.bind(ps, binds);
            List<Map<String, Object>> out = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                ResultSetMetaData md = rs.getMetaData();
                if (labels != null) {
                    for (int i = 1; i <= md.getColumnCount(); i++) {
                        labels.add(md.getColumnLabel(i));
                    }
                }
                while (rs.next()) {
                    Map<String, Object> row = new LinkedHashMap<>();
                    for (int i = 1; i <= md.getColumnCount(); i++) {
                        row.put(md.getColumnLabel(i).toLowerCase(Locale.ROOT), SnapshotFixture.normalize(rs.getObject(i)));
                    }
                    out.add(row);
                }
            }
            return out;
        } catch (SQLException e) {
            return null;
        }
    }
}
