package io.flexiq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Worker processes of the tests: JVMs on the test's class path that say {@code ready} once their
 * worker runs and stop it when their input closes.
 */
final class ChildProcesses {
    private ChildProcesses() {}

    /** Starts {@code count} JVMs running {@code main} with {@code args}; returns once each is ready. */
    static List<Process> start(int count, Class<?> main, String... args) throws IOException {
        List<Process> started = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            List<String> command = new ArrayList<>(List.of(Paths.get(System.getProperty("java.home"), "bin", "java")
                    .toString(), "-cp", System.getProperty("java.class.path"), main.getName()));
            command.addAll(List.of(args));
            Process p = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
            started.add(p);
            assertEquals("ready", new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))
                    .readLine());
        }
        return started;
    }

    /** Closes each process's input and waits for it to stop. */
    static void stop(List<Process> processes) throws IOException, InterruptedException {
        for (Process p : processes) {
            p.getOutputStream().close();
            assertTrue(p.waitFor(60, TimeUnit.SECONDS), "worker process stopped");
        }
    }

    /** In a child: says ready, then returns once the test closes this process's input. */
    static void readyUntilInputCloses() throws IOException {
        System.out.println("ready");
        System.out.flush();
        while (System.in.read() >= 0) {
            // The test closes our input to stop us.
        }
    }
}
