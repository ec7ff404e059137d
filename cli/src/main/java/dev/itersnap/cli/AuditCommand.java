package dev.itersnap.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.zaxxer.hikari.HikariDataSource;
import dev.itersnap.core.AuditReport;
import dev.itersnap.core.AuditSettings;
import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.ItersnapException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code itersnap audit}: checks any SCD Type 2 table (one itersnap built, or a dbt snapshot) for the marks of a
 * history applied out of order or otherwise broken, through {@code IterativeSnapshot.audit}; prints its report.
 */
@Command(name = "audit", mixinStandardHelpOptions = true,
        description = {"Checks any SCD Type 2 table (itersnap-built or a dbt snapshot) for broken history; writes nothing.",
                "Per key, versions are ordered by valid_from; it counts:",
                "  out_of_order      a version whose updated_at is earlier than its predecessor's (the fingerprint "
                        + "of a batch applied late); a key's return after a deletion is not compared, nor a deletion "
                        + "record",
                "  overlap           a version still valid when its successor starts (valid_to NULL or after the "
                        + "successor's valid_from)",
                "  gap               a version closed before its successor starts (also what a deleted key that "
                        + "returned looks like, unless the table marks deletions: a version whose change type is "
                        + "'delete' or a deletion record ends the key's life, and the gap after it is its absence)",
                "  multiple_current  more than one version with valid_to NULL for one key (counted per key)",
                "  inverted          valid_to before valid_from",
                "  missing_versions  with --source and --sequence-by: a (key, updated_at) of the raw batches that no "
                        + "version of the table carries (what a timestamp-strategy snapshot drops silently)",
                "  bookkeeping       where the table has dbt_opened_seq and dbt_closed_seq (itersnap's histories): a "
                        + "version whose valid_to and closing batch disagree (reopened or closed by hand), or closed "
                        + "by a change at a batch that opened no version of the key (the next one deleted by hand)",
                "  closed_without_successor  where the table has a change type: a key whose last version is "
                        + "closed, not by a deletion (its current version closed or deleted by hand)",
                "Prints counts and up to 5 examples per check. Exit 0 when clean, 5 when any check found a problem."})
public final class AuditCommand implements Callable<Integer> {

    @Spec
    private CommandSpec spec;

    @Mixin
    private ConnectionOptions connection;

    @Option(names = "--table", required = true, paramLabel = "T", description = "the history table: table, "
            + "schema.table or catalog.schema.table")
    private String table;

    @Option(names = "--key", required = true, split = ",", paramLabel = "K", description = "key column(s), "
            + "comma-separated")
    private List<String> keys;

    @Option(names = "--updated-at", defaultValue = "dbt_updated_at", paramLabel = "U",
            description = "column with the source's modification time (default: ${DEFAULT-VALUE})")
    private String updatedAt;

    @Option(names = "--valid-from", defaultValue = "dbt_valid_from", paramLabel = "COL",
            description = "default: ${DEFAULT-VALUE}")
    private String validFrom;

    @Option(names = "--valid-to", defaultValue = "dbt_valid_to", paramLabel = "COL",
            description = "default: ${DEFAULT-VALUE}")
    private String validTo;

    @Option(names = "--valid-to-current", paramLabel = "LITERAL", description = "the value current versions carry "
            + "in valid_to instead of NULL (dbt 1.9's dbt_valid_to_current, itersnap's valid_to_current), e.g. "
            + "9999-12-31")
    private String validToCurrent;

    @Option(names = "--source", paramLabel = "SQL", description = "a SELECT over the raw batches; with it the audit "
            + "also lists versions that should exist and do not (needs --sequence-by)")
    private String source;

    @Option(names = "--sequence-by", paramLabel = "COL", description = "the source column naming a row's batch")
    private String sequenceBy;

    @Option(names = "--source-updated-at", defaultValue = "updated_at", paramLabel = "COL",
            description = "the source column that becomes the table's --updated-at (default: ${DEFAULT-VALUE}); "
                    + "the source's key columns have the names given in --key")
    private String sourceUpdatedAt;

    @Option(names = "--change-type", defaultValue = "dbt_change_type", paramLabel = "COL",
            description = "where the table has it (itersnap's histories do): a version whose value is 'delete' was "
                    + "closed by a deletion (default: ${DEFAULT-VALUE})")
    private String changeType = "dbt_change_type";

    @Option(names = "--is-deleted", defaultValue = "dbt_is_deleted", paramLabel = "COL",
            description = "where the table has it (hard_deletes: new_record): a version whose value is true (or the "
                    + "text 'True', as dbt writes it) is a deletion record (default: ${DEFAULT-VALUE})")
    private String isDeleted = "dbt_is_deleted";

