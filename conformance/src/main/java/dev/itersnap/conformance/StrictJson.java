package dev.itersnap.conformance;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A strict JSON reader (RFC 8259) for what the engine writes: {@code changed_attributes} and error-log records.
 * Objects become LinkedHashMap (member order kept; a repeated member name is an error), arrays List, numbers
 * BigDecimal, strings String, {@code true}/{@code false} Boolean, {@code null} null. Anything else, trailing text
 * included, is an {@link IllegalArgumentException} naming the position.
 */
public final class StrictJson {
    private final String text;
    private int pos;

    private StrictJson(String text) {
        this.text = text;
    }

    /** Parses one JSON value that makes up the whole text (whitespace around it allowed). */
    public static Object parse(String text) {
        if (text == null) {
            throw new IllegalArgumentException("NULL is not JSON");
        }
        StrictJson p = new StrictJson(text);
        p.skipWhitespace();
        Object v = p.value();
        p.skipWhitespace();
        if (p.pos != text.length()) {
            throw p.error("trailing text");
        }
        return v;
    }

    private Object value() {
        if (pos >= text.length()) {
            throw error("a value expected");
        }
        char c = text.charAt(pos);
        switch (c) {
            case '{':
                return object();
            case '[':
                return array();
            case '"':
                return string();
            case 't':
                literal("true");
                return Boolean.TRUE;
            case 'f':
                literal("false");
                return Boolean.FALSE;
            case 'n':
                literal("null");
                return null;
            default:
                if (c == '-' || (c >= '0' && c <= '9')) {
                    return number();
                }
                throw error("unexpected character '" + c + "'");
        }
    }

    private Map<String, Object> object() {
        Map<String, Object> out = new LinkedHashMap<>();
        pos++;
        skipWhitespace();
        if (peek() == '}') {
            pos++;
            return out;
        }
        while (true) {
            skipWhitespace();
            if (peek() != '"') {
                throw error("a member name expected");
            }
            String name = string();
            if (out.containsKey(name)) {
                throw error("member '" + name + "' repeated");
            }
            skipWhitespace();
            expect(':');
            skipWhitespace();
            out.put(name, value());
            skipWhitespace();
            char c = next();
            if (c == '}') {
                return out;
            }
            if (c != ',') {
                throw error("',' or '}' expected");
            }
        }
    }

    private List<Object> array() {
        List<Object> out = new ArrayList<>();
        pos++;
        skipWhitespace();
        if (peek() == ']') {
            pos++;
            return out;
        }
        while (true) {
            skipWhitespace();
            out.add(value());
            skipWhitespace();
            char c = next();
            if (c == ']') {
                return out;
            }
            if (c != ',') {
                throw error("',' or ']' expected");
            }
        }
    }

    private String string() {
        expect('"');
        StringBuilder s = new StringBuilder();
        while (true) {
            if (pos >= text.length()) {
                throw error("unterminated string");
            }
            char c = text.charAt(pos++);
            if (c == '"') {
                return s.toString();
            }
            if (c < 0x20) {
                throw error("unescaped control character in a string");
            }
            if (c != '\\') {
                s.append(c);
                continue;
            }
            char e = next();
            switch (e) {
                case '"', '\\', '/' -> s.append(e);
                case 'b' -> s.append('\b');
                case 'f' -> s.append('\f');
                case 'n' -> s.append('\n');
                case 'r' -> s.append('\r');
                case 't' -> s.append('\t');
                case 'u' -> {
                    if (pos + 4 > text.length()) {
                        throw error("short \\u escape");
                    }
                    try {
                        s.append((char) Integer.parseInt(text.substring(pos, pos + 4), 16));
                    } catch (NumberFormatException ex) {
                        throw error("bad \\u escape");
                    }
                    pos += 4;
                }
                default -> throw error("bad escape \\" + e);
            }
        }
    }

    private BigDecimal number() {
        int start = pos;
        if (peek() == '-') {
            pos++;
        }
        if (peek() == '0') {
            pos++;
        } else if (peek() >= '1' && peek() <= '9') {
            while (peek() >= '0' && peek() <= '9') {
                pos++;
            }
        } else {
            throw error("a digit expected");
        }
        if (peek() == '.') {
            pos++;
            if (!(peek() >= '0' && peek() <= '9')) {
                throw error("a digit expected after '.'");
            }
            while (peek() >= '0' && peek() <= '9') {
                pos++;
            }
        }
        if (peek() == 'e' || peek() == 'E') {
            pos++;
            if (peek() == '+' || peek() == '-') {
                pos++;
            }
            if (!(peek() >= '0' && peek() <= '9')) {
                throw error("a digit expected in the exponent");
            }
            while (peek() >= '0' && peek() <= '9') {
                pos++;
            }
        }
        return new BigDecimal(text.substring(start, pos));
    }

    private void literal(String word) {
        if (!text.startsWith(word, pos)) {
            throw error("'" + word + "' expected");
        }
        pos += word.length();
    }

    private void expect(char c) {
        if (next() != c) {
            throw error("'" + c + "' expected");
        }
    }

    private char next() {
        if (pos >= text.length()) {
            throw error("unexpected end");
        }
        return text.charAt(pos++);
    }

    private char peek() {
        return pos < text.length() ? text.charAt(pos) : '\0';
    }

    private void skipWhitespace() {
        while (pos < text.length() && " \t\n\r".indexOf(text.charAt(pos)) >= 0) {
            pos++;
        }
    }

    private IllegalArgumentException error(String what) {
        return new IllegalArgumentException("not JSON (" + what + " at " + pos + "): " + text);
    }
}
