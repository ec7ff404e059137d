package dev.itersnap.core;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Secrets in URLs and messages are masked; everything else is left as it is. */
class SecretsTest {
    @Test
    void masksSecretLookingPropertiesInEveryUrlStyle() {
        assertThat(Secrets.mask("jdbc:postgresql://db:5432/w?user=etl&password=hunter2&ssl=true"))
                .isEqualTo("jdbc:postgresql://db:5432/w?user=etl&password=***&ssl=true");
        assertThat(Secrets.mask("jdbc:databricks://adb-1.net:443/default;transportMode=http;AuthMech=3;UID=token;"
                + "PWD=dapi0123;httpPath=/sql/1"))
                .isEqualTo("jdbc:databricks://adb-1.net:443/default;transportMode=http;AuthMech=3;UID=token;PWD=***;"
                        + "httpPath=/sql/1");
        assertThat(Secrets.mask("jdbc:databricks://h;AuthMech=11;Auth_Flow=1;OAuth2ClientId=abc;OAuth2Secret=s3cr3t;"
                + "Auth_AccessToken=eyJhbGci"))
                .isEqualTo("jdbc:databricks://h;AuthMech=11;Auth_Flow=1;OAuth2ClientId=abc;OAuth2Secret=***;"
                        + "Auth_AccessToken=***");
        assertThat(Secrets.mask("jdbc:mysql://etl:hunter2@db:3306/w")).isEqualTo("jdbc:mysql://etl:***@db:3306/w");
        assertThat(Secrets.mask("jdbc:h2:/data/w;USER=sa;PASSWORD=x y")).isEqualTo("jdbc:h2:/data/w;USER=sa;PASSWORD=*** y");
        // a comma or bracket inside a secret does not end it (masking a little more is safe, showing a part is not)
        assertThat(Secrets.mask("jdbc:postgresql://db/w?user=etl&password=a,b)c]d}e&ssl=true"))
                .isEqualTo("jdbc:postgresql://db/w?user=etl&password=***&ssl=true");
        assertThat(Secrets.mask("{user=etl, password=p,q}")).isEqualTo("{user=etl, password=***");
        assertThat(Secrets.mask("failed: apiKey='k-123', sslpassword=\"p\""))
                .isEqualTo("failed: apiKey='***', sslpassword=\"***\"");
    }

    @Test
    void leavesOrdinaryTextAlone() {
        for (String s : new String[] {"FATAL: password authentication failed for user \"etl\"",
                "setting 'sequence_by' names column 'file_date'", "jdbc:postgresql://db:5432/w?user=etl&ssl=true",
                "jdbc:databricks://h;AuthMech=3;UID=token", "", null}) {
            assertThat(Secrets.mask(s)).isEqualTo(s);
        }
    }

    @Test
    void exceptionsMaskTheirMessage() {
        ItersnapException e = new ItersnapException(ErrorCode.DATABASE_ERROR, "cannot connect to jdbc:x://h;pwd=abc");
        assertThat(e.getMessage()).isEqualTo("cannot connect to jdbc:x://h;pwd=***");
    }
}
