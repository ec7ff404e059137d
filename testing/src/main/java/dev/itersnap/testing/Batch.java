package dev.itersnap.testing;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * Rows that arrive together in the raw source table: a file, a drop, an export. Usually every row of a batch
 * carries the same {@code sequence_by} value, but nothing requires it (a batch is what is loaded between two runs).
 *
 * <p>A value may be any Java object the JDBC driver binds ({@code Integer}, {@code LocalDate},
 * {@code LocalDateTime}, {@code BigDecimal}, ...) or text: text is converted to the type of the source column
 * when loaded ({@code "2024-03-01"} into a DATE, {@code "2024-03-01 09:30"} or {@code "2024-03-01T09:30"} into a
 * TIMESTAMP, {@code "42"} into an INTEGER). An empty CSV cell is NULL.
 *
 * <p>Immutable: {@link #row} returns a new batch.
 *
 * @param columns the source columns the rows fill, in the order of each row's values
 * @param rows    the rows; each has one value per column
 */
public record Batch(List<String> columns, List<List<Object>> rows) {

    /** Copies the lists and checks every row has one value per column. */
    public Batch {
        if (columns == null || columns.isEmpty()) {
            throw new IllegalArgumentException("a batch needs at least one column");
        }
        columns = columns.stream().map(c -> c.trim().toLowerCase(Locale.ROOT)).toList();
        List<List<Object>> copy = new ArrayList<>();
        for (List<Object> row : rows) {
            if (row.size() != columns.size()) {
                throw new IllegalArgumentException("row " + (copy.size() + 1) + " has " + row.size()
                        + " values for " + columns.size() + " columns " + columns + ": " + row);
            }
            copy.add(java.util.Collections.unmodifiableList(new ArrayList<>(row)));
        }
        rows = List.copyOf(copy);
    }

    /** An empty batch over the given source columns; add rows with {@link #row}. */
    public static Batch of(String... columns) {
        return new Batch(Arrays.asList(columns), List.of());
    }

    /** This batch with one more row, values in the order of {@link #columns()}. */
    public Batch row(Object... values) {
        List<List<Object>> more = new ArrayList<>(rows);
        more.add(Arrays.asList(values == null ? new Object[] {null} : values));
        return new Batch(columns, more);
    }

    /**
     * A batch from CSV text: the first line names the columns, every further non-blank line is a row. Cells are
     * separated by commas; a cell in double quotes may hold commas and doubled quotes ({@code ""}); an empty cell is
     * NULL. Leading and trailing blanks of unquoted cells are dropped, so a text block can be indented.
     */
    public static Batch csv(String text) {
        List<String> lines = text.lines().map(String::strip).filter(l -> !l.isEmpty()).toList();
        if (lines.isEmpty()) {
            throw new IllegalArgumentException("CSV text has no header line");
        }
        List<String> header = cells(lines.get(0), 1).stream().map(String::valueOf).toList();
        Batch batch = new Batch(header, List.of());
        for (int i = 1; i < lines.size(); i++) {
            List<Object> cells = cells(lines.get(i), i + 1);
            if (cells.size() != header.size()) {
                throw new IllegalArgumentException("CSV line " + (i + 1) + " has " + cells.size() + " cells, the header "
                        + header.size() + ": " + lines.get(i));
            }
            batch = batch.row(cells.toArray());
        }
        return batch;
    }

    private static List<Object> cells(String line, int lineNumber) {
        List<Object> out = new ArrayList<>();
        int i = 0;
        while (true) {
            while (i < line.length() && line.charAt(i) == ' ') {
                i++;
            }
            if (i < line.length() && line.charAt(i) == '"') {
                StringBuilder cell = new StringBuilder();
                i++;
                while (true) {
                    if (i >= line.length()) {
                        throw new IllegalArgumentException("CSV line " + lineNumber + ": unclosed quote: " + line);
                    }
                    char c = line.charAt(i++);
                    if (c == '"') {
                        if (i < line.length() && line.charAt(i) == '"') {
                            cell.append('"');
                            i++;
                        } else {
                            break;
                        }
                    } else {
                        cell.append(c);
                    }
                }
                out.add(cell.toString());
                while (i < line.length() && line.charAt(i) == ' ') {
                    i++;
                }
            } else {
                int comma = line.indexOf(',', i);
                String cell = (comma < 0 ? line.substring(i) : line.substring(i, comma)).strip();
                out.add(cell.isEmpty() ? null : cell);
                i = comma < 0 ? line.length() : comma;
            }
            if (i >= line.length()) {
                return out;
            }
            if (line.charAt(i) != ',') {
                throw new IllegalArgumentException("CSV line " + lineNumber + ": expected a comma at column " + (i + 1)
                        + ": " + line);
            }
            i++;
        }
    }
}
