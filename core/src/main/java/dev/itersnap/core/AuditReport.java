package dev.itersnap.core;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * What {@code IterativeSnapshot.audit} found in an SCD Type 2 table: one {@link Finding} per check that ran, each
 * with its count and up to {@link AuditSettings#examples()} example rows. Per key, versions are ordered by valid_from;
 * what each check counts is said at {@link Check}. Immutable.
 *
 * <pre>{@code
 * AuditReport report = snapshots.audit(AuditSettings.builder("customers_snapshot").uniqueKey("customer_id").build());
 * if (!report.clean()) {
 *     for (AuditReport.Finding f : report.problems()) {
 *         System.out.println(f.check().label() + ": " + f.count());
 *         f.exampleRows().forEach(row -> System.out.println("  " + row)); // {customer_id=1, valid_from=...}
 *     }
 * }
 * }</pre>
 *
 * @param settings what was audited
 * @param findings every check that ran, in the order of {@link Check}, those that found nothing included
 */
public record AuditReport(AuditSettings settings, List<Finding> findings) {
    /** Copies the list. */
    public AuditReport {
        Objects.requireNonNull(settings, "settings");
        findings = List.copyOf(findings);
    }

    /** The problems found: the sum of every finding's count. */
    public long problemCount() {
        return findings.stream().mapToLong(Finding::count).sum();
    }

    /** Whether no check found anything. */
    public boolean clean() {
        return problemCount() == 0;
    }

    /** The findings with a count above zero. */
    public List<Finding> problems() {
        return findings.stream().filter(f -> f.count() > 0).toList();
    }

    /**
     * The finding of {@code check}; empty when the check did not run ({@link Check#MISSING_VERSIONS} without a source,
     * {@link Check#BOOKKEEPING} and {@link Check#CLOSED_WITHOUT_SUCCESSOR} on a table without those columns, {@link
     * Check#LEDGER_COUNTS} but for a model's history with a ledger).
     */
    public Optional<Finding> finding(Check check) {
        return findings.stream().filter(f -> f.check() == check).findFirst();
    }

    /** A check of the audit. */
    public enum Check {
        /**
         * A version whose updated_at is earlier than its predecessor's: the fingerprint of a batch applied late. A
         * key's return after a deletion is not compared, nor a deletion record.
         */
        OUT_OF_ORDER,
        /** A version still valid when its successor starts (valid_to NULL or after the successor's valid_from). */
        OVERLAP,
        /**
         * A version closed before its successor starts. Where the table marks deletions (change type {@code delete},
         * a deletion record), the gap after a deletion is the key's absence and not counted.
         */
        GAP,
        /** A key with more than one current version (valid_to NULL or {@link AuditSettings#validToCurrent()}). */
        MULTIPLE_CURRENT,
        /** A version whose valid_to is before its valid_from. */
        INVERTED,
        /**
         * With the raw batches ({@link AuditSettings#source()}): a (key, updated_at) of the source that no version
         * carries (what a timestamp-strategy snapshot drops silently), with the first batch holding it.
         */
        MISSING_VERSIONS,
        /**
         * Where the table records the batches that opened and closed each version (an itersnap history): a version
         * whose valid_to and closing batch disagree (open with a closing batch: reopened by hand; closed without one:
         * closed by hand), or closed by a change (change type {@code update}) at a batch that opened no version of
         * its key (the next version deleted by hand).
         */
        BOOKKEEPING,
        /**
         * Where the table has a change type: a key whose last version is closed, and not by a deletion (change type
         * {@code delete}, or a deletion record): its current version was closed or deleted by hand.
         */
        CLOSED_WITHOUT_SUCCESSOR,
        /**
         * The audit of a model's history ({@code IterativeSnapshot.audit(ModelSettings)}), once its ledger records
         * batches: a batch whose versions in the table (by the batch that opened them) are not as many as the ledger
         * counts it inserted: versions deleted (a key's whole history among them) or added by hand. Counted in
         * batches.
         */
        LEDGER_COUNTS;

        /** The check's name as the command line and its JSON print it: {@code out_of_order}, {@code overlap}, ... */
        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * One check's result.
     *
     * @param check       the check
     * @param description what it counts, in a line
     * @param count       how many it found (versions, or keys for {@link Check#MULTIPLE_CURRENT} and {@link
     *                    Check#CLOSED_WITHOUT_SUCCESSOR}, source rows for {@link Check#MISSING_VERSIONS}, batches for
     *                    {@link Check#LEDGER_COUNTS})
     * @param columns     the names of the example rows' values: the key columns as the settings name them, then the
     *                    check's own ({@code valid_from}, {@code updated_at}, {@code previous_updated_at}, ...)
     * @param examples    up to {@link AuditSettings#examples()} rows, ordered by the first key column, each value as
     *                    text (timestamps ISO-8601 with a space before the time, decimals in plain digits, NULL as an
     *                    empty string)
     */
    public record Finding(Check check, String description, long count, List<String> columns,
                          List<List<String>> examples) {
        /** Copies the lists. */
        public Finding {
            Objects.requireNonNull(check, "check");
            columns = List.copyOf(columns);
            examples = examples.stream().map(List::copyOf).toList();
        }

        /** The examples as maps from column name to value, in column order. */
        public List<Map<String, String>> exampleRows() {
            List<Map<String, String>> rows = new ArrayList<>();
            for (List<String> row : examples) {
                Map<String, String> m = new LinkedHashMap<>();
                for (int i = 0; i < columns.size(); i++) {
                    m.put(columns.get(i), row.get(i));
                }
                rows.add(Collections.unmodifiableMap(m));
            }
            return List.copyOf(rows);
        }
    }
}
