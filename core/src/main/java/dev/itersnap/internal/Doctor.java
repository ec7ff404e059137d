package dev.itersnap.internal;

import dev.itersnap.core.Check;
import dev.itersnap.core.CheckReport;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.TableName;
import dev.itersnap.internal.sql.SqlSteps;
import dev.itersnap.spi.Dialect;
import dev.itersnap.spi.SourceColumn;
import dev.itersnap.spi.SqlValues;
import dev.itersnap.spi.Statement;
import dev.itersnap.spi.TableSpec.ColumnType;
import dev.itersnap.spi.TableSpec;
import dev.itersnap.spi.ValueType;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.stream.Collectors;
import javax.sql.DataSource;

/**
 * The pre-flight check of a model before its first run on a database ({@code IterativeSnapshot.check}, {@code
 * itersnap doctor}): connection and driver, the dialect's runtime checks (version, session time zone), the source
 * query and the collation of its string columns, the permission to create the metadata schema and a table in it (and
 * in the target's schema) with the table features the dialect asks for, and the binding of every value type the
 * engine binds, written to that table and read back; and, once the model has a history and a ledger, whether a run
 * would refuse it as edited by hand ({@link EditedHistory}: every key by the rules, every batch's versions against the
 * ledger). It writes only a probe table, {@code itersnap_probe_<model>}, which it drops again; it does not create the
 * metadata tables or touch the history. Internal.
 */
public final class Doctor {
    private final DataSource dataSource;
    private final Dialect dialect;
    private final ModelSettings settings;

    public Doctor(DataSource dataSource, Dialect dialect, ModelSettings settings) {
        this.dataSource = dataSource;
        this.dialect = dialect;
        this.settings = settings;
    }

