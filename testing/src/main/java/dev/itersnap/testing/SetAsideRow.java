package dev.itersnap.testing;

import java.util.Map;

/**
 * A source row the model set aside in the error log instead of applying it.
 *
 * @param sequence the batch's {@code sequence_by} value as text (null for a row with no sequence)
 * @param reason   why: {@code null_sequence}, {@code null_key}, {@code duplicate_key}, {@code null_updated_at} or
 *                 {@code updated_at_regression}
 * @param record   the row as recorded, column names in lower case
 */
public record SetAsideRow(String sequence, String reason, Map<String, Object> record) {
}
