package io.flexiq.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Servers of other JVMs: the watchdog removes the server of a JVM killed with SIGKILL, and a JVM
 * of a user who is not root gets a server from the embedded binaries.
 */
class ServerProcessesTest {
    private Path readableCopy;

    @AfterEach
    void removeCopy() throws IOException {
        if (readableCopy != null) {
            deleteTree(readableCopy);
        }
    }

    @Test
    void theServerOfAKilledJvmIsStoppedAndDeletedByItsWatchdog() throws Exception {
        killedJvmLeavesNothing(List.of(), System.getProperty("java.class.path"),
                !PostgresServer.runningAsRoot() && !MachineBinaries.chosen(System.getenv()));
    }

    @Test
    void aUserWhoIsNotRootGetsTheEmbeddedBinaries() throws Exception {
        List<String> output = runChild(asPostgresUser(), readableClassPath(), "exercise");
        assertEquals(List.of("ok embedded=true"), output);
    }

    @Test
    void aUserWhoIsNotRootGetsTheBinariesThatFlexiqPgBinNames() throws Exception {
        List<String> asUser = asPostgresUser();
        Path machine = MachineBinaries.find(System.getenv());
        Process child = startChild(asUser, readableClassPath(), "exercise", Map.of("FLEXIQ_PG_BIN", machine.toString()));
        assertEquals(List.of("ok embedded=false"), output(child));
    }

    @Test
    void theEmbeddedServerOfAKilledJvmIsStoppedAndDeletedByItsWatchdog() throws Exception {
        killedJvmLeavesNothing(asPostgresUser(), readableClassPath(), true);
    }

    /** SIGKILLs a JVM holding a server; its watchdog must stop the server and delete its directory. */
    private static void killedJvmLeavesNothing(List<String> asUser, String classPath, boolean embedded)
            throws Exception {
        Process child = startChild(asUser, classPath, "hold", Map.of());
        String started;
        try (BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
            started = out.readLine();
            assertTrue(started != null && started.startsWith("started "), "child said: " + started);
            String[] words = started.split(" ");
            long pid = Long.parseLong(words[1]);
            String jdbcUrl = "jdbc:postgresql://127.0.0.1:" + words[2] + "/postgres?user=postgres";
            Path directory = ServerChild.directory(started);
            assertEquals(Boolean.toString(embedded), words[4], "embedded binaries");
            assertTrue(Db.reachable(jdbcUrl), "child's server runs");

            ProcessHandle.of(pid).orElseThrow().destroyForcibly(); // SIGKILL: no hook, no finally
            assertTrue(child.waitFor(30, TimeUnit.SECONDS), "child JVM gone");

            Db.await("the server to stop", Duration.ofSeconds(30), () -> !Db.reachable(jdbcUrl));
            Db.await("the server's directory to go", Duration.ofSeconds(30), () -> !Files.exists(directory));
        } finally {
            child.destroyForcibly();
        }
    }

    private static List<String> runChild(List<String> asUser, String classPath, String mode) throws Exception {
        return output(startChild(asUser, classPath, mode, Map.of()));
    }

    private static List<String> output(Process child) throws Exception {
        String out = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(child.waitFor(120, TimeUnit.SECONDS), "child JVM finished");
        assertEquals(0, child.exitValue(), "child's exit status; it printed: " + out);
        return out.isEmpty() ? List.of() : List.of(out.split("\n"));
    }

    /**
     * Starts a JVM running {@link ServerChild}. One run as another user gets the embedded binaries
     * unless {@code env} names others: {@code FLEXIQ_PG_BIN} of this JVM (set to run the tests
     * against another PostgreSQL version) is not passed on to it.
     */
    private static Process startChild(List<String> asUser, String classPath, String mode, Map<String, String> env)
            throws IOException {
        List<String> command = new ArrayList<>(asUser);
        command.addAll(List.of(Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", classPath, ServerChild.class.getName(), mode));
        ProcessBuilder builder = new ProcessBuilder(command)
                .directory(new File(System.getProperty("java.io.tmpdir")))
                .redirectError(ProcessBuilder.Redirect.INHERIT);
        if (!asUser.isEmpty()) {
            builder.environment().remove("FLEXIQ_PG_BIN");
        }
        builder.environment().putAll(env);
        return builder.start();
    }

    /** The command words that run a program as the OS user postgres; the test needs root for it. */
    private static List<String> asPostgresUser() {
        assumeTrue(PostgresServer.runningAsRoot(), "running a JVM as another user needs root");
        return List.of("runuser", "-u", MachineCluster.PG_USER, "--");
    }

    /** A copy of this JVM's class path that every user can read (ours may sit in root's home). */
    private String readableClassPath() throws IOException {
        readableCopy = Files.createTempDirectory("flexiq-test-classpath-");
        Files.setPosixFilePermissions(readableCopy, PosixFilePermissions.fromString("rwxr-xr-x"));
        List<String> entries = new ArrayList<>();
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            Path source = Paths.get(entry);
            if (!Files.exists(source)) {
                continue;
            }
            Path copy = readableCopy.resolve(entries.size() + "-" + source.getFileName());
            try (Stream<Path> tree = Files.walk(source)) {
                for (Path from : (Iterable<Path>) tree::iterator) {
                    Path to = copy.resolve(source.relativize(from).toString());
                    Files.copy(from, to);
                    Files.setPosixFilePermissions(to,
                            PosixFilePermissions.fromString(Files.isDirectory(to) ? "rwxr-xr-x" : "rw-r--r--"));
                }
            }
            entries.add(copy.toString());
        }
        return String.join(File.pathSeparator, entries);
    }

    private static void deleteTree(Path root) throws IOException {
        try (Stream<Path> tree = Files.walk(root)) {
            for (Path path : (Iterable<Path>) tree.sorted(Comparator.reverseOrder())::iterator) {
                Files.delete(path);
            }
        }
    }
}
