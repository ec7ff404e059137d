package dev.itersnap.spi;

import java.sql.PreparedStatement;
import java.sql.SQLException;

/**
 * Binds one value to a parameter of a prepared statement: how a dialect's driver takes the values itersnap binds
 * ({@link Dialect#valueBinder()}). The shared binding is {@link SqlValues#bind}; a dialect whose driver refuses one of
 * its setters binds that type otherwise and hands the rest to it.
 */
@FunctionalInterface
public interface ValueBinder {
    /** Binds {@code value} (null: SQL NULL) to parameter {@code index}, from 1. */
    void bind(PreparedStatement ps, int index, Object value) throws SQLException;
}
