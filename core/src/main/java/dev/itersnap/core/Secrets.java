package dev.itersnap.core;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Masks secrets in text meant for people: every error message ({@link ItersnapException} masks its own), log line,
 * event and command output. A secret is the value of a secret-looking property in a JDBC URL or a message
 * ({@code password=}, {@code PWD=}, {@code token=}, {@code secret=}, {@code OAuth2ClientSecret=},
 * {@code Auth_AccessToken=}, {@code apiKey=}, {@code credentials=} ..., any case, separated by {@code ;}, {@code &},
 * {@code ?}, spaces or quotes) and the password of a URL's user information ({@code //user:password@host}).
 * Thread-safe.
 */
public final class Secrets {
    /** What a masked value reads as. */
    public static final String MASK = "***";

    private static final Pattern PROPERTY = Pattern.compile("(?i)((?<![A-Za-z0-9])[A-Za-z0-9_.-]*(?:password|passwd|pwd"
            + "|secret|token|credential|api_?key|access_?key|private_?key)[A-Za-z0-9_.-]*[\"']?\\s*[=:]\\s*[\"']?)"
            + "([^;&\\s'\"]+)"); // to the next separator: a comma or bracket may be part of the secret
    private static final Pattern USER_INFO = Pattern.compile("(//[^/@:\\s;?&]+:)([^@/\\s]+)(@)");

    private Secrets() {
    }

    /** {@code text} with every secret replaced by {@link #MASK}; null stays null. */
    public static String mask(String text) {
        if (text == null || text.isEmpty()) {
            return text;
        }
        String out = USER_INFO.matcher(text).replaceAll(r -> Matcher.quoteReplacement(r.group(1) + MASK + r.group(3)));
        return PROPERTY.matcher(out).replaceAll(r -> r.group(2).equals(MASK) ? Matcher.quoteReplacement(r.group())
                : Matcher.quoteReplacement(r.group(1) + MASK));
    }
}
