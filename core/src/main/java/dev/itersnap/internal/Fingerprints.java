package dev.itersnap.internal;

import dev.itersnap.internal.sql.SqlSteps;
import dev.itersnap.spi.Dialect;
import dev.itersnap.spi.ResolvedModel;
import dev.itersnap.spi.SourceColumn;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A batch's fingerprint as the ledger records it, {@code <columns>:<rows>:<hash>}: the signature of the source
 * columns it covers (their names and types), the batch's rows and its content hash over its distinct rows (computed
 * by the database, see {@link dev.itersnap.internal.sql.SqlSteps#fingerprintSequences}). Two fingerprints differ when their hashes do. Two fingerprints of one batch compare only when they cover the same columns:
 * after a column was added, dropped or changed type the content text of every row changes without the batch being
 * restated, so such an entry is recorded again, not compared.
 */
final class Fingerprints {
    private final List<SourceColumn> columns;
    private final String signature;

    private Fingerprints(List<SourceColumn> columns, String signature) {
        this.columns = columns;
        this.signature = signature;
    }

    /** The fingerprints of the model's batches as its source is now: every source column, in name order. */
    static Fingerprints of(Dialect dialect, ResolvedModel m) {
        List<SourceColumn> cols = new ArrayList<>(m.sourceColumns());
        cols.sort(Comparator.comparing(c -> c.name().toLowerCase(Locale.ROOT)));
        StringBuilder text = new StringBuilder(SqlSteps.of(dialect).primitives().fingerprintFormat());
        for (SourceColumn c : cols) {
            text.append(c.name().toLowerCase(Locale.ROOT)).append(' ').append(dialect.columnType(c)).append('\n');
        }
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(text.toString()
                    .getBytes(StandardCharsets.UTF_8));
            return new Fingerprints(List.copyOf(cols), HexFormat.of().formatHex(digest, 0, 8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The columns hashed, in order. */
    List<SourceColumn> columns() {
        return columns;
    }

    /** The fingerprint of a batch with {@code rows} rows and content hash {@code hash}. */
    String of(long rows, BigDecimal hash) {
        return signature + ":" + rows + ":" + hash.toPlainString();
    }

    /**
     * The fingerprint of a batch with {@code rows} rows whose content is not hashed ({@code restatements: ignore}):
     * it records the columns the batch was applied under, which a key-scoped replay needs, and is never compared for
     * a restatement.
     */
    String withoutHash(long rows) {
        return signature + ":" + rows + ":";
    }

    /**
     * True when {@code recorded} (a ledger entry's fingerprint, or null) covers the columns these do and has a content
     * hash to compare.
     */
    boolean comparable(String recorded) {
        return recorded != null && recorded.startsWith(signature + ":") && !unflagged(recorded).endsWith(":");
    }

    /**
     * The applied batches restated in the source: those whose ledger fingerprint covers these columns and differs from
     * the one the source gives now ({@code now}: by sequence). A batch the source no longer holds, one without a
     * fingerprint (recorded before fingerprints were, or reproduced) or with one over other columns is not restated.
     */
    java.util.TreeMap<Seq, MetadataStore.Entry> restated(java.util.Map<Seq, MetadataStore.Entry> applied,
                                                         java.util.Map<Seq, String> now) {
        java.util.TreeMap<Seq, MetadataStore.Entry> out = new java.util.TreeMap<>();
        for (MetadataStore.Entry e : applied.values()) {
            String found = now.get(e.sequence());
            if (found != null && !e.lost() && comparable(e.fingerprint()) && !sameContent(found, e.fingerprint())) {
                out.put(e.sequence(), e);
            }
        }
        return out;
    }

    /** The fingerprint of each batch of the source, by one {@link dev.itersnap.internal.sql.SqlSteps#fingerprintSequences} statement. */
    Map<Seq, String> read(Jdbc jdbc, Dialect dialect, ResolvedModel m) {
        Map<Seq, String> out = new java.util.HashMap<>();
        jdbc.query(SqlSteps.of(dialect).fingerprintSequences(m, columns, null), rs -> {
            Object v = m.sequenceType().read(rs, 1);
            BigDecimal hash = rs.getMetaData().getColumnCount() > 2 ? rs.getBigDecimal(3) : null;
            if (v != null && hash != null) {
                out.put(Seq.of(m, v), of(rs.getLong(2), hash));
            }
            return null;
        });
        return out;
    }

    /**
     * Whether two fingerprints have the same content hash (over the same columns): the row count is reported, not
     * compared, since exact copies of a row count but change nothing.
     */
    static boolean sameContent(String a, String b) {
        String x = unflagged(a);
        String y = unflagged(b);
        return x.substring(0, x.indexOf(':')).equals(y.substring(0, y.indexOf(':')))
                && x.substring(x.lastIndexOf(':')).equals(y.substring(y.lastIndexOf(':')));
    }

    /**
     * The suffix of a fingerprint recorded for a batch that was applied earlier ({@link #recordedLater}), not when
     * it was applied.
     */
    private static final String LATER = ":later";

    /**
     * {@code fingerprint} marked as recorded after the batch was applied (the batch's ledger entry had none, or one
     * over other columns): the batch's rows as applied (its error log records, its archived rows) may have had other
     * columns than the source has now, so a late batch before it is replayed for every key, which records it anew.
     */
    static String recordedLater(String fingerprint) {
        return fingerprint.endsWith(LATER) ? fingerprint : fingerprint + LATER;
    }

    /** Whether {@code fingerprint} (a ledger entry's, or null) was recorded when its batch was applied. */
    static boolean recordedWhenApplied(String fingerprint) {
        return fingerprint != null && !fingerprint.endsWith(LATER);
    }

    private static String unflagged(String fingerprint) {
        return fingerprint.endsWith(LATER) ? fingerprint.substring(0, fingerprint.length() - LATER.length())
                : fingerprint;
    }

    /** The content hash in a fingerprint, or null when it has none. */
    static BigDecimal hash(String fingerprint) {
        String x = unflagged(fingerprint);
        String h = x.substring(x.lastIndexOf(':') + 1);
        return h.isEmpty() ? null : new BigDecimal(h);
    }

    /** The rows in a fingerprint. */
    static long rows(String fingerprint) {
        String[] parts = fingerprint.split(":");
        return Long.parseLong(parts[1]);
    }
}
