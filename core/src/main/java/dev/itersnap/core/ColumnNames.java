package dev.itersnap.core;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Names of the columns itersnap adds to the history table. Defaults are dbt's; any can be overridden through the
 * {@code column_names} setting, keyed by the default name (for example {@code dbt_valid_to: valid_until}).
 *
 * @param scdId             unique id of the version ({@code dbt_scd_id})
 * @param updatedAt         the record's {@code updated_at} ({@code dbt_updated_at})
 * @param validFrom         start of validity ({@code dbt_valid_from})
 * @param validTo           end of validity, NULL while current ({@code dbt_valid_to})
 * @param changeType        how the version ended: insert, update, delete ({@code dbt_change_type})
 * @param changedAttributes JSON array of the tracked columns that differ in the successor ({@code changed_attributes})
 * @param isDeleted         true on deletion records, only with {@code hard_deletes: new_record} ({@code dbt_is_deleted})
 * @param openedSeq         bookkeeping: the sequence of the batch that opened the version ({@code dbt_opened_seq})
 * @param closedSeq         bookkeeping: the sequence of the batch that closed it, NULL while open ({@code dbt_closed_seq})
 */
public record ColumnNames(String scdId, String updatedAt, String validFrom, String validTo, String changeType,
                          String changedAttributes, String isDeleted, String openedSeq, String closedSeq) {

    /** dbt's names, plus itersnap's two bookkeeping columns. */
    public static final ColumnNames DEFAULTS = new ColumnNames("dbt_scd_id", "dbt_updated_at", "dbt_valid_from",
            "dbt_valid_to", "dbt_change_type", "changed_attributes", "dbt_is_deleted", "dbt_opened_seq",
            "dbt_closed_seq");

    /** Validates every name (a plain identifier) and that no two are equal. */
    public ColumnNames {
        List<String> all = java.util.Arrays.asList(scdId, updatedAt, validFrom, validTo, changeType,
                changedAttributes, isDeleted, openedSeq, closedSeq);
        for (String n : all) {
            Settings.identifier("column_names", n);
            if (n.toLowerCase(Locale.ROOT).startsWith("itersnap_")) {
                throw Settings.invalid("column_names", "names a meta column '" + n
                        + "' with the reserved prefix itersnap_; choose another name");
            }
        }
        if (all.stream().map(n -> n.toLowerCase(Locale.ROOT)).distinct().count() != all.size()) {
            throw Settings.invalid("column_names", "gives two meta columns the same name: " + all);
        }
    }

    /**
     * Applies overrides keyed by default name; an unknown key is an error naming it.
     */
    public static ColumnNames withOverrides(Map<String, String> overrides) {
        Map<String, String> m = new LinkedHashMap<>(DEFAULTS.asMap());
        if (overrides != null) {
            for (Map.Entry<String, String> e : overrides.entrySet()) {
                if (!m.containsKey(e.getKey())) {
                    throw Settings.invalid("column_names", "has unknown key '" + e.getKey() + "'; expected one of "
                            + m.keySet());
                }
                m.put(e.getKey(), e.getValue());
            }
        }
        return new ColumnNames(m.get("dbt_scd_id"), m.get("dbt_updated_at"), m.get("dbt_valid_from"),
                m.get("dbt_valid_to"), m.get("dbt_change_type"), m.get("changed_attributes"), m.get("dbt_is_deleted"),
                m.get("dbt_opened_seq"), m.get("dbt_closed_seq"));
    }

    /** The names keyed by their default name, in a stable order. */
    public Map<String, String> asMap() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("dbt_scd_id", scdId);
        m.put("dbt_updated_at", updatedAt);
        m.put("dbt_valid_from", validFrom);
        m.put("dbt_valid_to", validTo);
        m.put("dbt_change_type", changeType);
        m.put("changed_attributes", changedAttributes);
        m.put("dbt_is_deleted", isDeleted);
        m.put("dbt_opened_seq", openedSeq);
        m.put("dbt_closed_seq", closedSeq);
        return m;
    }
}
