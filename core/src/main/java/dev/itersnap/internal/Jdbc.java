package dev.itersnap.internal;

import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.ItersnapException;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * Executes the engine's statements on the run's connection. Every failure becomes an {@link ItersnapException}
 * naming the model, the step and the statement. Values are always bound.
 */
final class Jdbc {
    interface Row<T> {
        T map(ResultSet rs) throws SQLException;
    }

    private final Connection connection;
    private final String model;

    Jdbc(Connection connection, String model) {
        this.connection = connection;
        this.model = model;
    }

    Connection connection() {
        return connection;
    }

    int update(String step, String sql, Object... binds) {
        try (PreparedStatement ps = connection.prepareStatement(sql)) {
            bind(ps, binds);
            return ps.executeUpdate();
        } catch (SQLException e) {
            throw failure(step, sql, e);
        }
    }

    /** Like {@link #query}, reading at most the first row. */
    <T> List<T> queryFirst(String step, String sql, Row<T> row, Object... binds) {
        return query(step, sql, 1, row, binds);
    }

    <T> List<T> query(String step, String sql, Row<T> row, Object... binds) {
        return query(step, sql, 0, row, binds);
    }

    private <T> List<T> query(String step, String sql, int maxRows, Row<T> row, Object... binds) {
        try (PreparedStatement ps = connection.prepareStatement(sql)) {
            ps.setMaxRows(maxRows);
            bind(ps, binds);
            List<T> out = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(row.map(rs));
                }
            }
            return out;
        } catch (SQLException e) {
            throw failure(step, sql, e);
        }
    }

    void commit(String step) {
        try {
            if (!connection.getAutoCommit()) {
                connection.commit();
            }
        } catch (SQLException e) {
            throw failure(step, "COMMIT", e);
        }
    }

    void rollbackQuietly() {
        try {
            if (!connection.isClosed() && !connection.getAutoCommit()) {
                connection.rollback();
            }
        } catch (SQLException ignored) {
            // the original failure is what the caller reports
        }
    }

    ItersnapException failure(String step, String sql, SQLException e) {
        return new ItersnapException(ErrorCode.DATABASE_ERROR, "model '" + model + "': step '" + step
                + "' failed: " + firstLine(e.getMessage()) + " [SQLState " + e.getSQLState() + "]", step, sql, e);
    }

    /** The first line of a driver message, without a trailing "SQL statement:" that would dangle without its text. */
    static String firstLine(String s) {
        if (s == null) {
            return "";
        }
        int nl = s.indexOf('\n');
        String line = (nl < 0 ? s : s.substring(0, nl)).strip();
        if (line.endsWith("SQL statement:")) {
            line = line.substring(0, line.length() - "SQL statement:".length()).strip();
        }
        while (line.endsWith(";")) {
            line = line.substring(0, line.length() - 1).strip();
        }
        return line;
    }

    private static void bind(PreparedStatement ps, Object[] binds) throws SQLException {
        for (int i = 0; i < binds.length; i++) {
            ps.setObject(i + 1, binds[i]);
        }
    }
}
