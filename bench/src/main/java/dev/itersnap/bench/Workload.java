package dev.itersnap.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.LocalDate;

/**
 * The data set, generated in the database by SQL (no row goes through the JVM), and the two hand-written baselines.
 *
 * <p>Main batch {@code b} (0, 1, 2, ...) is dated {@code 2024-01-01 + 10*b days} (ten days apart, so that late
 * batches can be dated between two main batches; only the order matters). It is a full picture of every key 1..K
 * except the ~d% absent from it. Key k's version at batch b is v = the number of batches in 1..b at which it changed;
 * it changes at batch b when b ≡ phase(k) (mod P), P = round(100 / c), so c% of keys change per batch. Its columns
 * are functions of (k, v), its {@code updated_at} is 12 hours before the batch of its last change. Key k is absent
 * from batch b when (k * 104729 + b) ≡ 0 (mod D), D = round(100 / d): it is deleted there and returns the next batch.
 * Each batch also holds exact copies of a few rows (ids 1..dups), which every contender applies once.
 */
final class Workload {
    static final LocalDate BASE = LocalDate.of(2024, 1, 1);

    private final Database db;
    private final long keys;
    private final int changePeriod;
    private final int deletePeriod;
    private final int dups;

    Workload(Database db, long keys, double changePct, double deletePct, int dups) {
        this.db = db;
        this.keys = keys;
        this.changePeriod = Math.max(1, (int) Math.round(100 / changePct));
        this.deletePeriod = Math.max(1, (int) Math.round(100 / deletePct));
        this.dups = dups;
    }

    static LocalDate mainDate(int b) {
        return BASE.plusDays(10L * b);
    }

    void createRaw() throws SQLException {
        exec("CREATE TABLE raw (id BIGINT NOT NULL, status VARCHAR(16), tier INTEGER, amount DECIMAL(12,2), "
                + "updated_at TIMESTAMP, batch_date DATE NOT NULL)");
        if (db.indexes()) {
            exec("CREATE INDEX raw_batch ON raw (batch_date, id)");
        }
    }

    /** Inserts main batch {@code b}. */
    void insertMainBatch(int b) throws SQLException {
        insertBatch(b, mainDate(b));
    }

