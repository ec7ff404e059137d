package dev.itersnap.cli;

import dev.itersnap.core.Secrets;
import picocli.CommandLine;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.Writer;
import java.nio.charset.Charset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The writer every output of a command goes through (stdout and stderr: results, {@code --json}, progress, error
 * lines, {@code --verbose} traces): each line is masked ({@link Secrets#mask(String, java.util.Collection)}) with the
 * secrets of the command line itself ({@link #secrets}), before it is written. Lines are masked whole, so a secret
 * never straddles two writes; what is left without a line end is masked at {@link #flush()}. {@link #stream} does the
 * same for {@code System.out} and {@code System.err} while a command runs: the log lines (slf4j-simple writes to
 * {@code System.err}) and whatever a driver prints there.
 */
final class MaskingWriter extends Writer {
    private final Writer delegate;
    /** Shared by the writers and streams of one command ({@link #add} reaches them all); thread-safe. */
    private volatile List<String> secrets;
    private final StringBuilder line = new StringBuilder();

    private MaskingWriter(Writer delegate, List<String> secrets) {
        this.delegate = delegate;
        this.secrets = secrets;
    }

    /**
     * {@code out} masking {@code secrets}; a writer that masks already is given the secrets instead. The list is
     * shared, not copied: the writers and streams of one command are given the same one (see {@link #shared}), so
     * that a secret the command learns as it runs ({@link #add}) is masked by all of them.
     */
    static PrintWriter wrap(PrintWriter out, List<String> secrets) {
        if (out instanceof Masking m) {
            m.writer.secrets = shared(secrets);
            return out;
        }
        return new Masking(new MaskingWriter(out, shared(secrets)));
    }

    /** A list of secrets that writers and streams may share and {@link #add} may grow while they write. */
    static List<String> shared(List<String> secrets) {
        return secrets instanceof CopyOnWriteArrayList<String> ? secrets : new CopyOnWriteArrayList<>(secrets);
    }

    /**
     * Masks {@code more} from now on in every output of the command {@code out} belongs to (its stdout and stderr and
     * the {@code System.out} and {@code System.err} it set): the secrets a command reads after its arguments, such as
     * the password of a project's connection profile. Nothing happens when {@code out} does not mask.
     */
    static void add(PrintWriter out, List<String> more) {
        if (out instanceof Masking m) {
            for (String s : more) {
                if (s != null && !s.isEmpty() && !m.writer.secrets.contains(s)) {
                    m.writer.secrets.add(s);
                }
            }
        }
    }

    /**
     * The secrets of a parsed command line that drivers quote: the secrets of its {@code --jdbc-url} ({@link
     * Secrets#of(String)}: the password of the URL's user information, which a driver that does not read user
     * information takes for part of the host or port, and the values of its password and token properties, which a
     * driver may quote alone). {@code --password} is not among them: drivers never print it, and masking its text
     * everywhere would mask ordinary words ({@code postgres}).
     */
    static List<String> secrets(CommandLine.ParseResult parsed) {
        List<String> out = new ArrayList<>();
        for (CommandLine.ParseResult p = parsed; p != null; p = p.subcommand()) {
            CommandLine.Model.OptionSpec url = p.commandSpec().findOption("--jdbc-url");
            if (url != null && url.getValue() != null) {
                out.addAll(Secrets.of(url.getValue().toString()));
            }
        }
        return out;
    }

    /**
     * A print stream writing to {@code target} each line masked as {@link #wrap} does, in the platform's charset (what
     * {@code System.err} writes): for {@code System.setErr} while a command runs.
     */
    static PrintStream stream(PrintStream target, List<String> secrets) {
        Charset charset = Charset.defaultCharset();
        PrintWriter lines = new PrintWriter(new MaskingWriter(new OutputStreamWriter(target, charset),
                shared(secrets)), true);
        return new PrintStream(new OutputStream() {
            private final ByteArrayOutputStream line = new ByteArrayOutputStream();

            @Override
            public synchronized void write(int b) {
                line.write(b);
                if (b == '\n') {
                    flush();
                }
            }

            @Override
            public synchronized void flush() {
                if (line.size() > 0) {
                    lines.write(line.toString(charset));
                    line.reset();
                }
                lines.flush();
            }
        }, true, charset);
    }

    @Override
    public synchronized void write(char[] chars, int off, int len) throws IOException {
        for (int i = off; i < off + len; i++) {
            line.append(chars[i]);
            if (chars[i] == '\n') {
                emit();
            }
        }
    }

    private void emit() throws IOException {
        if (!line.isEmpty()) {
            delegate.write(Secrets.mask(line.toString(), secrets));
            line.setLength(0);
        }
    }

    @Override
    public synchronized void flush() throws IOException {
        emit();
        delegate.flush();
    }

    @Override
    public synchronized void close() throws IOException {
        flush();
        delegate.close();
    }

    /** The print writer over a masking writer (so that {@link #wrap} can recognise it). */
    private static final class Masking extends PrintWriter {
        private final MaskingWriter writer;

        Masking(MaskingWriter writer) {
            super(writer, true);
            this.writer = writer;
        }
    }
}
