package dev.itersnap.cli;

import com.zaxxer.hikari.HikariDataSource;
import dev.itersnap.IterativeSnapshot;
import dev.itersnap.core.SnapshotListener;
import dev.itersnap.spi.Dialect;
import dev.itersnap.spi.Dialects;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.models.Project;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import javax.sql.DataSource;
import java.time.Duration;

/** The connection options every command that talks to a database shares (a picocli mixin). */
final class ConnectionOptions {
    /** Required (Arguments.check) unless a project's profile gives the URL. */
    @Option(names = "--jdbc-url", paramLabel = "URL",
            description = "JDBC URL of the database, e.g. jdbc:h2:/tmp/warehouse (with --project: instead of the "
                    + "profile's)")
    String jdbcUrl;

    @Option(names = "--user", paramLabel = "USER", description = "database user")
    String user;

    @Option(names = "--password", paramLabel = "PASSWORD", defaultValue = "${env:ITERSNAP_PASSWORD}",
            description = "database password (default: the ITERSNAP_PASSWORD environment variable)")
    String password;

    @Option(names = "--dialect", paramLabel = "NAME",
            description = "dialect to use (h2, postgres, ...) instead of detecting it")
    String dialect;

    @Spec(Spec.Target.MIXEE)
    private CommandSpec command;

    /**
     * Opens a pool; the caller closes it. A DuckDB file another process holds is waited for up to the default
     * lock_timeout ({@link ModelSettings#DEFAULT_LOCK_TIMEOUT}); the commands of a model wait its own.
     */
    HikariDataSource open() {
        return open(ModelSettings.DEFAULT_LOCK_TIMEOUT);
    }

    /** Opens a pool for {@code model}: a DuckDB file another process holds is waited for up to its lock_timeout. */
    HikariDataSource open(ModelSettings model) {
        return open(model.lockTimeout());
    }

    private HikariDataSource open(Duration lockWait) {
        return ConnectionPool.open(jdbcUrl, user, password, false, lockWait, this::waiting);
    }

    /**
     * Opens a pool of read-only connections (the reading commands: status, dry runs) for {@code model}; the caller
     * closes it.
     */
    HikariDataSource openReadOnly(ModelSettings model) {
        return ConnectionPool.open(jdbcUrl, user, password, true, model.lockTimeout(), this::waiting);
    }

    /**
     * Opens a pool of {@code size} connections for the models of a project: the URL, user and password of the
     * command line where it gives them ({@code --password} only when typed, not from ITERSNAP_PASSWORD), else of
     * {@code profile} (null: none), else ITERSNAP_PASSWORD. {@code lockWait}: how long to wait for a DuckDB file
     * another process holds. The caller closes it.
     */
    HikariDataSource open(Project.Profile profile, String noUrl, boolean readOnly, int size, Duration lockWait) {
        String url = jdbcUrl != null ? jdbcUrl : profile == null ? null : profile.url();
        if (url == null) {
            throw new ConfigException(noUrl);
        }
        String u = user != null || profile == null ? user : profile.user();
        boolean typed = command != null && command.commandLine().getParseResult() != null
                && command.commandLine().getParseResult().hasMatchedOption("--password");
        String p = typed || profile == null || profile.password() == null ? password : profile.password();
        return ConnectionPool.open(url, u, p, readOnly, size, lockWait, this::waiting);
    }

    /** The URL the command line gives, or null (a project's profile gives it then). */
    String jdbcUrl() {
        return jdbcUrl;
    }

    /** A line on the command's stderr (where the model lock's waiting notice goes too). */
    private void waiting(String line) {
        if (command != null) {
            command.commandLine().getErr().println(line);
            command.commandLine().getErr().flush();
        }
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