    /** Inserts, dated {@code date}, a full batch whose contents are those of main batch {@code contentBatch}. */
    void insertBatch(int contentBatch, LocalDate date) throws SQLException {
        int p = changePeriod;
        String phase = "CASE WHEN MOD(k * 7919, " + p + ") = 0 THEN " + p + " ELSE MOD(k * 7919, " + p + ") END";
        String versioned = "SELECT k, pe, CASE WHEN " + contentBatch + " >= pe THEN " + db.intDiv(contentBatch + " - pe", String.valueOf(p))
                + " + 1 ELSE 0 END AS v FROM (SELECT k, " + phase + " AS pe FROM " + db.keySeries(keys) + ") ph";
        String sql = "INSERT INTO raw (id, status, tier, amount, updated_at, batch_date) SELECT k, "
                + "CASE MOD(k + v, 4) WHEN 0 THEN 'active' WHEN 1 THEN 'paused' WHEN 2 THEN 'trial' ELSE 'churned' END, "
                + "CAST(MOD(k * 3 + v, 5) AS INTEGER), CAST(MOD(k * 31 + v * 17, 100000) AS DECIMAL(12,2)) / 100, "
                + "CASE WHEN v = 0 THEN TIMESTAMP '2023-12-31 00:00:00' ELSE "
                + db.plusHours("(pe + (v - 1) * " + p + ") * 240 - 12") + " END, " + date(date) + " FROM ("
                + versioned + ") kv "
                + "WHERE MOD(k * 104729 + " + contentBatch + ", " + deletePeriod + ") <> 0";
        try (Connection c = db.dataSource().getConnection()) {
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                if (!inlined()) {
                    ps.setObject(1, date);
                }
                ps.executeUpdate();
            }
            try (PreparedStatement ps = c.prepareStatement(
                    "INSERT INTO raw SELECT * FROM raw WHERE batch_date = " + date(date) + " AND id <= " + dups)) {
                if (!inlined()) {
                    ps.setObject(1, date);
                }
                ps.executeUpdate();
            }
        }
    }

    /**
     * Spark leaves a parameter of an {@code INSERT ... SELECT}'s select list unbound: there the harness writes its own
     * generated dates as literals (none comes from outside), elsewhere it binds them.
     */
    private boolean inlined() {
        return db.name().equals("spark");
    }

    /** A parameter marker, or on Spark the date as a literal ({@link #inlined}). */
    private String date(LocalDate date) {
        return inlined() ? "DATE '" + date + "'" : "?";
    }

    // ---------------------------------------------------------------------------------------------- baselines

    /** The floor's history table, initialised from a full recompute table. */
    void createFloorFrom(String recomputed) throws SQLException {
        exec("DROP TABLE IF EXISTS floor_hist");
        exec("CREATE TABLE floor_hist AS SELECT * FROM " + recomputed);
        if (db.indexes()) {
            exec("CREATE INDEX floor_hist_id ON floor_hist (id)");
        }
        db.analyze("floor_hist");
    }

    /**
     * The floor: a textbook SCD2 MERGE applying one full batch (close changed versions, insert new versions and new
     * keys) plus the UPDATE closing keys absent from the batch, in one transaction.
     */
    void floorApply(LocalDate seq) throws SQLException {
        String batch = "(SELECT DISTINCT id, status, tier, amount, updated_at FROM raw WHERE batch_date = ?)";
        String changed = "c.status <> s.status OR c.tier <> s.tier OR c.amount <> s.amount";
        String merge = "MERGE INTO floor_hist t USING ("
                + "SELECT s.id AS mkey, s.id, s.status, s.tier, s.amount, s.updated_at FROM " + batch + " s "
                + "UNION ALL SELECT NULL, s.id, s.status, s.tier, s.amount, s.updated_at FROM " + batch + " s "
                + "JOIN floor_hist c ON c.id = s.id AND c.valid_to IS NULL WHERE " + changed
                + ") src ON t.id = src.mkey AND t.valid_to IS NULL "
                + "WHEN MATCHED AND (t.status <> src.status OR t.tier <> src.tier OR t.amount <> src.amount) THEN "
                + "UPDATE SET valid_to = src.updated_at, change_type = 'update' "
                + "WHEN NOT MATCHED THEN INSERT (id, status, tier, amount, updated_at, valid_from, valid_to, change_type, "
                + "opened_seq) VALUES (src.id, src.status, src.tier, src.amount, src.updated_at, src.updated_at, NULL, "
                + "'insert', ?)";
        String deletes = "UPDATE floor_hist SET valid_to = ?, change_type = 'delete' WHERE valid_to IS NULL "
                + "AND NOT EXISTS (SELECT 1 FROM raw r WHERE r.batch_date = ? AND r.id = floor_hist.id)";
        if (inlined()) {
            // Delta runs no UPDATE with a subquery and has no transaction across statements: the closing of absent
            // keys is the same MERGE's WHEN NOT MATCHED BY SOURCE, so the batch is one statement and one commit, as
            // a dbt snapshot's MERGE on Databricks is (its dates written as literals, as dbt writes them)
            exec(merge.replace("?", date(seq)) + " WHEN NOT MATCHED BY SOURCE AND t.valid_to IS NULL "
                    + "THEN UPDATE SET valid_to = TIMESTAMP '" + seq + " 00:00:00', change_type = 'delete'");
            return;
        }
        try (Connection c = db.dataSource().getConnection()) {
            c.setAutoCommit(false);
            try (PreparedStatement ps = c.prepareStatement(merge)) {
                ps.setObject(1, seq);
                ps.setObject(2, seq);
                ps.setObject(3, seq);
                ps.executeUpdate();
            }
            try (PreparedStatement ps = c.prepareStatement(deletes)) {
                ps.setTimestamp(1, Timestamp.valueOf(seq.atStartOfDay()));
                ps.setObject(2, seq);
                ps.executeUpdate();
            }
            c.commit();
            c.setAutoCommit(true);
        }
    }

    /**
     * The usual workaround: rebuild the whole history from every raw batch with window functions (LAG/LEAD over key
     * and batch order): a version starts where a key appears after an absence or with changed values; it ends at the
     * next start in the same presence run (update), at the batch after its run (delete), or stays open.
     */
    void fullRecompute(String table) throws SQLException {
        exec("DROP TABLE IF EXISTS " + table);
        exec("DROP TABLE IF EXISTS " + table + "_b");
        exec("CREATE TABLE " + table + "_b AS SELECT batch_date, ROW_NUMBER() OVER (ORDER BY batch_date) AS bn, "
                + "COUNT(*) OVER () AS max_bn FROM (SELECT DISTINCT batch_date FROM raw) t");
        String w = "OVER (PARTITION BY r0.id ORDER BY b.bn)";
        String r1 = "SELECT r0.id, r0.status, r0.tier, r0.amount, r0.updated_at, r0.batch_date, b.bn, b.max_bn, "
                + "b.bn - ROW_NUMBER() " + w + " AS grp, LAG(b.bn) " + w + " AS lag_bn, LAG(r0.status) " + w
                + " AS lag_status, LAG(r0.tier) " + w + " AS lag_tier, LAG(r0.amount) " + w + " AS lag_amount "
                + "FROM (SELECT DISTINCT id, status, tier, amount, updated_at, batch_date FROM raw) r0 "
                + "JOIN " + table + "_b b ON b.batch_date = r0.batch_date";
        String r2 = "SELECT r1.*, MAX(r1.bn) OVER (PARTITION BY r1.id, r1.grp) AS run_end FROM (" + r1 + ") r1";
        String starts = "SELECT r2.* FROM (" + r2 + ") r2 WHERE r2.lag_bn IS NULL OR r2.lag_bn <> r2.bn - 1 "
                + "OR r2.status <> r2.lag_status OR r2.tier <> r2.lag_tier OR r2.amount <> r2.lag_amount";
        String x = "SELECT s.*, LEAD(s.grp) OVER (PARTITION BY s.id ORDER BY s.bn) AS next_grp, "
                + "LEAD(s.updated_at) OVER (PARTITION BY s.id ORDER BY s.bn) AS next_ua FROM (" + starts + ") s";
        exec("CREATE TABLE " + table + " AS SELECT x.id, x.status, x.tier, x.amount, x.updated_at, "
                + "CASE WHEN x.lag_bn IS NOT NULL AND x.lag_bn <> x.bn - 1 "
                + "THEN GREATEST(x.updated_at, CAST(d2.batch_date AS TIMESTAMP)) ELSE x.updated_at END AS valid_from, "
                + "CASE WHEN x.next_grp = x.grp THEN x.next_ua WHEN x.run_end < x.max_bn "
                + "THEN CAST(d.batch_date AS TIMESTAMP) END AS valid_to, "
                + "CASE WHEN x.next_grp = x.grp THEN 'update' WHEN x.run_end < x.max_bn THEN 'delete' "
                + "ELSE 'insert' END AS change_type, x.batch_date AS opened_seq "
                + "FROM (" + x + ") x LEFT JOIN " + table + "_b d ON d.bn = x.run_end + 1 "
                + "LEFT JOIN " + table + "_b d2 ON d2.bn = x.lag_bn + 1");
    }

    /** The bare discovery query of scenario 3: distinct sequences in the source, read to the end. */
    /**
     * The bare aggregate a no-op run with fingerprints compares with: each batch's rows and content hash, hand-written
     * as the engine computes them (every column, in name order, as text prefixed with its length, NULL as 'N'; a
     * 64-bit hash of the row's text, the distinct ones summed as a DECIMAL), in one {@code GROUP BY}, read to the end.
     */
    int fingerprintAggregate() throws SQLException {
        String text = "CAST(%s AS " + db.textType() + ")";
        StringBuilder row = new StringBuilder();
        for (String c : new String[] {"amount", "batch_date", "id", "status", "tier", "updated_at"}) {
            String t = String.format(text, c);
            row.append(row.length() == 0 ? "" : " || ").append("COALESCE('V' || CAST(LENGTH(").append(t)
                    .append(") AS " + db.textType() + ") || ':' || ").append(t).append(", 'N')");
        }
        String hash = switch (db.name()) {
            case "h2" -> "CAST(SUBSTRING(HASH('SHA-256', " + row + "), 1, 8) AS BIGINT)";
            case "spark" -> "xxhash64(" + row + ")";
            case "duckdb" -> "CAST(CAST(md5_number_lower(" + row + ") AS HUGEINT) - 9223372036854775808 AS BIGINT)";
            default -> "hashtextextended(" + row + ", 0)";
        };
        int n = 0;
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT batch_date, COUNT(*), SUM(DISTINCT CAST(" + hash + " AS DECIMAL(20, 0))) "
                     + "FROM raw GROUP BY batch_date")) {
            while (rs.next()) {
                n++;
            }
        }
        return n;
    }

    int distinctSequences() throws SQLException {
        int n = 0;
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT DISTINCT batch_date FROM raw")) {
            while (rs.next()) {
                n++;
            }
        }
        return n;
    }

    /**
     * The keys whose row in the batch dated {@code batch} differs (in any column, {@code updated_at} included) from
     * their row in the batch dated just before it in raw, or that only one of the two holds: with full batches,
     * exactly the keys that applying {@code batch} right after its predecessor changes (updated, deleted, returned).
     */
    long keysChanged(LocalDate batch) throws SQLException {
        String cols = "SELECT id, status, tier, amount, updated_at FROM raw WHERE batch_date = ";
        String a = cols + "(SELECT MAX(batch_date) FROM raw WHERE batch_date < DATE '" + batch + "')";
        String b = cols + "DATE '" + batch + "'";
        return count("SELECT COUNT(DISTINCT id) FROM ((" + a + " EXCEPT " + b + ") UNION ALL (" + b + " EXCEPT " + a
                + ")) d");
    }

    /**
     * What the parameters predict for {@link #keysChanged} of a main batch (and of a late copy of one): a key changes
     * at one batch in P, is absent from one in D and returns the batch after: K/P + 2K/D, overlaps aside.
     */
    long expectedKeysChanged() {
        return Math.round((double) keys / changePeriod + 2.0 * keys / deletePeriod);
    }

    long count(String sql) throws SQLException {
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    void exec(String sql) throws SQLException {
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }
}
