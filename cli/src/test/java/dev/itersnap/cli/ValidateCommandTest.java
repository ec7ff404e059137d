package dev.itersnap.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code itersnap validate} on file-based H2: never writes, one line per problem. */
class ValidateCommandTest {
    @TempDir
    Path dir;

    private Execution validate(H2Model db, String from, String to) throws Exception {
        Files.writeString(db.config, Files.readString(db.config).replace(from, to));
        return db.cli("validate");
    }

    private static void assertNothingWritten(H2Model db) throws Exception {
        assertThat(db.rows("SELECT table_name FROM information_schema.tables WHERE table_schema <> 'INFORMATION_SCHEMA'"
                + " ORDER BY 1")).containsExactly("RAW_CUSTOMERS|");
    }

    @Test
    void aGoodModelIsValidAndItsColumnsAreResolved() throws Exception {
        H2Model db = new H2Model(dir, "delete_when: \"status = 'Deleted'\"\n");

        Execution e = db.cli("validate");

        assertThat(e.exitCode()).as(e.err()).isZero();
        assertThat(e.out()).startsWith("valid: model customers -> customers_history")
                .contains("unique_key:  CUSTOMER_ID").contains("sequence_by: FILE_DATE (date)")
                .contains("tracked:     STATUS, TIER").contains("delete_when: status = 'Deleted'");
        assertNothingWritten(db);
    }

    /**
     * Issue 36: a source whose last line is a {@code --} comment failed with "syntax error at end of input" in every
     * command (the comment ate the parenthesis around the source); validate, a run with a delete_when, status and
     * doctor read it like any other.
     */
    @Test
    void aSourceEndingInALineCommentIsRead() throws Exception {
        H2Model db = new H2Model(dir, "delete_when: \"status = 'Deleted'\"\n");
        Files.writeString(db.config, Files.readString(db.config).replace("FROM raw_customers\n",
                "FROM raw_customers -- one file a day\n"));
        db.load(1, "Active", "basic", "2024-01-01T09:00", "2024-01-01");

        for (String command : new String[] {"validate", "run", "status", "doctor"}) {
            Execution e = db.cli(command);
            assertThat(e.exitCode()).as(command + ": " + e.err()).isZero();
        }
        assertThat(db.rows("SELECT customer_id, status FROM customers_history")).containsExactly("1|Active|");
    }

    @Test
    void aMissingColumnIsNamed() throws Exception {
        H2Model db = new H2Model(dir);
        Execution e = validate(db, "unique_key: customer_id", "unique_key: [customer_id, region]");
        assertThat(e.exitCode()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(e.errLines()).hasSize(1);
        assertThat(e.err()).contains("setting 'unique_key' names column 'region'");
        assertNothingWritten(db);
    }

    @Test
    void checkColsMustExist() throws Exception {
        H2Model db = new H2Model(dir, "check_cols: [status, colour]\n");
        Execution e = db.cli("validate");
        assertThat(e.exitCode()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(e.err()).contains("'check_cols' names column 'colour'");
    }

    @Test
    void theSequenceMustBeOrderable() throws Exception {
        H2Model db = new H2Model(dir);
        db.execute("ALTER TABLE raw_customers ADD COLUMN batch_blob VARBINARY(10)");
        Execution e = validate(db, "sequence_by: file_date\n", "sequence_by: batch_blob\n");
        Files.writeString(db.config, Files.readString(db.config).replace("file_date FROM", "file_date, batch_blob FROM"));
        e = db.cli("validate");
        assertThat(e.exitCode()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(e.errLines()).hasSize(1);
        assertThat(e.err()).contains("'sequence_by' column 'BATCH_BLOB' has type").contains("not a DATE, TIMESTAMP");
    }

    @Test
    void deleteWhenMustParse() throws Exception {
        H2Model db = new H2Model(dir, "delete_when: \"op = 'D'\"\n");
        Execution e = db.cli("validate");
        assertThat(e.exitCode()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(e.errLines()).hasSize(1);
        assertThat(e.err()).contains("'delete_when' is not a valid predicate");
        assertNothingWritten(db);
    }

    @Test
    void theSourceMustRun() throws Exception {
        H2Model db = new H2Model(dir);
        Execution e = validate(db, "FROM raw_customers", "FROM raw_customer");
        assertThat(e.exitCode()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(e.errLines()).hasSize(1);
        assertThat(e.err()).contains("cannot read the source query");
    }

    @Test
    void aBadSettingFailsBeforeConnecting() throws Exception {
        H2Model db = new H2Model(dir, "hard_deletes: sometimes\n");
        Execution e = Execution.of("validate", "--jdbc-url", "jdbc:nosuchdb://nowhere", "--config",
                db.config.toString());
        assertThat(e.exitCode()).isEqualTo(ExitCodes.CONFIGURATION);
        assertThat(e.errLines()).hasSize(1);
        assertThat(e.err()).contains("hard_deletes");
    }
}
