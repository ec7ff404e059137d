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
    void masksThePasswordOfTheUserInformationInEveryUrlForm() {
        assertThat(Secrets.mask("cannot connect to jdbc:postgresql://snap:hunter2@127.0.0.1:55431/wh: x"))
                .isEqualTo("cannot connect to jdbc:postgresql://snap:***@127.0.0.1:55431/wh: x");
        assertThat(Secrets.mask("jdbc:databricks://token:dapi0123secret@adb-1.net:443/default;transportMode=http"))
                .isEqualTo("jdbc:databricks://token:***@adb-1.net:443/default;transportMode=http");
        assertThat(Secrets.mask("jdbc:databricks://token:dapi0123secret@adb-1.net:443;httpPath=/sql/1"))
                .isEqualTo("jdbc:databricks://token:***@adb-1.net:443;httpPath=/sql/1");
        assertThat(Secrets.mask("jdbc:h2:tcp://sa:hunter2@127.0.0.1:9092/~/wh"))
                .isEqualTo("jdbc:h2:tcp://sa:***@127.0.0.1:9092/~/wh");
        assertThat(Secrets.mask("https://etl:hunter2@example.com/path")).isEqualTo("https://etl:***@example.com/path");
        // an @ or a quote inside the password is masked with it: the password runs to the last @ before the host
        assertThat(Secrets.mask("jdbc:postgresql://snap:hun@ter2@127.0.0.1:55431/wh"))
                .isEqualTo("jdbc:postgresql://snap:***@127.0.0.1:55431/wh");
        assertThat(Secrets.mask("jdbc:postgresql://snap:it's@db/wh")).isEqualTo("jdbc:postgresql://snap:***@db/wh");
        // drivers quote the host they could not resolve without the scheme
        assertThat(Secrets.mask("Caused by: java.net.UnknownHostException: snap:hunter2@127.0.0.1"))
                .isEqualTo("Caused by: java.net.UnknownHostException: snap:***@127.0.0.1");
        assertThat(Secrets.mask("UnknownHostException: snap:hun@ter2@127.0.0.1"))
                .isEqualTo("UnknownHostException: snap:***@127.0.0.1");
        assertThat(Secrets.mask("host 'snap:hunter2@db' not found")).isEqualTo("host 'snap:***@db' not found");
    }

    @Test
    void masksKnownSecretsWhereverTheyAppear() {
        String url = "jdbc:h2:tcp://sa:hunter2@127.0.0.1:55431/~/wh";
        assertThat(Secrets.userInfoPassword(url)).isEqualTo("hunter2");
        assertThat(Secrets.userInfoPassword("jdbc:postgresql://db:5432/w?user=etl")).isNull();
        assertThat(Secrets.userInfoPassword(null)).isNull();
        // H2 quotes the password alone, as the port it could not read
        assertThat(Secrets.mask("For input string: \"hunter2@127.0.0.1:55431\"", java.util.List.of("hunter2")))
                .isEqualTo("For input string: \"***@127.0.0.1:55431\"");
        assertThat(Secrets.mask("user 'sa', " + url, java.util.Arrays.asList("hunter2", null, "abc")))
                .isEqualTo("user 'sa', jdbc:h2:tcp://sa:***@127.0.0.1:55431/~/wh");
    }

    @Test
    void leavesOrdinaryTextAlone() {
        for (String s : new String[] {"FATAL: password authentication failed for user \"etl\"",
                "setting 'sequence_by' names column 'file_date'", "jdbc:postgresql://db:5432/w?user=etl&ssl=true",
                "jdbc:databricks://h;AuthMech=3;UID=token", "", null, "model 'm': batch (2024-01-05, 3) at 10:30",
                "mail etl@example.com: done", "jdbc:postgresql://db:5432/w", "ratio 3:4 @ 10 rows"}) {
            assertThat(Secrets.mask(s)).isEqualTo(s);
        }
    }

    @Test
    void exceptionsMaskTheirMessage() {
        ItersnapException e = new ItersnapException(ErrorCode.DATABASE_ERROR, "cannot connect to jdbc:x://h;pwd=abc");
        assertThat(e.getMessage()).isEqualTo("cannot connect to jdbc:x://h;pwd=***");
    }
}
