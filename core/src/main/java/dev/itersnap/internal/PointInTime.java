package dev.itersnap.internal;

import dev.itersnap.core.AsOf;
import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.ItersnapException;
import dev.itersnap.core.ModelSettings;
import dev.itersnap.core.TableName;
import dev.itersnap.spi.Dialect;
import dev.itersnap.spi.ResolvedModel;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;

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
            return sql(c, asOf);
        } catch (SQLException e) {
            throw new Jdbc(null, settings.name()).failure("point in time", null, e);
        }
    }

    public String createView(AsOf asOf, String view) {
        TableName name = TableName.parse("view", view);
        try (Connection c = dataSource.getConnection()) {
            String query = sql(c, asOf);
            ModelResolver.Resolution r = ModelResolver.resolve(c, dialect, settings);
            TableName folded = new TableName(name.parts().stream().map(r.model().fold()).toList());
            String ddl = "CREATE VIEW " + ModelResolver.qualified(dialect, folded) + " AS " + query;
            c.setAutoCommit(true);
            new Jdbc(c, settings.name()).update("create view", ddl);
            return ddl;
        } catch (SQLException e) {
            throw new Jdbc(null, settings.name()).failure("create view", null, e);
        }
    }

    private String sql(Connection c, AsOf asOf) throws SQLException {
        ModelResolver.Resolution r = ModelResolver.resolve(c, dialect, settings);
        ResolvedModel m = r.model();
        if (r.targetColumns() == null) {
            throw new ItersnapException(ErrorCode.INVALID_SETTING, "model '" + settings.name() + "': target "
                    + m.target() + " does not exist yet; run the model first");
        }
        boolean bySequence = asOf instanceof AsOf.Sequence;
        try {
            String literal = dialect.literal(bySequence ? m.sequenceColumn() : m.updatedAtColumn(), asOf.value());
            return dialect.asOf(m, bySequence, literal);
        } catch (IllegalArgumentException e) {
            throw new ItersnapException(ErrorCode.INVALID_SEQUENCE, "model '" + settings.name() + "': cannot read "
                    + asOf.value() + " as " + (bySequence ? "a sequence (sequence_by '" + m.sequenceBy() + "')"
                    : "a time (updated_at '" + m.updatedAt() + "')") + ": " + e.getMessage());
        }
    }
}
