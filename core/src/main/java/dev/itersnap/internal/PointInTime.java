package dev.itersnap.internal;

import dev.itersnap.core.AsOf;
import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.TableName;
import dev.itersnap.internal.sql.SqlSteps;
import dev.itersnap.spi.Dialect;
import dev.itersnap.spi.Statement;

import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;

/** Point-in-time reads of a model's history: the SQL, and views over it. Internal; see IterativeSnapshot. */
public final class PointInTime {
    private final DataSource dataSource;
    private final Dialect dialect;
    private final ModelSettings settings;

    public PointInTime(DataSource dataSource, Dialect dialect, ModelSettings settings) {
        this.dataSource = dataSource;
        this.dialect = dialect;
        this.settings = settings;
    }

    public String sql(AsOf asOf) {
        try (Connection c = dataSource.getConnection()) {
            return query(new Jdbc(c, settings.name(), dialect), asOf, false).sql();
        } catch (SQLException e) {
            throw new Jdbc(null, settings.name()).failure("point in time", null, e);
        }
    }

    public String createView(AsOf asOf, String view) {
        TableName name = TableName.parse("view", view);
        try (Connection c = dataSource.getConnection()) {
            Jdbc jdbc = new Jdbc(c, settings.name(), dialect);
            Statement query = query(jdbc, asOf, true);
            TableName folded = new TableName(name.parts().stream().map(Jdbc.folding(c, dialect)).toList());
            Statement ddl = SqlSteps.of(dialect).createView(folded, query);
            c.setAutoCommit(true);
            jdbc.update(ddl);
            return ddl.sql();
        } catch (SQLException e) {
            throw new Jdbc(null, settings.name()).failure("create view", null, e);
        }
    }

    /** {@code forView}: the query defines a view, which must not depend on what exists when it is made. */
    private Statement query(Jdbc jdbc, AsOf asOf, boolean forView) throws SQLException {
        ModelResolver.Resolution r = ModelResolver.resolve(jdbc, dialect, settings);
        ResolvedModel m = r.model();
        if (r.targetColumns() == null) {
            throw new ItersnapException(ErrorCode.INVALID_SETTING, "model '" + settings.name() + "': target "
                    + m.target() + " does not exist yet; run the model first");
        }
        boolean bySequence = asOf instanceof AsOf.Sequence;
        if (asOf instanceof AsOf.KnownAt k) {
            return KnownAtRead.query(jdbc, dialect, m, r.targetColumns(), k);
        }
        if (asOf instanceof AsOf.Bitemporal) {
            return KnownAtRead.bitemporal(jdbc, dialect, m, r.targetColumns(), forView);
        }
        try {
            return SqlSteps.of(dialect).asOf(m, asOf);
        } catch (IllegalArgumentException e) {
            throw new ItersnapException(ErrorCode.INVALID_SEQUENCE, "model '" + settings.name() + "': cannot read "
                    + asOf.value() + " as " + (bySequence ? "a sequence (" + m.sequenceDescription() + ")"
                    : "a time (updated_at '" + m.updatedAt() + "')") + ": " + e.getMessage());
        }
    }
}
