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

    private static String describeAvailable() {
        List<Dialect> all = available();
        return all.isEmpty() ? "no dialect is on the class path"
                : "dialects on the class path: " + all.stream().map(Dialect::name).collect(Collectors.joining(", "));
    }
}
