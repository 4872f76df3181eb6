package io.flexiq.test;

import java.io.File;
import java.io.IOException;

/**
 * A small shell process that outlives the JVM: once the JVM has exited by any means (SIGKILL,
 * a crash, a server never closed), it shuts the cluster down and deletes its directory.
 */
final class Watchdog {
    /**
     * Waits for the JVM, then quits the postmaster named in the pid file and removes the
     * directory. It ignores the terminal's hang-up and interrupt, which would otherwise end it
     * together with a JVM stopped by Ctrl-C, while the postmaster (in a session of its own) lives.
     */
    private static final String SCRIPT = """
            trap '' HUP INT
            while kill -0 "$1" 2>/dev/null; do sleep 1; done
            if pid=$(head -n 1 "$2/postmaster.pid" 2>/dev/null); then
                kill -QUIT "$pid" 2>/dev/null
                n=0
                while kill -0 "$pid" 2>/dev/null && [ "$n" -lt 10 ]; do sleep 1; n=$((n + 1)); done
            fi
            rm -rf "$3"
            """;

    private Watchdog() {}

    /** Starts a watchdog for the cluster in {@code dir}; destroy it once the cluster is gone. */
    static Process start(ClusterDirectory dir) {
        try {
            return new ProcessBuilder("sh", "-c", SCRIPT, "flexiq-pg-watchdog",
                    Long.toString(ProcessHandle.current().pid()), dir.data().toString(), dir.root().toString())
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .redirectError(ProcessBuilder.Redirect.DISCARD)
                    .start();
        } catch (IOException e) {
            throw new PostgresServerException("could not start the watchdog that removes PostgreSQL in "
                    + dir.root() + " if this JVM dies: " + e, e);
        }
    }
}
