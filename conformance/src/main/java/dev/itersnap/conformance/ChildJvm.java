package dev.itersnap.conformance;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A run in a JVM of its own, for the kill tests: started with the test's class path, its output read line by line,
 * killed with SIGKILL (no shutdown hook runs, no connection is closed by the client). The child side tells the parent
 * where it stands with {@link #reached} and waits there to be killed.
 */
public final class ChildJvm implements AutoCloseable {
    /** What {@link #nextLine} returns once the child's output has ended. */
    public static final String END = "<end of output>";

    private final Process process;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final List<String> seen = new ArrayList<>();

    private ChildJvm(Process process) {
        this.process = process;
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String line; (line = in.readLine()) != null; ) {
                    lines.add(line);
                }
            } catch (IOException ignored) {
                // the process was killed
            }
            lines.add(END);
        });
        reader.setDaemon(true);
        reader.start();
    }

    /** Starts {@code main} with {@code args} in a new JVM (heap {@code maxHeap}, e.g. {@code 512m}) and properties. */
    public static ChildJvm start(Class<?> main, String maxHeap, List<String> properties, String... args)
            throws IOException {
        String java = ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> command = new ArrayList<>(List.of(java, "-Xmx" + maxHeap,
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn"));
        properties.forEach(p -> command.add("-D" + p));
        command.addAll(List.of("-cp", classPath, main.getName()));
        command.addAll(List.of(args));
        return new ChildJvm(new ProcessBuilder(command).redirectErrorStream(true).start());
    }

    /** The child's next line of output, waiting at most {@code millis}; null if none came, {@link #END} at its end. */
    public String nextLine(long millis) throws InterruptedException {
        String line = lines.poll(Math.max(1, millis), TimeUnit.MILLISECONDS);
        if (line != null && !line.equals(END)) {
            seen.add(line);
        }
        return line;
    }

    /** The child's output so far, for a failure message. */
    public String output() {
        return String.join("\n", seen);
    }

    /** Kills the child with SIGKILL and waits for it; returns its exit value (137 when killed). */
    public int kill() throws InterruptedException {
        process.destroyForcibly();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("the child JVM did not end within 30 s of SIGKILL");
        }
        return process.exitValue();
    }

    @Override
    public void close() {
        process.destroyForcibly();
    }

    /** The line a child prints when it reaches {@code point}. */
    public static String killPoint(String point) {
        return "KILL-POINT " + point;
    }

    /** Child side: tells the parent the run reached {@code point}, and waits there to be killed. */
    public static void reached(String point) {
        System.out.println(killPoint(point));
        System.out.flush();
        while (true) {
            try {
                Thread.sleep(60_000);
            } catch (InterruptedException ignored) {
                // keep waiting for the kill
            }
        }
    }
}