    @Option(names = "--opened-seq", defaultValue = "dbt_opened_seq", paramLabel = "COL",
            description = "where the table has it (itersnap's histories do): the batch that opened each version, which "
                    + "orders versions that start at the same time (default: ${DEFAULT-VALUE})")
    private String openedSeq = "dbt_opened_seq";

    @Option(names = "--closed-seq", defaultValue = "dbt_closed_seq", paramLabel = "COL",
            description = "where the table has it (itersnap's histories do): the batch that closed each version, NULL "
                    + "while open; with --opened-seq the bookkeeping check reads it (default: ${DEFAULT-VALUE})")
    private String closedSeq = "dbt_closed_seq";

    @Option(names = "--json", description = "print the findings as one JSON object on stdout")
    private boolean json;

    /** The audit as the options describe it; a wrong option is a configuration error naming it. */
    AuditSettings settings() {
        if ((source == null) != (sequenceBy == null)) {
            throw new ConfigException("--source and --sequence-by go together: the raw batches and the column naming "
                    + "a row's batch");
        }
        try {
            AuditSettings.Builder b = AuditSettings.builder(table).uniqueKey(keys).updatedAt(updatedAt)
                    .validFrom(validFrom).validTo(validTo).validToCurrent(validToCurrent).changeType(changeType)
                    .isDeleted(isDeleted).openedSeq(openedSeq).closedSeq(closedSeq).sourceUpdatedAt(sourceUpdatedAt);
            if (source != null) {
                b.source(source, sequenceBy);
            }
            return b.build();
        } catch (ItersnapException e) {
            throw asOptionError(e);
        }
    }

    @Override
    public Integer call() {
        AuditSettings settings = settings();
        AuditReport report;
        try (HikariDataSource dataSource = connection.open()) {
            report = connection.snapshots(dataSource, event -> { }).audit(settings);
        } catch (ItersnapException e) {
            throw asOptionError(e);
        }
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            out.println(jsonNode(new ObjectMapper(), report));
        } else {
            print(out, report, true);
        }
        out.flush();
        return report.clean() ? ExitCodes.OK : ExitCodes.AUDIT_PROBLEMS;
    }

    /**
     * A setting the library names ({@code setting 'valid_to'}) as the option that gave it ({@code option
     * --valid-to}), for a configuration error; other failures as they are.
     */
    private static RuntimeException asOptionError(ItersnapException e) {
        if (e.code() != ErrorCode.INVALID_SETTING && e.code() != ErrorCode.INVALID_SOURCE) {
            return e;
        }
        Matcher m = Pattern.compile("setting '([a-z_]+)'").matcher(e.getMessage());
        StringBuilder message = new StringBuilder();
        while (m.find()) {
            String option = m.group(1).equals("unique_key") ? "key" : m.group(1).replace('_', '-');
            m.appendReplacement(message, Matcher.quoteReplacement("option --" + option));
        }
        m.appendTail(message);
        return new ConfigException(message.toString(), e);
    }

    /** The findings as text; the closing verdict line with the exit code only when {@code withExitCode}. */
    static void print(PrintWriter out, AuditReport report, boolean withExitCode) {
        AuditSettings s = report.settings();
        out.println("audit of " + s.table() + " (key " + String.join(", ", s.uniqueKey()) + ", updated_at "
                + s.updatedAt() + ", validity " + s.validFrom() + " .. " + s.validTo() + ")");
        for (AuditReport.Finding f : report.findings()) {
            out.println();
            out.println(f.check().label() + ": " + f.count() + " - " + f.description());
            if (!f.examples().isEmpty()) {
                TablePrinter.print(out, f.columns(), f.examples());
            }
        }
        out.println();
        if (withExitCode) {
            out.println(report.clean() ? "clean: no problem found" : "problems found: " + report.problemCount()
                    + " (exit code " + ExitCodes.AUDIT_PROBLEMS + ")");
        }
    }

    /** The findings as the JSON object {@code --json} prints. */
    static ObjectNode jsonNode(ObjectMapper mapper, AuditReport report) {
        ObjectNode o = mapper.createObjectNode().put("table", report.settings().table().toString())
                .put("clean", report.clean()).put("problems", report.problemCount());
        ObjectNode checks = o.putObject("checks");
        for (AuditReport.Finding f : report.findings()) {
            ObjectNode c = checks.putObject(f.check().label()).put("description", f.description())
                    .put("count", f.count());
            ArrayNode ex = c.putArray("examples");
            for (Map<String, String> row : f.exampleRows()) {
                ObjectNode e = ex.addObject();
                row.forEach(e::put);
            }
        }
        return o;
    }
}
