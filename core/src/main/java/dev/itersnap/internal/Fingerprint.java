package dev.itersnap.internal;

import java.math.BigDecimal;

/**
 * One batch's fingerprint as the ledger records it ({@link #text}: {@code <signature>:<rows>:<hash>}, then {@code
 * :later} when recorded after the batch was applied): the signature of the columns it covers ({@link Fingerprints}),
 * the batch's rows, its content hash (null when none was computed: {@code restatements: ignore}), and whether it was
 * recorded when the batch was applied.
 *
 * @param recordedLater recorded after the batch was applied (its ledger entry had none, or one over other columns):
 *                      the batch's rows as applied (its error log records, its archived rows) may have had other
 *                      columns than the source has now, so a late batch before it is replayed for every key
 */
record Fingerprint(String signature, long rows, BigDecimal hash, boolean recordedLater) {
    private static final String LATER = "later";

    /** A fingerprint as the ledger holds it, or null for none. */
    static Fingerprint parse(String text) {
        if (text == null) {
            return null;
        }
        String[] parts = text.split(":", -1);
        return new Fingerprint(parts[0], Long.parseLong(parts[1]), parts[2].isEmpty() ? null : new BigDecimal(parts[2]),
                parts.length > 3 && parts[3].equals(LATER));
    }

    /** The ledger's text of this fingerprint. */
    String text() {
        return signature + ":" + rows + ":" + (hash == null ? "" : hash.toPlainString()) + (recordedLater ? ":" + LATER
                : "");
    }

    /** This fingerprint, marked as recorded after its batch was applied. */
    Fingerprint later() {
        return new Fingerprint(signature, rows, hash, true);
    }

    /**
     * Whether two fingerprints have the same content hash over the same columns: the row count is reported, not
     * compared, since exact copies of a row count but change nothing.
     */
    boolean sameContent(Fingerprint other) {
        return signature.equals(other.signature) && (hash == null ? other.hash == null
                : other.hash != null && hash.compareTo(other.hash) == 0);
    }
}
