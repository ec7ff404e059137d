package dev.itersnap.cli;

import com.zaxxer.hikari.HikariDataSource;
import dev.itersnap.IterativeSnapshot;
import dev.itersnap.core.SnapshotListener;
import dev.itersnap.spi.Dialect;
import dev.itersnap.spi.Dialects;
import picocli.CommandLine.Option;

import javax.sql.DataSource;

/** The connection options every command that talks to a database shares (a picocli mixin). */
final class ConnectionOptions {
    @Option(names = "--jdbc-url", required = true, paramLabel = "URL",
            description = "JDBC URL of the database, e.g. jdbc:h2:/tmp/warehouse")
    String jdbcUrl;

    @Option(names = "--user", paramLabel = "USER", description = "database user")
    String user;

    @Option(names = "--password", paramLabel = "PASSWORD", defaultValue = "${env:ITERSNAP_PASSWORD}",
            description = "database password (default: the ITERSNAP_PASSWORD environment variable)")
    String password;

    @Option(names = "--dialect", paramLabel = "NAME",
            description = "dialect to use (h2, postgres, ...) instead of detecting it")
    String dialect;

    /** Opens a pool; the caller closes it. */
    HikariDataSource open() {
        return ConnectionPool.open(jdbcUrl, user, password, false);
    }

    /** Opens a pool of read-only connections (the reading commands: status, dry runs); the caller closes it. */
    HikariDataSource openReadOnly() {
        return ConnectionPool.open(jdbcUrl, user, password, true);
    }

    /** The chosen dialect (refused when it does not match the database), or the one detected from {@code dataSource}. */
    Dialect dialect(DataSource dataSource) {
        if (dialect == null) {
            return Dialects.detect(dataSource);
        }
        Dialect d = Dialects.named(dialect);
        Dialects.checkMatches(d, dataSource);
        return d;
    }

    /** An engine on {@code dataSource} with the chosen dialect. */
    IterativeSnapshot snapshots(DataSource dataSource, SnapshotListener listener) {
        IterativeSnapshot.Builder builder = IterativeSnapshot.builder().dataSource(dataSource).listener(listener);
        if (dialect != null) {
            builder.dialect(dialect(dataSource));
        }
        return builder.build();
    }
}
