package dev.itersnap.cli;

import com.zaxxer.hikari.HikariDataSource;
import dev.itersnap.core.ModelSettings;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Locale;
import java.util.concurrent.Callable;

/** {@code itersnap validate}: checks the settings and the source query; writes nothing. */
@Command(name = "validate", mixinStandardHelpOptions = true,
        description = {"Checks a model's settings and its source query; writes nothing.",
                "The source runs (SELECT * FROM (source) s WHERE 1 = 0), unique_key, updated_at, sequence_by and "
                + "check_cols exist, sequence_by is a DATE, TIMESTAMP, integer, decimal or string column, "
                + "delete_when parses, every column type can be carried into the history exactly, no two columns "
                + "differ only by case, and every identifier fits the database's limit.",
                "Prints \"valid\" and the resolved columns, or exits 2 with one line naming the problem."})
public final class ValidateCommand implements Callable<Integer> {
    @Spec
    private CommandSpec spec;

    @Mixin
    private ConnectionOptions connection;

    @Mixin
    private ModelOption model;

    @Override
    public Integer call() throws SQLException {
        ModelSettings settings = model.load();
        ModelInspection m;
        try (HikariDataSource dataSource = connection.open(settings); Connection c = dataSource.getConnection()) {
            Sql.readOnly(c);
            m = ModelInspection.of(settings, new Sql(c));
            // what a run checks before it writes: every type carried exactly, identifiers within the limit
            connection.snapshots(dataSource, event -> { }).validate(settings);
        }
        PrintWriter out = spec.commandLine().getOut();
        out.println("valid: model " + settings.name() + " -> " + settings.target());
        out.println("  unique_key:  " + String.join(", ", m.keys));
        out.println("  updated_at:  " + m.updatedAt);
        out.println("  sequence_by: " + m.sequenceBy + " (" + m.sequenceTypeText() + ")");
        out.println("  strategy:    " + settings.strategy().name().toLowerCase(Locale.ROOT));
        out.println("  tracked:     " + String.join(", ", m.tracked));
        if (settings.deleteWhen() != null) {
            out.println("  delete_when: " + settings.deleteWhen());
        }
        out.println("  source columns: " + String.join(", ", m.sourceColumns.stream()
                .map(col -> col.name() + " " + col.typeName()).toList()));
        out.flush();
        return ExitCodes.OK;
    }
}