    public CheckReport check() {
        List<Check> out = new ArrayList<>();
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(true);
            DatabaseMetaData md = c.getMetaData();
            out.add(Check.ok("connection", md.getDatabaseProductName() + " " + md.getDatabaseProductVersion()
                    + " through " + md.getDriverName() + " " + md.getDriverVersion() + "; dialect " + dialect.name()));
            try {
                out.addAll(dialect.environmentChecks(c));
            } catch (SQLException | RuntimeException e) {
                out.add(Check.failed("runtime", "could not be inspected: " + Jdbc.firstLine(e.getMessage())));
            }
            Jdbc jdbc = new Jdbc(c, settings.name(), dialect);
            ResolvedModel m = source(jdbc, out);
            if (m != null) {
                probe(jdbc, m, m.metadata().tableNamed(m.id("itersnap_probe_" + settings.name())), "metadata schema",
                        true, out);
                if (m.target().schema() != null) {
                    List<String> parts = new ArrayList<>(m.target().parts());
                    parts.set(parts.size() - 1, m.id("itersnap_probe_" + settings.name()));
                    probe(jdbc, m, new TableName(parts), "target schema", false, out);
                }
                dev.itersnap.core.Check history = EditedHistory.doctor(c, dialect, settings);
                if (history != null) {
                    out.add(history);
                }
                try {
                    out.addAll(dialect.tableChecks(c, m));
                } catch (SQLException | RuntimeException e) {
                    jdbc.rollbackQuietly();
                    out.add(Check.ok("table files", "could not be read: " + Jdbc.firstLine(e.getMessage())));
                }
            }
        } catch (SQLException e) {
            out.add(Check.failed("connection", "cannot connect: " + Jdbc.firstLine(e.getMessage())
                    + Jdbc.sqlState(e)));
        }
        return new CheckReport(settings.name(), out);
    }

    /** The source query, its columns and their collation (a non-binary one on a key, sequence or tracked column fails). */
    private ResolvedModel source(Jdbc jdbc, List<Check> out) {
        try {
            ResolvedModel m = ModelResolver.resolveSource(jdbc, dialect, settings);
            String strings = m.sourceColumns().stream().filter(col -> col.valueType() == ValueType.STRING)
                    .map(col -> col.name() + " " + col.typeName()).collect(Collectors.joining(", "));
            out.add(Check.ok("source", m.recordNames().size() + " columns; " + (m.sequenceKey() != null
                    ? m.sequenceDescription() : "sequence_by " + m.sequenceBy() + " (" + m.sequenceColumn().typeName()
                    + ")") + ", updated_at " + m.updatedAt() + " ("
                    + m.updatedAtColumn().typeName() + ")"));
            out.add(Check.ok("collation", strings.isEmpty() ? "no string columns"
                    : "string columns compare binary: " + strings));
            return m;
        } catch (ItersnapException e) {
            boolean collation = e.getMessage().contains("collation");
            out.add(Check.failed(collation ? "collation" : "source", e.getMessage()));
            return null;
        } catch (SQLException e) {
            out.add(Check.failed("source", Jdbc.firstLine(e.getMessage())));
            return null;
        }
    }

    /**
     * Creates a probe table (its schema too) with every logical column type and the features of a shared table,
     * binds one value of each type the engine binds into it, reads them back through their getters, drops it.
     */
    private void probe(Jdbc jdbc, ResolvedModel m, TableName table, String where, boolean bindValues,
                       List<Check> out) {
        // DECIMAL and DATE as the database describes them, as it would a source's columns
        SourceColumn decimal;
        SourceColumn date;
        try {
            List<SourceColumn> typed = jdbc.describe(SqlSteps.of(dialect).describe(dev.itersnap.spi.Relation.query(
                    "SELECT CAST(1.5 AS DECIMAL(18,3)) AS d, DATE '2024-03-01' AS dt")));
            decimal = typed.get(0);
            date = typed.get(1);
        } catch (SQLException e) {
            out.add(Check.failed("create in " + where, "cannot describe DECIMAL and DATE values: "
                    + Jdbc.firstLine(e.getMessage())));
            return;
        }
        TableSpec spec = TableSpec.builder(table, TableSpec.Creation.IF_NOT_EXISTS).createSchema()
                .writers(TableSpec.Writers.MANY).column(m.id("s"), ColumnType.text(64))
                .column(m.id("b"), ColumnType.bool()).column(m.id("l"), ColumnType.bigint())
                .column(m.id("i"), ColumnType.integer()).column(m.id("d"), ColumnType.like(decimal))
                .column(m.id("dt"), ColumnType.like(date)).column(m.id("ts"), ColumnType.timestamp())
                .column(m.id("n"), ColumnType.text(64)).build();
        String name = table.parts().stream().map(dialect::quote).collect(Collectors.joining("."));
        try {
            for (Statement s : dialect.createTable(spec)) {
                jdbc.update(s.inStep("doctor"));
            }
        } catch (ItersnapException e) {
            out.add(Check.failed("create in " + where, "cannot create schema and table " + table + ": "
                    + e.getMessage()));
            return;
        }
        out.add(Check.ok("create in " + where, "created " + table + " (schema included) with the table features"
                + " of a shared table"));
        try {
            // a schema whose default collation is not binary gives itersnap's own text columns that collation
            for (SourceColumn col : jdbc.describe(SqlSteps.of(dialect).describe(dev.itersnap.spi.Relation.table(table)))) {
                String collation = ModelResolver.collation(col.typeName());
                if (collation != null) {
                    out.add(Check.failed("collation in " + where, "new text columns get collation " + collation
                            + " (the schema's default); itersnap's tables must compare binary: use a schema whose "
                            + "default collation is UTF8_BINARY"));
                    break;
                }
            }
        } catch (SQLException e) {
            out.add(Check.failed("create in " + where, "cannot describe the probe table: "
                    + Jdbc.firstLine(e.getMessage())));
        }
        try {
            if (bindValues) {
                out.add(binding(jdbc, m, name));
            }
        } finally {
            try {
                jdbc.update(Statement.of("doctor", "DROP TABLE " + name));
            } catch (ItersnapException e) {
                out.add(Check.failed("drop in " + where, "cannot drop the probe table " + table + ": "
                        + e.getMessage()));
            }
        }
    }

    private Check binding(Jdbc jdbc, ResolvedModel m, String table) {
        LocalDateTime ts = LocalDateTime.of(2024, 3, 10, 2, 30, 0, 123_000_000);
        List<Object> values = List.of("it's \\ ?", true, 9_007_199_254_740_993L, 7, new BigDecimal("12.345"),
                LocalDate.of(2024, 3, 1), ts);
        String cols = List.of("s", "b", "l", "i", "d", "dt", "ts", "n").stream().map(c -> dialect.quote(m.id(c)))
                .collect(Collectors.joining(", "));
        Statement.Builder insert = Statement.builder("doctor").sql("INSERT INTO " + table + " (" + cols
                + ") VALUES (");
        for (Object v : values) {
            insert.bind(v).sql(", ");
        }
        insert.bind(null).sql(")");
        try {
            jdbc.update(insert.build());
            List<List<Object>> rows = jdbc.query(Statement.of("doctor", "SELECT " + cols + " FROM " + table), rs -> {
                List<Object> row = new ArrayList<>();
                row.add(rs.getString(1));
                row.add(rs.getBoolean(2));
                row.add(rs.getLong(3));
                row.add(rs.getInt(4));
                BigDecimal d = rs.getBigDecimal(5);
                row.add(d == null ? null : d.setScale(3));
                row.add(SqlValues.readLocalDate(rs, 6));
                row.add(SqlValues.readLocalDateTime(rs, 7));
                row.add(rs.getString(8));
                return row;
            });
            Object back = rows.isEmpty() ? null : rows.get(0);
            List<Object> expected = new ArrayList<>(values);
            expected.add(null);
            if (!Objects.equals(expected, back)) {
                return Check.failed("binding", "values did not come back as bound: sent " + expected + ", read "
                        + back);
            }
            return Check.ok("binding", "text, boolean, bigint, int, decimal, date, timestamp and NULL bound with "
                    + "their setters and read back equal");
        } catch (ItersnapException e) {
            return Check.failed("binding", e.getMessage());
        }
    }
}
