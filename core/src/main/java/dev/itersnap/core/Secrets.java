package dev.itersnap.core;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Masks secrets in text meant for people: every error message ({@link ItersnapException} masks its own), log line,
 * event and command output. A secret is the value of a secret-looking property in a JDBC URL or a message
 * ({@code password=}, {@code PWD=}, {@code token=}, {@code secret=}, {@code OAuth2ClientSecret=},
 * {@code Auth_AccessToken=}, {@code apiKey=}, {@code credentials=} ..., any case, with {@code =} or {@code :}) and the
 * password of a URL's user information, in every URL form ({@code jdbc:postgresql://user:password@host}, {@code
 * jdbc:databricks://token:password@host:443/...}, {@code scheme://user:password@host}) and where a driver quotes the
 * user information without the scheme ({@code UnknownHostException: user:password@host}).
 *
 * <p>A value is masked whole, as the driver reads it, whatever it holds (spaces, {@code #}, quotes, {@code @},
 * percent-encoding, the other style's separator): a property of a URL's query ({@code ?password=} or {@code
 * &password=}, PostgreSQL's style) runs to the next {@code &}; a property after a {@code ;} (H2, DuckDB, Databricks)
 * to the next {@code ;}; a property in other text to the end of the line. A value in quotes or braces ({@code
 * 'p w'}, {@code "p w"}, {@code {p;w}}) runs to its closing quote or brace when a separator, a space or the end
 * follows it. A value that starts with {@link #MASK} is taken as masked already, so masking twice changes nothing.
 * The password of user information runs to the last {@code @} before the host, so an {@code @} or a space inside it is
 * masked too. A driver may also quote the password alone (H2: {@code For input string: "password@host:port"}):
 * {@link #mask(String, Collection)} masks the known secrets of a command ({@link #of(String)}: the secrets of its
 * URL) wherever they appear. Masking more than the secret is safe; showing a part of it is not. Thread-safe.
 */
public final class Secrets {
    /** What a masked value reads as. */
    public static final String MASK = "***";

    /** A secret-looking key and its {@code =} or {@code :}; the value follows. */
    private static final Pattern PROPERTY = Pattern.compile("(?i)(?<![A-Za-z0-9])[A-Za-z0-9_.-]*(?:password|passwd|pwd"
            + "|secret|token|credential|api_?key|access_?key|private_?key)[A-Za-z0-9_.-]*[\"']?[ \\t]*[=:][ \\t]*");
    /** {@code //user:password@}: the password to the last {@code @} before a {@code /} or the line's end. */
    private static final Pattern USER_INFO = Pattern.compile("(//[^/@:\\s;?&'\"]+:)([^/\\r\\n]*[^/\\s@])(@)");
    /**
     * {@code user:password@host} without the {@code //}, as drivers quote a host they could not resolve: a word at
     * the start of the text or after a space, quote or bracket, a colon, the password and an {@code @} before a host.
     * No space in the password here (prose and table rows would match); {@link #mask(String, Collection)} masks a
     * known password with spaces wherever it appears.
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
        String out = USER_INFO.matcher(text).replaceAll(r -> Matcher.quoteReplacement(isUserInfo(r.group(2))
                ? r.group(1) + MASK + r.group(3) : r.group()));
        out = BARE_USER_INFO.matcher(out).replaceAll(r -> Matcher.quoteReplacement(r.group(1) + MASK + r.group(3)));
        return maskProperties(out, null);
    }

    /**
     * {@code text} masked as {@link #mask(String)} does, and every occurrence of each of the {@code known} secrets
     * (the secrets of the command's URL, ...) replaced by {@link #MASK} wherever it appears, for the messages that
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
        while (m.find()) {
            if (isUserInfo(m.group(2))) {
                return m.group(2);
            }
        }
        return null;
    }

    /**
     * Whether what {@link #USER_INFO} found between {@code //host:} and an {@code @} is a password: not when it holds
     * a secret-looking property ({@code //host:443;PWD=p@ss}: the port, and a password with an {@code @}), which
     * the properties' rule masks.
     */
    private static boolean isUserInfo(String password) {
        return !PROPERTY.matcher(password).find();
    }

    /**
     * The secrets {@code url} carries, as {@link #mask(String)} finds them: the password of its user information and
     * the value of each secret-looking property (quotes and braces around a value included, and without them); empty
     * for null. What a tool masks wherever it appears, as a driver may quote a value alone.
     */
    public static List<String> of(String url) {
        List<String> out = new ArrayList<>();
        if (url == null) {
            return out;
        }
        String password = userInfoPassword(url);
        if (password != null) {
            out.add(password);
        }
        maskProperties(url, out);
        return out;
    }

    /**
     * {@code text} with the value of every secret-looking property masked; each value masked is added to {@code
     * found} when it is not null.
     */
    private static String maskProperties(String text, List<String> found) {
        Matcher key = PROPERTY.matcher(text);
        StringBuilder out = new StringBuilder(text.length());
        int copied = 0;
        int from = 0;
        while (from < text.length() && key.find(from)) {
            int start = key.end();
            char before = key.start() == 0 ? '\n' : text.charAt(key.start() - 1);
            int[] value = value(text, start, before);
            if (value == null) { // no value, or one masked already
                from = Math.max(start, key.start() + 1);
                continue;
            }
            if (found != null) {
                found.add(text.substring(value[0], value[1]));
                if (value[0] > start) {
                    found.add(text.substring(start, value[1] + 1)); // with its quotes: a driver may quote them
                }
            }
            out.append(text, copied, value[0]).append(MASK);
            copied = value[1];
            from = Math.max(value[1], start);
        }
        return copied == 0 ? text : out.append(text, copied, text.length()).toString();
    }

    /**
     * Where the value that starts at {@code start} begins and ends ({@code [begin, end)}, quotes and braces left
     * out), after a key preceded by {@code before}; null when there is none or it is masked already.
     */
    private static int[] value(String text, int start, char before) {
        if (start >= text.length() || text.startsWith(MASK, start)) {
            return null;
        }
        char first = text.charAt(start);
        char close = first == '\'' ? '\'' : first == '"' ? '"' : first == '{' ? '}' : 0;
        String ends = before == '?' || before == '&' ? "&\r\n" : before == ';' ? ";\r\n" : "\r\n";
        if (close != 0) {
            int q = start + 1;
            while (q < text.length() && text.charAt(q) != close && text.charAt(q) != '\n' && text.charAt(q) != '\r') {
                q++;
            }
            if (q < text.length() && text.charAt(q) == close) {
                boolean ended = q + 1 == text.length() || ends.indexOf(text.charAt(q + 1)) >= 0
                        || ",;&)]}".indexOf(text.charAt(q + 1)) >= 0 || Character.isWhitespace(text.charAt(q + 1));
                if (ended) {
                    return q == start + 1 || text.startsWith(MASK, start + 1) ? null : new int[] {start + 1, q};
                }
            }
        }
        int end = start;
        while (end < text.length() && ends.indexOf(text.charAt(end)) < 0) {
            end++;
        }
        // a value never ends in the spaces before the line's end: they are no part of what a driver printed
        while (end > start && (text.charAt(end - 1) == ' ' || text.charAt(end - 1) == '\t')) {
            end--;
        }
        return end == start ? null : new int[] {start, end};
    }
}
