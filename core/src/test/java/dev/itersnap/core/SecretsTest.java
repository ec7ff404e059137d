package dev.itersnap.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

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
        assertThat(Secrets.mask("jdbc:h2:/data/w;USER=sa;PASSWORD=x y")).isEqualTo("jdbc:h2:/data/w;USER=sa;PASSWORD=***");
        // a comma or bracket inside a secret does not end it (masking a little more is safe, showing a part is not)
        assertThat(Secrets.mask("jdbc:postgresql://db/w?user=etl&password=a,b)c]d}e&ssl=true"))
                .isEqualTo("jdbc:postgresql://db/w?user=etl&password=***&ssl=true");
        assertThat(Secrets.mask("{user=etl, password=p,q}")).isEqualTo("{user=etl, password=***");
        assertThat(Secrets.mask("failed: apiKey='k-123', sslpassword=\"p\""))
                .isEqualTo("failed: apiKey='***', sslpassword=\"***\"");
    }

    /**
     * Issue 36: a password with a space was shown in part ({@code password=*** Pw#123}). Every form a driver reads is
     * masked whole: the value runs to the separator of its URL's style ({@code &} after {@code ?} or {@code &},
     * {@code ;} after {@code ;}), to the end of the line in other text, or to its closing quote or brace.
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
            PostgreSQL, a space and #       | jdbc:postgresql://db:5432/w?user=etl&password=Wrong Pw#123&ssl=true | jdbc:postgresql://db:5432/w?user=etl&password=***&ssl=true
            PostgreSQL, at the end          | jdbc:postgresql://db/w?password=Wrong Pw#123                        | jdbc:postgresql://db/w?password=***
            PostgreSQL, a ; inside          | jdbc:postgresql://db/w?password=a;b c&ssl=true                      | jdbc:postgresql://db/w?password=***&ssl=true
            PostgreSQL, percent-encoded     | jdbc:postgresql://db/w?password=Wrong%20Pw%23123&ssl=true           | jdbc:postgresql://db/w?password=***&ssl=true
            PostgreSQL, quotes inside       | jdbc:postgresql://db/w?password=it's "q" x&ssl=true                 | jdbc:postgresql://db/w?password=***&ssl=true
            PostgreSQL, an @ inside         | jdbc:postgresql://db/w?sslpassword=p@ss word&user=etl               | jdbc:postgresql://db/w?sslpassword=***&user=etl
            PostgreSQL, a quoted value      | jdbc:postgresql://db/w?password='Wrong Pw'&ssl=true                 | jdbc:postgresql://db/w?password='***'&ssl=true
            PostgreSQL, quote then more     | jdbc:postgresql://db/w?password='Wrong'Pw&ssl=true                  | jdbc:postgresql://db/w?password=***&ssl=true
            H2, a space at the end          | jdbc:h2:/data/w;USER=sa;PASSWORD=Secret Pw                          | jdbc:h2:/data/w;USER=sa;PASSWORD=***
            H2, a space before a setting    | jdbc:h2:/data/w;PASSWORD=Secret Pw;MODE=PostgreSQL                  | jdbc:h2:/data/w;PASSWORD=***;MODE=PostgreSQL
            H2, an & and a #                | jdbc:h2:/data/w;PASSWORD=a&b #c;MODE=PostgreSQL                     | jdbc:h2:/data/w;PASSWORD=***;MODE=PostgreSQL
            H2, the URL in a message        | cannot connect to jdbc:h2:/w;PASSWORD=Secret Pw: Wrong user name    | cannot connect to jdbc:h2:/w;PASSWORD=***
            Databricks PWD, space # @       | jdbc:databricks://adb-1.net:443/default;UID=token;PWD=dapi 12#3@x;httpPath=/sql/1 | jdbc:databricks://adb-1.net:443/default;UID=token;PWD=***;httpPath=/sql/1
            Databricks PWD, an @ after a port | jdbc:databricks://adb-1.net:443;PWD=p@ss;httpPath=/sql/1         | jdbc:databricks://adb-1.net:443;PWD=***;httpPath=/sql/1
            Databricks PWD in braces        | jdbc:databricks://adb-1.net:443;PWD={a;b c};httpPath=/sql/1         | jdbc:databricks://adb-1.net:443;PWD={***};httpPath=/sql/1
            Databricks access token         | jdbc:databricks://h;AuthMech=11;Auth_AccessToken=ey J&x;Auth_Flow=1 | jdbc:databricks://h;AuthMech=11;Auth_AccessToken=***;Auth_Flow=1
            Databricks token user info      | jdbc:databricks://token:dapi 12#3@adb-1.net:443/default;ssl=1       | jdbc:databricks://token:***@adb-1.net:443/default;ssl=1
            user info, a space and #        | jdbc:postgresql://etl:Wrong Pw#1@db:5432/w                          | jdbc:postgresql://etl:***@db:5432/w
            user info, an @ and a space     | jdbc:postgresql://etl:p@ss w@db:5432/w                              | jdbc:postgresql://etl:***@db:5432/w
            user info, percent-encoded      | jdbc:postgresql://etl:Wrong%20Pw%40x@db:5432/w                      | jdbc:postgresql://etl:***@db:5432/w
            a quoted value in a message     | login with password='Wrong Pw' refused                              | login with password='***' refused
            a JSON property                 | `{"password": "Wrong Pw", "rows": 1}`                               | `{"password": "***", "rows": 1}`
            a JSON property, escaped quote  | `{"password":"a\\"b c", "rows": 1}`                                 | `{"password":***`
            a property in text              | password: Wrong Pw                                                  | password: ***
            Properties.toString             | {user=etl, password=Wrong Pw, ssl=true}                             | {user=etl, password=***
            masked already                  | jdbc:h2:/w;PASSWORD=***: Wrong user name                            | jdbc:h2:/w;PASSWORD=***: Wrong user name
            """)
    void masksEveryFormOfAPasswordWhole(String form, String text, String masked) {
        assertThat(Secrets.mask(text)).as(form).isEqualTo(masked);
        assertThat(Secrets.mask(masked)).as("masking twice changes nothing").isEqualTo(masked);
        assertThat(Secrets.mask(text + "\nnext line")).as("a value ends at its line's end").endsWith("\nnext line");
    }

    @Test
    void theSecretsOfAUrlAreTheValuesItsDriverReads() {
        assertThat(Secrets.of("jdbc:h2:/data/w;USER=sa;PASSWORD=Secret Pw;MODE=PostgreSQL"))
                .containsExactly("Secret Pw");
        assertThat(Secrets.of("jdbc:postgresql://etl:a b@db/w?password='Wrong Pw'&sslpassword=x;y&ssl=true"))
                .containsExactly("a b", "Wrong Pw", "'Wrong Pw'", "x;y");
        assertThat(Secrets.of("jdbc:h2:mem:w")).isEmpty();
        assertThat(Secrets.of(null)).isEmpty();
        // a driver that quotes the value alone: masked wherever it appears
        assertThat(Secrets.mask("authentication failed for \"Secret Pw\"", Secrets.of("jdbc:h2:/w;PASSWORD=Secret Pw")))
                .isEqualTo("authentication failed for \"***\"");
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
