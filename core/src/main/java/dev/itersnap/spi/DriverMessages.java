package dev.itersnap.spi;

/** Driver error messages as itersnap's one-line errors quote them ({@link Dialect#errorSummary}'s default). */
public final class DriverMessages {
    private DriverMessages() {
    }

    /** The first line of a driver message, without a trailing "SQL statement:" that would dangle without its text. */
    public static String firstLine(String s) {
        if (s == null) {
            return "";
        }
        int nl = s.indexOf('\n');
        String line = (nl < 0 ? s : s.substring(0, nl)).strip();
        if (line.endsWith("SQL statement:")) {
            line = line.substring(0, line.length() - "SQL statement:".length()).strip();
        }
        while (line.endsWith(";")) {
            line = line.substring(0, line.length() - 1).strip();
        }
        return line;
    }
}
