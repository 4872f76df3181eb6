package io.flexiq.test;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.UserPrincipal;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;

/**
 * The fresh temporary directory of one cluster: {@code data/} (PGDATA), {@code postgres.log}
 * and {@code sock/}. Files it creates belong to {@code owner} when one is given: the OS user the
 * server runs as, when that is not us.
 */
final class ClusterDirectory {
    /** Our settings live in a file of their own, included once and rewritten on every start. */
    private static final String SETTINGS_FILE = "flexiq-test.conf";
    /** Enough of the log for the fatal message and its context, not so much it drowns a test. */
    private static final int LOG_TAIL_BYTES = 4096;

    private final Path root;
    private final UserPrincipal owner;
    private boolean included;

    private ClusterDirectory(Path root, UserPrincipal owner) {
        this.root = root;
        this.owner = owner;
    }

    /** Creates a fresh directory (owner-only) with its socket directory in it. */
    static ClusterDirectory create(UserPrincipal owner) {
        try {
            ClusterDirectory dir = new ClusterDirectory(Files.createTempDirectory("flexiq-pg-"), owner);
            Files.createDirectory(dir.socket());
            dir.give(dir.root);
            dir.give(dir.socket());
            return dir;
        } catch (IOException e) {
            throw new PostgresServerException("could not create a directory for PostgreSQL under "
                    + System.getProperty("java.io.tmpdir") + ": " + e, e);
        }
    }

    Path root() {
        return root;
    }

    Path data() {
        return root.resolve("data");
    }

    Path log() {
        return root.resolve("postgres.log");
    }

    /** Short on purpose: Unix socket paths are limited to about 100 bytes. */
    Path socket() {
        return root.resolve("sock");
    }

    /**
     * Writes {@code settings} to our settings file in the data directory, and on first use
     * includes that file from {@code postgresql.conf}. Writing a file rather than passing
     * options sidesteps the shell-style parsing of {@code pg_ctl -o}. Copies {@code files}
     * (name in the data directory to source) there too, readable by the server's user only, as
     * PostgreSQL demands of a private key.
     */
    void writeSettings(Map<String, String> settings, Map<String, Path> files) {
        Path file = data().resolve(SETTINGS_FILE);
        try {
            for (Map.Entry<String, Path> copy : files.entrySet()) {
                Path target = data().resolve(copy.getKey());
                Files.copy(copy.getValue(), target, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                Files.setPosixFilePermissions(target, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
                give(target);
            }
            if (!included) {
                Files.writeString(data().resolve("postgresql.conf"),
                        "\n# Added by io.flexiq.test.PostgresServer.\ninclude '" + SETTINGS_FILE + "'\n",
                        StandardOpenOption.APPEND);
                included = true;
            }
            Files.writeString(file, ServerSettings.fileText(settings));
            give(file);
        } catch (IOException e) {
            throw new PostgresServerException("could not write PostgreSQL settings to " + file + ": " + e, e);
        }
    }

    /** How many bytes the log holds now, to quote only what a later step writes. */
    long logSize() {
        try {
            return Files.size(log());
        } catch (IOException e) {
            return 0;
        }
    }

    /** The end of what the server logged after {@code from}; never fails, it only decorates errors. */
    String logTail(long from) {
        try (RandomAccessFile file = new RandomAccessFile(log().toFile(), "r")) {
            long start = Math.max(from, file.length() - LOG_TAIL_BYTES);
            byte[] bytes = new byte[(int) Math.max(0, file.length() - start)];
            file.seek(start);
            file.readFully(bytes);
            String text = new String(bytes, StandardCharsets.UTF_8).stripTrailing();
            return text.isEmpty() ? "(empty)" : text;
        } catch (IOException e) {
            return "(could not read it: " + e + ")";
        }
    }

    /** A sentence quoting the log, for error messages. */
    String quoteLog(long from) {
        return "tail of the server log " + log() + ":\n" + logTail(from);
    }

    /** The postmaster's process id while its pid file exists. */
    Optional<Long> postmasterPid() {
        try (Stream<String> lines = Files.lines(data().resolve("postmaster.pid"))) {
            return lines.findFirst().map(String::trim).map(Long::valueOf);
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    /**
     * Stops the postmaster as a crash would (immediate shutdown).
     *
     * @throws PostgresServerException if it still runs after a minute
     */
    void crash() {
        if (!quitPostmaster(60)) {
            throw new PostgresServerException("PostgreSQL in " + data() + " did not stop within 60 s of SIGQUIT");
        }
    }

    /**
     * The last resort when a stop failed: SIGQUIT, PostgreSQL's immediate shutdown, then a few
     * seconds for the postmaster to exit before its files are deleted under it (if it is still
     * there, deleting goes ahead, and the watchdog tries again when the JVM ends).
     */
    void quitPostmaster() {
        quitPostmaster(5);
    }

    /**
     * SIGQUIT to the postmaster, PostgreSQL's immediate shutdown (a crash: no checkpoint, crash
     * recovery at the next start); waits up to {@code seconds} for it to exit. Returns whether
     * no postmaster runs any more.
     */
    boolean quitPostmaster(int seconds) {
        Optional<Long> pid = postmasterPid();
        if (pid.isEmpty()) {
            return true;
        }
        Commands.run(List.of("kill", "-QUIT", pid.get().toString()), root);
        Optional<ProcessHandle> process = ProcessHandle.of(pid.get());
        if (process.isEmpty()) {
            return true;
        }
        try {
            process.get().onExit().get(seconds, TimeUnit.SECONDS);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } catch (ExecutionException | TimeoutException e) {
            return false;
        }
    }

    /**
     * Runs {@code stop}, then deletes the directory, quitting a postmaster that outlived a failed
     * stop, and ends the watchdog once nothing is left for it to do. The first failure is thrown
     * after every step was tried.
     */
    void stopAndDelete(Runnable stop, Process watchdog) {
        PostgresServerException failure = null;
        try {
            stop.run();
        } catch (PostgresServerException e) {
            failure = e;
        }
        quitPostmaster();
        try {
            delete();
        } catch (PostgresServerException e) {
            if (failure == null) {
                failure = e;
            } else {
                failure.addSuppressed(e);
            }
        }
        if (failure != null) {
            throw failure; // the watchdog stays, to try again when the JVM ends
        }
        watchdog.destroy();
    }

    /** Deletes the directory and everything in it, if it is still there. */
    void delete() {
        if (Files.notExists(root)) {
            return;
        }
        try (Stream<Path> tree = Files.walk(root)) {
            for (Path path : (Iterable<Path>) tree.sorted(Comparator.reverseOrder())::iterator) {
                Files.deleteIfExists(path);
            }
        } catch (IOException | RuntimeException e) {
            throw new PostgresServerException("could not delete PostgreSQL's directory " + root + ": " + e, e);
        }
    }

    private void give(Path path) throws IOException {
        if (owner != null) {
            Files.setOwner(path, owner);
        }
    }
}
