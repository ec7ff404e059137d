package dev.itersnap.conformance;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

import dev.itersnap.core.ModelSettings;

import javax.sql.DataSource;
import java.util.ArrayList;
import java.util.List;

/**
 * Base of the conformance suite's abstract test classes. A dialect module runs the suite by subclassing each test
 * class and supplying a fresh, empty database per test through {@link #newDatabase()}.
 *
 * <p>Every test gets {@link #fixture}, a {@link SnapshotFixture} over its own database. Tests that need more
 * databases (fault injection builds one per fault point) call {@link #newFixture()} and may {@link #release} it early;
 * whatever is left is discarded after the test.
 */
public abstract class ConformanceTestBase {
    /**
     * Tag for a test that exposes an open engine bug (see conformance/README.md). Such a test is also
     * {@code @Disabled("ENGINE BUG n: ...")} so the build stays green; run them with
     * {@code -Djunit.jupiter.conditions.deactivate=org.junit.*DisabledCondition -Dgroups=engine-bug}.
     */
    public static final String ENGINE_BUG = "engine-bug";

    /** The database of the running test. */
    protected SnapshotFixture fixture;

    private final List<SnapshotFixture> open = new ArrayList<>();

    /** The database under test, as the dialect module supplies it (the same one the property test uses). */
    protected abstract TestDatabase database();

    /**
     * A fresh, empty database (no tables, no itersnap metadata). Its data source must hand out independent
     * connections to the same database: a run holds one for the model lock while it works on another. Identifiers
     * are used unquoted, so the database folds them its usual way.
     */
    protected DataSource newDatabase() {
        return database().newDatabase(getClass().getSimpleName());
    }

    /** Releases a database made by {@link #newDatabase()} (drop, shut down). */
    protected void discard(DataSource database) {
        database().discard(database);
    }

    /**
     * The database's spelling of an ANSI column type used by the raw tables ({@code INT}, {@code BIGINT},
     * {@code VARCHAR(20)}, {@code DATE}, {@code TIMESTAMP}, {@code DECIMAL(10,2)}, {@code DOUBLE PRECISION},
     * {@code BOOLEAN}). Default: unchanged.
     */
    protected String type(String ansiType) {
        return database().type(ansiType);
    }

    // ------------------------------------------------------------------ the suite's usual model

    /** Model name used by the scenarios. */
    protected static final String MODEL = "customers";
    /** History table used by the scenarios. */
    protected static final String TARGET = "snap_customers";

    /**
     * The usual raw table: {@code raw_customers (id INT, status VARCHAR(20), tier VARCHAR(20), updated_at TIMESTAMP,
     * file_date DATE)}, one daily file per {@code file_date}.
     */
    protected static RawTable customers(SnapshotFixture f) {
        return f.rawTable("raw_customers", "id INT", "status VARCHAR(20)", "tier VARCHAR(20)", "updated_at TIMESTAMP",
                "file_date DATE");
    }

    /** The usual model over a raw table: key {@code id}, {@code updated_at}, sequence {@code file_date}. */
    protected static ModelSettings.Builder model(RawTable raw) {
        return model(raw, "file_date");
    }

    /** The usual model over a raw table with another sequence column. */
    protected static ModelSettings.Builder model(RawTable raw, String sequenceBy) {
        return ModelSettings.builder(MODEL).target(TARGET).source(raw.selectAll()).uniqueKey("id")
                .updatedAt("updated_at").sequenceBy(sequenceBy);
    }

    @BeforeEach
    final void openDatabase() {
        fixture = newFixture();
    }

    @AfterEach
    final void discardDatabases() {
        for (SnapshotFixture f : List.copyOf(open)) {
            discardQuietly(f);
        }
        open.clear();
    }

    /**
     * A fixture over one more fresh database, discarded after the test at the latest. The database is made when the
     * fixture first uses it.
     */
    protected final SnapshotFixture newFixture() {
        SnapshotFixture f = new SnapshotFixture(this::newDatabase, this::type).dialect(database().dialect());
        open.add(f);
        return f;
    }

    /**
     * A fixture over a copy of {@code template}'s database (its tables and rows as they are now), discarded after the
     * test at the latest; null when the database cannot copy one ({@link TestDatabase#copyOf}).
     */
    protected final SnapshotFixture copyOf(SnapshotFixture template) {
        DataSource copy = database().copyOf(template.dataSource());
        if (copy == null) {
            return null;
        }
        SnapshotFixture f = new SnapshotFixture(() -> copy, this::type).dialect(database().dialect());
        f.dataSource();
        open.add(f);
        return f;
    }

    /** Discards a fixture's database now (for tests that make many). */
    protected final void release(SnapshotFixture f) {
        if (open.remove(f)) {
            discardQuietly(f);
        }
    }

    private void discardQuietly(SnapshotFixture f) {
        if (!f.hasDatabase()) {
            return;
        }
        try {
            discard(f.dataSource());
        } catch (RuntimeException ignored) {
            // a database that cannot be discarded must not fail the test that used it
        }
    }
}
