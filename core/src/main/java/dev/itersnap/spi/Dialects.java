package dev.itersnap.spi;

import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.ItersnapException;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;
import java.util.stream.Collectors;

/** Finds dialects on the class path through {@link ServiceLoader} ({@code META-INF/services/dev.itersnap.spi.Dialect}). */
public final class Dialects {
    private Dialects() {
    }

    /** Every dialect on the class path. */
    public static List<Dialect> available() {
        List<Dialect> all = new ArrayList<>();
        ServiceLoader.load(Dialect.class, Dialects.class.getClassLoader()).forEach(all::add);
        return all;
    }

    /** The dialect called {@code name} ({@code h2}, {@code postgres}, {@code databricks}). */
    public static Dialect named(String name) {
        for (Dialect d : available()) {
            if (d.name().equalsIgnoreCase(name)) {
                return d;
            }
        }
        throw new ItersnapException(ErrorCode.NO_DIALECT, "no dialect named '" + name + "' on the class path; "
                + describeAvailable());
    }

    /** The dialect for this data source: by JDBC URL, then by database product name. */
    public static Dialect detect(DataSource dataSource) {
        try (Connection c = dataSource.getConnection()) {
            var md = c.getMetaData();
            String url = md.getURL();
            String product = md.getDatabaseProductName();
            List<Dialect> all = available();
            for (Dialect d : all) {
                if (url != null && d.handlesUrl(url)) {
                    return d;
                }
            }
            for (Dialect d : all) {
                if (product != null && d.handlesProduct(product)) {
                    return d;
                }
            }
            throw new ItersnapException(ErrorCode.NO_DIALECT, "no itersnap dialect on the class path handles " + product
                    + " (" + url + "); " + describeAvailable() + ". Add the dialect module for this database (artifact "
                    + "dev.itersnap:itersnap-dialect-<name>, or one of your own registered in META-INF/services/"
                    + Dialect.class.getName() + "), or name a dialect in the builder");
        } catch (SQLException e) {
            throw new ItersnapException(ErrorCode.DATABASE_ERROR,
                    "cannot open a connection to detect the dialect: " + e.getMessage(), e);
        }
    }

    /**
     * Refuses a dialect named for a database that another dialect on the class path handles (by its JDBC URL or
     * product name) while the named one handles neither: {@code --dialect postgres} on H2 failed with {@code Function
     * "PG_ADVISORY_LOCK" not found}. A database no dialect claims is left to the named one (a compatible database).
     *
     * @throws ItersnapException {@code NO_DIALECT}, naming the database and the dialect that handles it
     */
    public static void checkMatches(Dialect named, DataSource dataSource) {
        try (Connection c = dataSource.getConnection()) {
            var md = c.getMetaData();
            String url = md.getURL();
            String product = md.getDatabaseProductName();
            if ((url != null && named.handlesUrl(url)) || (product != null && named.handlesProduct(product))) {
                return;
            }
            for (Dialect d : available()) {
                if ((url != null && d.handlesUrl(url)) || (product != null && d.handlesProduct(product))) {
                    throw new ItersnapException(ErrorCode.NO_DIALECT, "dialect '" + named.name() + "' does not match "
                            + "the database: it is " + product + " " + md.getDatabaseProductVersion()
                            + ", which dialect '" + d.name() + "' handles. Name that dialect, or leave the dialect "
                            + "out to detect it");
                }
            }
        } catch (SQLException e) {
            throw new ItersnapException(ErrorCode.DATABASE_ERROR,
                    "cannot open a connection to check the dialect: " + e.getMessage(), e);
        }
    }

    private static String describeAvailable() {
        List<Dialect> all = available();
        return all.isEmpty() ? "no dialect is on the class path"
                : "dialects on the class path: " + all.stream().map(Dialect::name).collect(Collectors.joining(", "));
    }
}
