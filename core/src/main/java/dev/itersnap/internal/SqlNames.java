package dev.itersnap.internal;

import dev.itersnap.spi.Dialect;
import dev.itersnap.spi.ResolvedModel;

import java.util.stream.Collectors;

/** Quoted names of the metadata tables and their columns, for the engine's own bookkeeping statements. */
final class SqlNames {
    private final Dialect dialect;
    private final ResolvedModel m;

    SqlNames(Dialect dialect, ResolvedModel m) {
        this.dialect = dialect;
        this.m = m;
    }

    /** A metadata table, qualified and quoted. */
    String t(String table) {
        return m.metaTable(table).parts().stream().map(dialect::quote).collect(Collectors.joining("."));
    }

    /** A metadata column, folded and quoted. */
    String c(String column) {
        return dialect.quote(m.id(column));
    }

    /** Any identifier that is already folded, quoted. */
    String q(String identifier) {
        return dialect.quote(identifier);
    }

    /** A table name, qualified and quoted. */
    String table(dev.itersnap.core.TableName name) {
        return name.parts().stream().map(dialect::quote).collect(Collectors.joining("."));
    }
}
