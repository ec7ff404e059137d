package dev.itersnap.core;

import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Masks secrets in text meant for people: every error message ({@link ItersnapException} masks its own), log line,
 * event and command output. A secret is the value of a secret-looking property in a JDBC URL or a message
 * ({@code password=}, {@code PWD=}, {@code token=}, {@code secret=}, {@code OAuth2ClientSecret=},
 * {@code Auth_AccessToken=}, {@code apiKey=}, {@code credentials=} ..., any case, separated by {@code ;}, {@code &},
 * {@code ?}, spaces or quotes) and the password of a URL's user information, in every URL form ({@code
 * jdbc:postgresql://user:password@host}, {@code jdbc:databricks://token:password@host:443/...}, {@code
 * scheme://user:password@host}) and where a driver quotes the user information without the scheme ({@code
 * UnknownHostException: user:password@host}). The password runs to the last {@code @} before the host, so an
 * {@code @} inside it is masked too. A driver may also quote the password alone (H2: {@code For input string:
 * "password@host:port"}): {@link #mask(String, Collection)} masks the known secrets of a command (the password of
 * its URL's user information, {@link #userInfoPassword}) wherever they appear. Thread-safe.
 */
public final class Secrets {
    /** What a masked value reads as. */
    public static final String MASK = "***";

    private static final Pattern PROPERTY = Pattern.compile("(?i)((?<![A-Za-z0-9])[A-Za-z0-9_.-]*(?:password|passwd|pwd"
            + "|secret|token|credential|api_?key|access_?key|private_?key)[A-Za-z0-9_.-]*[\"']?\\s*[=:]\\s*[\"']?)"
            + "([^;&\\s'\"]+)"); // to the next separator: a comma or bracket may be part of the secret
    /** {@code //user:password@}: the password to the last {@code @} before a {@code /} or a space. */
    private static final Pattern USER_INFO = Pattern.compile("(//[^/@:\\s;?&'\"]+:)([^/\\s]*[^/\\s@])(@)");
    /**
     * {@code user:password@host} without the {@code //}, as drivers quote a host they could not resolve: a word at
     * the start of the text or after a space, quote or bracket, a colon, the password and an {@code @} before a host.
     */
    private static final Pattern BARE_USER_INFO = Pattern.compile(
            "((?:^|(?<=[\\s'\"(\\[<=,]))[A-Za-z0-9._~%!$+-]+:)([^/\\s'\"]*[^/\\s'\"@])(@)(?=[A-Za-z0-9\\[])");
    /** The shortest known secret masked wherever it appears: a shorter one would mask ordinary words. */
    static final int MIN_LITERAL_LENGTH = 4;

    private Secrets() {
    }

    /** {@code text} with every secret replaced by {@link #MASK}; null stays null. */
    public static String mask(String text) {
        if (text == null || text.isEmpty()) {
            return text;
        }
        String out = USER_INFO.matcher(text).replaceAll(r -> Matcher.quoteReplacement(r.group(1) + MASK + r.group(3)));
        out = BARE_USER_INFO.matcher(out).replaceAll(r -> Matcher.quoteReplacement(r.group(1) + MASK + r.group(3)));
        // a value already masked is left alone: "token:***@host" is the user-info form Databricks documents
        return PROPERTY.matcher(out).replaceAll(r -> r.group(2).equals(MASK) || r.group(2).startsWith(MASK + "@")
                ? Matcher.quoteReplacement(r.group())
                : Matcher.quoteReplacement(r.group(1) + MASK));
    }

    /**
     * {@code text} masked as {@link #mask(String)} does, and every occurrence of each of the {@code known} secrets
     * (the password of the command's URL, ...) replaced by {@link #MASK} wherever it appears, for the messages that
     * quote a secret alone; secrets shorter than {@value #MIN_LITERAL_LENGTH} characters are masked only where
     * {@link #mask(String)} finds them.
     */
    public static String mask(String text, Collection<String> known) {
        if (text == null || text.isEmpty()) {
            return text;
        }
        String out = text;
        List<String> longestFirst = known.stream().filter(k -> k != null && k.length() >= MIN_LITERAL_LENGTH)
                .sorted(Comparator.comparingInt(String::length).reversed()).toList();
        for (String k : longestFirst) {
            out = out.replace(k, MASK);
        }
        return mask(out);
    }

    /** The password of {@code url}'s user information ({@code //user:password@host}), or null when it has none. */
    public static String userInfoPassword(String url) {
        if (url == null) {
            return null;
        }
        Matcher m = USER_INFO.matcher(url);
        return m.find() ? m.group(2) : null;
    }
}
