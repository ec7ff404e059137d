package dev.itersnap.internal;

import dev.itersnap.internal.sql.SqlSteps;
import dev.itersnap.spi.Dialect;
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
 * The fingerprints of a model's batches over a set of source columns ({@link Fingerprint}: the signature of the
 * columns covered, their names and types, the batch's rows and its content hash over its distinct rows, computed by the
 * database, see {@link dev.itersnap.internal.sql.SqlSteps#fingerprintSequences}). Two fingerprints differ when their
 * hashes do; two of one batch compare only when they cover the same columns: after a column was added, dropped or
 * changed type the text of every row changes without the batch being restated, so such an entry is compared over the
 * columns it covers ({@link #compareOlderFormats}).
 */
final class Fingerprints {
    private final List<SourceColumn> columns;
    private final String signature;
    /** The format and the columns with their types, each part prefixed with its length ({@link #definition}). */
    private final String definition;

    private Fingerprints(List<SourceColumn> columns, String signature, String definition) {
        this.columns = columns;
        this.signature = signature;
        this.definition = definition;
    }

    /** The fingerprints of the model's batches as its source is now: every source column, in name order. */
    static Fingerprints of(Dialect dialect, ResolvedModel m) {
        return over(dialect, m.withoutCarried().sourceColumns());
    }

    /** The fingerprints over {@code columns}, in name order, in the dialect's format. */
    private static Fingerprints over(Dialect dialect, List<SourceColumn> columns) {
        List<SourceColumn> cols = new ArrayList<>(columns);
        cols.sort(Comparator.comparing(c -> c.name().toLowerCase(Locale.ROOT)));
        String format = SqlSteps.of(dialect).primitives().fingerprintFormat();
        StringBuilder text = new StringBuilder(format);
        StringBuilder definition = new StringBuilder(part(format));
        for (SourceColumn c : cols) {
            text.append(c.name().toLowerCase(Locale.ROOT)).append(' ').append(dialect.columnType(c)).append('\n');
            definition.append(part(c.name().toLowerCase(Locale.ROOT))).append(part(dialect.columnType(c)));
        }
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(text.toString()
                    .getBytes(StandardCharsets.UTF_8));
            return new Fingerprints(List.copyOf(cols), HexFormat.of().formatHex(digest, 0, 8), definition.toString());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String part(String text) {
        return text.length() + ":" + text;
    }

    /** The parts of a {@link #definition}: the format, then each column's name and type. */
    private static List<String> parts(String definition) {
        List<String> out = new ArrayList<>();
        int at = 0;
        while (at < definition.length()) {
            int colon = definition.indexOf(':', at);
            int length = Integer.parseInt(definition.substring(at, colon));
            out.add(definition.substring(colon + 1, colon + 1 + length));
            at = colon + 1 + length;
        }
        return out;
    }

    /** The signature that names these fingerprints' format and columns (the first part of each fingerprint). */
    String signature() {
        return signature;
    }

    /**
     * What {@link #signature} stands for, as the metadata keeps it (the fingerprint formats table): the format, then
     * each column's name and type, each part prefixed with its length. A later run whose source has other columns
     * reads it to compare a batch over the columns its fingerprint covers ({@link #recorded}).
     */
    String definition() {
        return definition;
    }

    /**
     * The fingerprints of an earlier format ({@code definition}, recorded under {@code signature}) computed over the
     * source as it is now: when the format is this dialect's and every column it covers is in the source with the
     * type it had, they give the hash that format gave for the same rows; else null (a column left the source or
     * changed type: such a fingerprint cannot be compared).
     */
    static Fingerprints recorded(Dialect dialect, ResolvedModel m, String definition, String signature) {
        if (definition == null) {
            return null;
        }
        List<String> parts = parts(definition);
        if (!parts.get(0).equals(SqlSteps.of(dialect).primitives().fingerprintFormat())) {
            return null;
        }
        List<SourceColumn> cols = new ArrayList<>();
        for (int i = 1; i + 1 < parts.size(); i += 2) {
            SourceColumn now = m.withoutCarried().sourceColumn(parts.get(i));
            if (now == null || !dialect.columnType(now).equals(parts.get(i + 1))) {
                return null;
            }
            cols.add(now);
        }
        Fingerprints f = over(dialect, cols);
        return f.signature.equals(signature) ? f : null;
    }

    /**
     * The columns of an earlier format ({@code definition}) that the source no longer has or has with another type,
     * for messages; every column when the format is unknown.
     */
    static List<String> changedColumns(Dialect dialect, ResolvedModel m, String definition) {
        List<String> out = new ArrayList<>();
        if (definition == null) {
            return out;
        }
        List<String> parts = parts(definition);
        for (int i = 1; i + 1 < parts.size(); i += 2) {
            SourceColumn now = m.withoutCarried().sourceColumn(parts.get(i));
            if (now == null || !dialect.columnType(now).equals(parts.get(i + 1))) {
                out.add(parts.get(i));
            }
        }
        return out;
    }

    /** The columns hashed, in order. */
    List<SourceColumn> columns() {
        return columns;
    }

    /** The fingerprint of a batch with {@code rows} rows and content hash {@code hash}. */
    Fingerprint of(long rows, BigDecimal hash) {
        return new Fingerprint(signature, rows, hash, false);
    }

    /**
     * The fingerprint of a batch with {@code rows} rows whose content is not hashed ({@code restatements: ignore}):
     * it records the columns the batch was applied under, which a key-scoped replay needs, and is never compared for
     * a restatement.
     */
    Fingerprint withoutHash(long rows) {
        return new Fingerprint(signature, rows, null, false);
    }

    /**
     * True when {@code recorded} (a ledger entry's fingerprint, or null) covers the columns these do and has a content
     * hash to compare.
     */
    boolean comparable(Fingerprint recorded) {
        return recorded != null && recorded.signature().equals(signature) && recorded.hash() != null;
    }

    /**
     * The applied batches restated in the source: those whose ledger fingerprint covers these columns and differs from
     * the one the source gives now ({@code now}: by sequence). A batch the source no longer holds, one without a
     * fingerprint (reproduced) or with one over other columns is not restated.
     */
    java.util.TreeMap<Seq, MetadataStore.Entry> restated(java.util.Map<Seq, MetadataStore.Entry> applied,
                                                         java.util.Map<Seq, Fingerprint> now) {
        java.util.TreeMap<Seq, MetadataStore.Entry> out = new java.util.TreeMap<>();
        for (MetadataStore.Entry e : applied.values()) {
            Fingerprint found = now.get(e.sequence());
            if (found != null && !e.lost() && comparable(e.fingerprint()) && !found.sameContent(e.fingerprint())) {
                out.put(e.sequence(), e);
            }
        }
        return out;
    }

    /**
     * What comparing applied batches fingerprinted in an earlier format found: those whose content differs
     * ({@code restated}), those that cannot be compared ({@code uncomparable}: a column their fingerprint covers left
     * the source or changed type, or the format is unknown), and those columns.
     */
    record OlderFormats(java.util.TreeMap<Seq, MetadataStore.Entry> restated,
                        java.util.TreeMap<Seq, MetadataStore.Entry> uncomparable, List<String> columns) {
    }

    /**
     * Compares the applied batches among {@code held} whose fingerprint has another signature than {@code now}'s (the
     * source's columns changed since they were fingerprinted) over the columns their fingerprint covers, which the
     * fingerprint formats table ({@code formats}, read only when there is such a batch) says: one statement per
     * earlier format. An entry without a hash is not compared.
     */
    static OlderFormats compareOlderFormats(Jdbc jdbc, Dialect dialect, ResolvedModel m, Fingerprints now,
                                            Map<Seq, MetadataStore.Entry> applied, java.util.Collection<Seq> held,
                                            java.util.function.Supplier<Map<String, String>> formats) {
        java.util.TreeMap<Seq, MetadataStore.Entry> restated = new java.util.TreeMap<>();
        java.util.TreeMap<Seq, MetadataStore.Entry> uncomparable = new java.util.TreeMap<>();
        java.util.Set<String> changed = new java.util.LinkedHashSet<>();
        Map<String, List<Seq>> bySignature = new java.util.TreeMap<>();
        for (Seq s : held) {
            MetadataStore.Entry e = applied.get(s);
            Fingerprint fp = e == null ? null : e.fingerprint();
            if (fp == null || e.lost() || e.reproduced() || fp.hash() == null || now.comparable(fp)) {
                continue; // none to compare (recorded without a hash), or comparable as it is
            }
            bySignature.computeIfAbsent(fp.signature(), k -> new ArrayList<>()).add(s);
        }
        if (bySignature.isEmpty()) {
            return new OlderFormats(restated, uncomparable, List.of());
        }
        Map<String, String> definitions = formats.get();
        for (Map.Entry<String, List<Seq>> group : bySignature.entrySet()) {
            String definition = definitions.get(group.getKey());
            Fingerprints older = recorded(dialect, m, definition, group.getKey());
            List<Seq> seqs = group.getValue();
            if (older == null) {
                seqs.forEach(s -> uncomparable.put(s, applied.get(s)));
                changed.addAll(changedColumns(dialect, m, definition));
                continue;
            }
            List<Object> bound = seqs.size() > SnapshotRun.MAX_BOUND_SEQUENCES ? null
                    : seqs.stream().<Object>map(Seq::value).toList();
            Map<Seq, Fingerprint> found = older.read(jdbc, dialect, m, bound);
            for (Seq s : seqs) {
                Fingerprint f = found.get(s);
                if (f != null && !f.sameContent(applied.get(s).fingerprint())) {
                    restated.put(s, applied.get(s));
                }
            }
        }
        return new OlderFormats(restated, uncomparable, List.copyOf(changed));
    }

    /** The fingerprint of each batch of the source, by one {@link dev.itersnap.internal.sql.SqlSteps#fingerprintSequences} statement. */
    Map<Seq, Fingerprint> read(Jdbc jdbc, Dialect dialect, ResolvedModel m) {
        return read(jdbc, dialect, m, null);
    }

    /** The fingerprints of the source's batches {@code sequences} (null: every batch), by one statement. */
    Map<Seq, Fingerprint> read(Jdbc jdbc, Dialect dialect, ResolvedModel m, List<Object> sequences) {
        Map<Seq, Fingerprint> out = new java.util.HashMap<>();
        jdbc.query(SqlSteps.of(dialect).fingerprintSequences(m, columns, sequences), rs -> {
            Object v = m.sequenceType().read(rs, 1);
            BigDecimal hash = rs.getMetaData().getColumnCount() > 2 ? rs.getBigDecimal(3) : null;
            if (v != null && hash != null) {
                out.put(Seq.of(m, v), of(rs.getLong(2), hash));
            }
            return null;
        });
        return out;
    }

}
